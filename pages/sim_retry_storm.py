"""Retry storm simulation page: breakers that open together close together.

Two tabs compare per-process breakers on a fixed schedule with the three fixes applied.
"""
from __future__ import annotations

from dataclasses import replace

import streamlit as st

from sims import retry_storm
from ui import keys
from ui.sims.guess import plural
from ui.sims.charts import calls_per_second_frames, calls_per_second_series
from ui.sims.controls import play
from ui.sims.pins import scenario_of
from ui.sims.tab import Question, SimTab, settings
from ui.frame import require_frame
from ui.sims.embed import RETRY_STORM_TABS

require_frame()

st.title("Retry storm")
st.caption(f"Provider A is back after a {retry_storm.Params().outage_s / 60:g}-minute outage. "
           "How hard does your own fleet hit it?")

TABS = {                                # labels bound to ?tab=, so a drill question's link opens its tab
    RETRY_STORM_TABS[False]: (False, "Every worker process has its own breaker. They all opened at the "
                                     "same moment and probe every 30 seconds, exactly."),
    RETRY_STORM_TABS[True]: (True, "Probes are spread out at random, the breaker state is shared so "
                                         "one success speaks for all, and A's share of traffic steps up "
                                         "10% → 25% → 50% → 100%, a minute per step."),
}

PEAK = Question("Calls reaching A in the worst second", "calls/s", 5_000.0, 5.0, tolerance_rel=0.2)

for tab, (label, (jitter, intro)) in zip(st.tabs(list(TABS), key=keys.TAB, bind="query-params"), TABS.items()):
    with tab:
        slug = "jitter" if jitter else "sync"
        spec = SimTab(f"retry_storm.{slug}", f"rs_{slug}", "retry_storm", PEAK,
                      lambda r: float(retry_storm.peak_calls_per_s(r)), calls_per_second_frames,
                      calls_per_second_series)
        chosen = settings(
            spec, intro,
            dict(label="Worker processes", min_value=5, max_value=200, value=40, step=5,
                 key=keys.sim_setting(spec.prefix, "procs")),
            dict(label="Calls parked per process", min_value=1, max_value=20, value=9,
                 key=keys.sim_setting(spec.prefix, "parked")),
            page_tab=(keys.TAB, label))
        processes, parked = chosen.values
        scenario = scenario_of(spec)   # a pinned run's outage, demand and limits: the page has no slider for them
        try:
            params = replace(scenario, processes=processes, in_flight_per_process=parked, jitter=jitter)
        except ValueError as error:   # a pinned scenario with the sliders at their top can exceed the call budget
            st.warning(f"These settings cannot run: {error}. Lower a slider.", icon=":material/block:")
            continue
        result = play(spec, params, chosen)
        if result is not None:
            out = retry_storm.summary(result)
            peak, limit = out["peak_calls_per_s"], params.provider_limit_per_s
            parked_calls = processes * parked
            over = (f"over the limit of {limit} a second" if peak > limit
                    else f"within the limit of {limit} a second")
            if jitter:
                st.markdown(
                    f"The worst second carries **{plural(peak, 'call')}**, {over}. Only one probe needed to "
                    f"succeed; the {plural(parked_calls, 'parked call')} mostly went to the fallbacks, and "
                    f"A's share climbed in steps while someone could still watch its error rate. Recovery "
                    f"is slower, and that is the point.")
            elif peak > limit:
                st.markdown(
                    f"The worst second carries **{plural(peak, 'call')}**, {out['parked_calls_in_peak_second']:,} "
                    f"of them parked work released the moment every breaker closed, {over}. A provider "
                    f"that has just recovered meets its heaviest second at once. Breakers that share one "
                    f"clock are a retry storm on a timer.")
            else:
                st.markdown(
                    f"The worst second carries **{plural(peak, 'call')}**, {over}: "
                    f"{plural(processes, 'process', 'processes')} with {plural(parked, 'parked call')} each "
                    f"are too few to swamp A even when every breaker closes at once. Raise either slider "
                    f"to see the storm.")
