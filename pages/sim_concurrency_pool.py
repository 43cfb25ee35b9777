"""Concurrency pool simulation page: an unbounded fan-out against a client-side pool of K.

Set the sliders, lock in a guess, press Play and watch every call's lane fill in.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from sims import concurrency_pool
from ui import keys
from ui.sims.guess import plural
from ui.sims.charts import fanout_in_service_series, lanes_frames, pool_in_service_series
from ui.sims.controls import play
from ui.sims.tab import Question, SimTab, settings
from ui.sims.embed import FANOUT_LANE, POOL_LANE
from ui.frame import require_frame

require_frame()

# The brief's figure for a pool of 10 (about 19 429s) depends on K, so the pool is asked about by default;
# a drill's link can ask about the fan-out instead (?cp_lane=, ui.sims.embed.explore_query), whose 429s do
# not move with the pool size slider. Each lane keeps its own guess and pin.
POOL = SimTab("concurrency_pool.pool_limit", "cp", "concurrency_pool",
              Question("429 refusals the pool of K collects", "refusals", 2_000.0, 1.0, tolerance_rel=0.15),
              lambda r: float(r.pool.rejected), lanes_frames, pool_in_service_series)
FANOUT = SimTab("concurrency_pool.fanout", "cp", "concurrency_pool",
                Question("429 refusals the unbounded fan-out collects", "refusals",
                         float(concurrency_pool.MAX_REFUSALS), 1.0, tolerance_rel=0.15),
                lambda r: float(r.fanout.rejected), lanes_frames, fanout_in_service_series)
LANES = {POOL_LANE: POOL, FANOUT_LANE: FANOUT}

st.title("Concurrency pool")
st.caption("A provider that serves a few calls at a time, and two ways of sending it a batch.")

(pool_tab,) = st.tabs(["Pool limit"])

with pool_tab:
    chosen = settings(
        POOL,
        "The top lanes fire every call at once, the way `Promise.all` over a list does. The bottom lanes "
        "go through a pool that lets K calls out at a time. Refused calls get a 429 with Retry-After and "
        "try again after sleeping.",
        dict(label="Pool size K", min_value=1, max_value=30, value=5, key=keys.sim_setting(POOL.prefix, "pool")),
        dict(label="Provider serves R at once", min_value=1, max_value=10, value=5,
             key=keys.sim_setting(POOL.prefix, "limit")),
        dict(label="Calls in the batch", min_value=5, max_value=40, value=30, step=5,
             key=keys.sim_setting(POOL.prefix, "calls")),
        dict(label="Retry-After, seconds", min_value=0.5, max_value=3.0, value=1.0, step=0.5,
             key=keys.sim_setting(POOL.prefix, "retry")))
    pool_size, limit, calls, retry_after = chosen.values
    params = concurrency_pool.Params(calls=calls, provider_limit=limit, pool_size=pool_size,
                                     retry_after_s=retry_after)
    lane_key = keys.sim_setting(POOL.prefix, "lane")
    lane = st.radio("Guess about", list(LANES), horizontal=True, key=lane_key, bind="query-params")
    chosen = dataclasses.replace(chosen, query={**chosen.query, lane_key: lane})   # the share link keeps it
    if lane == FANOUT_LANE:
        st.caption(f"The question is about the top lanes: all {calls} calls fired at once at a provider that "
                   f"serves R = {limit} at once, with no pool in front of it.")
    else:
        st.caption(f"The question is about the bottom lanes: a pool of K = {pool_size} in front of a provider "
                   f"that serves R = {limit} at once.")
    result = play(LANES[lane], params, chosen)
    if result is not None:
        fan, pool = result.fanout, result.pool
        st.markdown(
            f"Fan-out: **{plural(fan.rejected, 'refusal')}** and **{fan.makespan_s:.2f} s**. "
            f"Pool of {pool_size}: **{plural(pool.rejected, 'refusal')}** and **{pool.makespan_s:.2f} s**. "
            f"The provider never works faster than {plural(limit, 'call')} at a time, so every refused "
            f"call is pure delay: it sleeps out the Retry-After while a slot may already be free.")
        if calls <= limit:
            st.markdown(f"A batch of {calls} fits inside the provider's {limit} at once, so neither side is "
                        "refused. Make the batch bigger than R to see the difference.")
        elif pool_size <= limit:
            st.markdown("With K no larger than R the pool never oversubscribes the provider, so it sees no "
                        "429 at all and finishes as soon as the slots allow.")
        else:
            extra = pool_size - limit
            st.markdown(f"With K above R the extra {plural(extra, 'call')} in the pool "
                        f"{'is' if extra == 1 else 'are'} refused and hold{'s' if extra == 1 else ''} "
                        f"{'its' if extra == 1 else 'their'} pool slot while sleeping. Set K from the "
                        "provider's limit, not from how much work is waiting.")
