"""Retry chain simulation page: layers that each retry their call to the next, above a failing partner.

Two tabs: a partner that fails fast (retries multiply; budgets bound them) and one that hangs (timeouts that
end a wait but not the work; deadlines that travel with the call).
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from sims import retry_chain
from ui import keys
from ui.frame import require_frame
from ui.sims.chain_charts import partner_calls_frames, partner_calls_series
from ui.sims.controls import play
from ui.sims.embed import CHAIN_TABS, url_text
from ui.sims.guess import plural
from ui.sims.tab import Question, SimTab, settings

require_frame()

st.title("Retry chain")
st.caption("A search passes through a chain of services before it reaches a partner's API, and every service "
           "retries. What reaches the partner when it fails?")

FAST = SimTab("retry_chain.errors", "rc_fast", "retry_chain",
              Question("Calls reaching the partner per search", "calls", 50_000.0, 0.1, tolerance_rel=0.1),
              retry_chain.attempts_per_request, partner_calls_frames, partner_calls_series,
              metric="attempts_per_request")
HANG = SimTab("retry_chain.slow", "rc_hang", "retry_chain",
              Question("Share of the partner's calls started after the user gave up", "%", 100.0, 0.5,
                       tolerance_rel=0.1),
              retry_chain.orphaned_pct, partner_calls_frames, partner_calls_series, metric="orphaned_pct")
RATE_PER_S, SECONDS = 5.0, 4.0                # a few searches: every figure asked for is per search

fast_tab, hang_tab = st.tabs(list(CHAIN_TABS), key=keys.TAB, bind="query-params")

with fast_tab:
    chosen = settings(
        FAST, "The partner answers every call with an error at once. Each layer retries straight away; with a "
              "budget, a layer retries only while its retries stay within that share of the calls it handles.",
        dict(label="Layers that retry", min_value=1, max_value=4, value=3, key=keys.sim_setting(FAST.prefix, "depth")),
        dict(label="Retries per layer", min_value=0, max_value=4, value=3,
             key=keys.sim_setting(FAST.prefix, "retries")),
        dict(label="Retry budget, % (0 = none)", min_value=0, max_value=50, value=0, step=5,
             key=keys.sim_setting(FAST.prefix, "budget")),
        page_tab=(keys.TAB, CHAIN_TABS[0]))
    depth, retries, budget_pct = chosen.values
    params = retry_chain.Params(depth=depth, retries=retries, budget=budget_pct > 0, budget_ratio=budget_pct / 100,
                                request_rate_per_s=RATE_PER_S, duration_s=SECONDS * (5 if budget_pct else 1))
    result = play(FAST, params, chosen)
    if result is not None:
        out = retry_chain.summary(result)
        st.markdown(f"{plural(out['user_requests'], 'search', 'searches')} sent "
                    f"**{plural(out['dependency_attempts'], 'call')}** to the partner: "
                    f"**{out['attempts_per_request']:,.2f} a search**.")
        if budget_pct:
            st.markdown(f"Each layer may add at most {budget_pct}% to what it receives, so the bound is "
                        f"{1 + budget_pct / 100:g} to the power {depth} = {(1 + budget_pct / 100) ** depth:.2f}.")
        else:
            st.markdown(f"Every attempt of a layer is a whole call into the next, so {1 + retries} attempts a layer, "
                        f"{depth} layers deep, make {1 + retries} to the power {depth} = {(1 + retries) ** depth:,}.")

with hang_tab:
    chosen = settings(
        HANG, "The partner accepts every call and never answers. Each layer waits its timeout, then retries; the "
              "user gives up at the deadline. Without propagation nothing below the user knows.",
        dict(label="Layers that retry", min_value=1, max_value=4, value=3, key=keys.sim_setting(HANG.prefix, "depth")),
        dict(label="Retries per layer", min_value=0, max_value=4, value=3,
             key=keys.sim_setting(HANG.prefix, "retries")),
        dict(label="Timeout per attempt, s", min_value=0.2, max_value=2.0, value=1.0, step=0.1,
             key=keys.sim_setting(HANG.prefix, "timeout")),
        dict(label="User's deadline, s", min_value=0.5, max_value=6.0, value=2.5, step=0.1,
             key=keys.sim_setting(HANG.prefix, "deadline")),
        page_tab=(keys.TAB, CHAIN_TABS[1]))
    depth, retries, timeout_s, deadline_s = chosen.values
    propagate_key = keys.sim_setting(HANG.prefix, "propagate")
    propagate = st.toggle("Propagate the deadline", key=propagate_key, bind="query-params")
    chosen = dataclasses.replace(chosen, query={**chosen.query, propagate_key: url_text(propagate)})
    params = retry_chain.Params(depth=depth, retries=retries, timeout_s=timeout_s, deadline_s=deadline_s, fault="slow",
                                propagate=propagate, request_rate_per_s=RATE_PER_S, duration_s=SECONDS)
    result = play(HANG, params, chosen)
    if result is not None:
        out = retry_chain.summary(result)
        st.markdown(f"**{out['orphaned_pct']:.1f}%** of the {out['dependency_attempts']:,} calls the partner received "
                    f"started after their user had given up; the last one started "
                    f"{out['last_attempt_after_s']:.1f} s after its search.")
