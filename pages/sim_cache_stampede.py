"""Cache stampede simulation page: a hot key expires, or many keys expire together.

Two tabs: one hot key under three miss policies, and many keys whose expiry may be jittered.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from sims import cache_stampede
from ui import keys
from ui.frame import require_frame
from ui.sims.controls import play
from ui.sims.embed import STAMPEDE_POLICIES, STAMPEDE_TABS
from ui.sims.guess import plural
from ui.sims.stampede_charts import db_queue_frames, db_queue_series
from ui.sims.tab import Question, SimTab, settings

require_frame()

st.title("Cache stampede")
st.caption("A cache in front of a database that runs a fixed number of queries at once. What happens in the "
           "moment a hot key is missing?")

HOT = SimTab("cache_stampede.hot_key", "cs_hot", "cache_stampede",
             Question("Seconds the database stays busy", "s", 120.0, 0.1, tolerance_rel=0.15),
             cache_stampede.db_busy_s, db_queue_frames, db_queue_series, metric="db_busy_s")
MANY = SimTab("cache_stampede.many_keys", "cs_many", "cache_stampede",
              Question("Most rebuild queries at the database at once", "queries", 2_000.0, 1.0, tolerance_rel=0.3),
              lambda r: float(cache_stampede.peak_db_in_flight(r)), db_queue_frames, db_queue_series,
              metric="peak_db_in_flight")

MANY_RATE, MANY_QUERY_S = 1_500.0, 0.6     # the many-keys tab's traffic and query, as the drill's second break
HOT_MAX_S = 70.0                            # the hot-key run's longest window (the model's request budget)

hot_tab, many_tab = st.tabs(list(STAMPEDE_TABS), key=keys.TAB, bind="query-params")

with hot_tab:
    chosen = settings(
        HOT, "One key carries the page everyone refreshes. It expires one second into the run; the policy "
             "decides what the requests that find it missing do.",
        dict(label="Requests a second", min_value=200, max_value=3_300, value=2_400, step=100,
             key=keys.sim_setting(HOT.prefix, "rate")),
        dict(label="Query time, s", min_value=0.1, max_value=1.0, value=0.6, step=0.1,
             key=keys.sim_setting(HOT.prefix, "query")),
        dict(label="Database slots", min_value=8, max_value=64, value=40, step=8,
             key=keys.sim_setting(HOT.prefix, "slots")),
        page_tab=(keys.TAB, STAMPEDE_TABS[0]))
    rate, query_s, slots = chosen.values
    policy_key = keys.sim_setting(HOT.prefix, "policy")
    label = st.radio("On a miss", list(STAMPEDE_POLICIES), horizontal=True, key=policy_key, bind="query-params")
    chosen = dataclasses.replace(chosen, query={**chosen.query, policy_key: label})   # the share link keeps it
    floor_s = rate * query_s * query_s / slots
    params = cache_stampede.Params(request_rate_per_s=float(rate), recompute_s=query_s, db_slots=slots,
                                   policy=STAMPEDE_POLICIES[label], duration_s=min(HOT_MAX_S, 2.0 + 1.1 * floor_s))
    result = play(HOT, params, chosen)
    if result is not None:
        out = cache_stampede.summary(result)
        st.markdown(
            f"**{plural(out['db_queries'], 'query', 'queries')}** reached the database and kept it busy for "
            f"**{out['db_busy_s']:.1f} s**; {plural(out['requests_waiting'], 'request')} waited, the longest "
            f"for {out['max_wait_s']:.1f} s, and {plural(out['served_stale'], 'request')} got the old page at once.")
        if out["unanswered_at_end"]:
            st.caption(f"The run stops at {params.duration_s:g} s with the database still working through "
                       "queries, so the busy time is a lower bound.")
        if params.policy == "none":
            st.markdown(f"The key was missing for one query's time, so about {rate:,} × {query_s:g} requests "
                        "each sent a query of their own. The page was back long before the database was.")

with many_tab:
    chosen = settings(
        MANY, "Many keys were written together and expire together, one second into the run, unless each "
              "write adds a random extra to its expiry. Each key is rebuilt by one query (coalesced).",
        dict(label="Keys", min_value=40, max_value=800, value=320, step=40,
             key=keys.sim_setting(MANY.prefix, "keys")),
        dict(label="Expiry spread over, s", min_value=0, max_value=40, value=0, step=2,
             key=keys.sim_setting(MANY.prefix, "jitter")),
        dict(label="Database slots", min_value=8, max_value=64, value=40, step=8,
             key=keys.sim_setting(MANY.prefix, "slots")),
        page_tab=(keys.TAB, STAMPEDE_TABS[1]))
    key_count, jitter_s, slots = chosen.values
    waves = -(-key_count // slots)
    params = cache_stampede.Params(request_rate_per_s=MANY_RATE, keys=key_count, recompute_s=MANY_QUERY_S,
                                   db_slots=slots, jitter_s=float(jitter_s), policy="coalesce",
                                   duration_s=2.0 + jitter_s + MANY_QUERY_S * waves)
    result = play(MANY, params, chosen)
    if result is not None:
        peak = cache_stampede.peak_db_in_flight(result)
        mean = key_count * MANY_QUERY_S / jitter_s if jitter_s else None
        spread = (f"spread over {jitter_s} s the mean is {key_count} × {MANY_QUERY_S:g} ÷ {jitter_s} = {mean:.1f}, "
                  f"and the "
                  f"busiest moment still reached {peak}" if mean is not None
                  else f"with no spread, {peak} of the {key_count} rebuilds were at the database at once")
        st.markdown(f"Every key needed one query; {spread}, against {slots} slots.")
