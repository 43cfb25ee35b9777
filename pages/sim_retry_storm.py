"""Retry storm simulation page: breakers that open together close together.

Two tabs compare per-process breakers on a fixed schedule with the three fixes applied.
"""
from __future__ import annotations

import streamlit as st

from sims import retry_storm
from ui.sim_charts import Question, calls_per_second_frames, guess_then_play, tab_controls
from ui.frame import require_frame

require_frame()

st.title("Retry storm")
st.caption("Provider A is back after a 39-minute outage. How hard does your own fleet hit it?")

TABS = {
    "Synchronised breakers": (False, "Every worker process has its own breaker. They all opened at the "
                                     "same moment and probe every 30 seconds, exactly."),
    "Jitter, shared state, ramp": (True, "Probes are spread out at random, the breaker state is shared so "
                                         "one success speaks for all, and A's share of traffic steps up "
                                         "10% → 25% → 50% → 100%, a minute per step."),
}

for tab, (label, (jitter, intro)) in zip(st.tabs(list(TABS)), TABS.items()):
    with tab:
        slug = "jitter" if jitter else "sync"
        processes, parked = tab_controls(
            intro,
            dict(label="Worker processes", min_value=5, max_value=200, value=40, step=5, key=f"rs_{slug}_procs"),
            dict(label="Calls parked per process", min_value=1, max_value=20, value=9, key=f"rs_{slug}_parked"))
        params = retry_storm.Params(processes=processes, in_flight_per_process=parked, jitter=jitter)
        result = guess_then_play(
            f"retry_storm.{slug}",
            Question("Calls reaching A in the worst second", "calls/s", 5_000.0, 50.0, 5.0, tolerance_rel=0.2),
            "retry_storm", params, calls_per_second_frames, lambda r: float(retry_storm.peak_calls_per_s(r)))
        if result is not None:
            out = retry_storm.summary(result)
            limit = params.provider_limit_per_s
            if jitter:
                st.markdown(
                    f"The worst second carries **{out['peak_calls_per_s']}** calls against a limit of "
                    f"{limit}. Only one probe needed to succeed; the parked work mostly went to the "
                    f"fallbacks, and A's share climbed in steps while someone could still watch its "
                    f"error rate. Recovery is slower, and that is the point.")
            else:
                st.markdown(
                    f"The worst second carries **{out['peak_calls_per_s']}** calls, "
                    f"{out['parked_calls_in_peak_second']} of them parked work released the moment every "
                    f"breaker closed, against a limit of {limit} a second. A provider that has just "
                    f"recovered meets its heaviest second at once. Breakers that share one clock are a "
                    f"retry storm on a timer.")
