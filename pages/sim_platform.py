"""Simulation page: the whole drill-13 platform, with Breaks 1 and 2 to replay and every fix switchable.

Pick a scenario, flip mitigations, lock a guess, press Play; the charts and the verdict come from the run.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from sims import platform
from sims.platform import CLAIM_RULES, MITIGATIONS, SCENARIO_TITLES, SCENARIOS, Params, Result
from ui import keys
from ui.guess import guess_lockin, guess_verdict, play_button
from ui.platform_charts import (backlog_figure, provider_load_figure, slot_share_figure,
                                waits_figure)


@dataclass(frozen=True)
class Question:
    metric: str
    label: str
    unit: str
    low: float
    high: float
    default: float
    step: float


RECOVERY = Question("others_recovery_min", "Minutes until everyone else's queue is back to normal",
                    "min", 0.0, 120.0, 10.0, 1.0)
QUESTIONS = {
    "baseline": Question("jobs_in_flight", "Jobs running at once at the weekday peak", "jobs",
                         0.0, 400.0, 100.0, 5.0),
    "break1_fifo": Question("acme_slot_share_pct", "Share of the worker slots Acme ends up holding",
                            "% of slots", 0.0, 100.0, 10.0, 1.0),
    "break1_fair": RECOVERY,
    "break1_round_robin": RECOVERY,
    "break1_paused": RECOVERY,
    "break2": Question("fallback_share_of_peak_pct", "Share of peak call demand that B and C serve",
                       "% of peak", 0.0, 200.0, 100.0, 1.0),
    "break2_polish_off": Question("backlog_growth_jobs_per_s", "How fast the queue grows while A is down",
                                  "jobs/s", -5.0, 20.0, 0.0, 0.05),
}

SWITCH_LABELS = {
    "idempotency": ("Idempotency keys", "A repeated submission returns the job it already created."),
    "rate_limit": ("Token bucket per tenant", "Free 0.1/s, Pro 0.5/s, Enterprise 1/s (burst 10, 30, 60)."),
    "pause_acme": ("Pause Acme", "Acme's running cap drops to 0 until the end of the run."),
    "short_timeouts": ("30 s timeout + 5 s first token", "Instead of one 60 s timeout per call."),
    "provider_pools": ("Per-provider pools", "Calls wait for a slot sized from each limit (400, 80, 40) "
                       "instead of collecting 429s."),
    "polish_switch": ("Drop polish during failover", "While A's breaker is not closed, jobs skip the "
                      "fourth call and are marked degraded."),
    "breakers": ("Circuit breakers", "Open after 5 failures in a row, probe again after 30 s."),
}

CHART_NOTES = (
    (backlog_figure, "Under first-in, first-out the line climbs by the gap between arrivals and "
                     "the 6.25 jobs/s the slots can finish; watch how quickly everyone else's line "
                     "falls once a cap or a pause applies, and that Acme's own line is left to drain "
                     "at its cap."),
    (waits_figure, "A job that waits longer than the dashed line cannot meet the 2-minute target, "
                   "however fast its four calls are; compare the two groups after the mitigations."),
    (slot_share_figure, "The red band is the hot tenant's share of the fleet: about its share of "
                        "arrivals under FIFO, at most its cap afterwards, and no idle band while a "
                        "backlog exists."),
    (provider_load_figure, "A solid line above its dashed limit means 429s; during the outage B and C "
                           "sit at 10 and 5 calls/s, three quarters of the 20 calls/s the peak needs."),
)


@st.cache_data(show_spinner=False, max_entries=24)
def simulate(params: Params, seed: int) -> Result:
    """Run once per (params, seed); the progress bar lives inside so a cached replay draws nothing."""
    bar = st.progress(0.0, text="Simulating…")
    result = platform.run(params, seed,
                          progress=lambda done: bar.progress(done, text=f"Simulating… {done:.0%}"))
    bar.empty()
    return result


def switches(scenario: str, base: Params) -> dict[str, object]:
    """The mitigation switches and a few bounded sliders, starting from the scenario's values."""
    chosen: dict[str, object] = {}
    st.subheader("Mitigations")
    cols = st.columns(2)
    for i, name in enumerate(MITIGATIONS):
        label, help_text = SWITCH_LABELS[name]
        chosen[name] = cols[i % 2].toggle(label, value=getattr(base, name), help=help_text,
                                          key=keys.platform_key(scenario, name))
    rules = list(CLAIM_RULES)
    chosen["claim"] = st.radio("Claim rule", rules, index=rules.index(base.claim), horizontal=True,
                               format_func=lambda r: r.replace("_", " "),
                               captions=[CLAIM_RULES[r] for r in rules],
                               key=keys.platform_key(scenario, "claim"))
    with st.expander("Load, outage and timing"):
        left, right = st.columns(2)
        chosen["acme_multiplier"] = left.slider(
            "Acme's load during the break (x normal)", 1.0, 200.0, float(base.acme_multiplier), 1.0,
            key=keys.platform_key(scenario, "acme_multiplier"))
        chosen["acme_cap"] = left.slider("Acme's running cap", 0, 200, int(base.acme_cap), 1,
                                         key=keys.platform_key(scenario, "acme_cap"))
        chosen["outage_min"] = right.slider("Provider A down for (min)", 0.0, 60.0, float(base.outage_min),
                                            1.0, key=keys.platform_key(scenario, "outage_min"))
        chosen["window_min"] = right.slider("Simulated minutes", 10.0, 90.0, float(base.window_min), 5.0,
                                            key=keys.platform_key(scenario, "window_min"))
        chosen["mitigations_from_min"] = left.slider(
            "Mitigations start at minute", 0.0, 60.0, float(base.mitigations_from_min), 1.0,
            help=f"The break starts at minute {base.break_at_min:g}; 0 means the fixes were always there.",
            key=keys.platform_key(scenario, "mitigations_from_min"))
        chosen["seed"] = right.number_input("Seed", 1, 10_000, 1, 1, key=keys.platform_key(scenario, "seed"))
    return chosen


def headline(out: dict[str, object]) -> None:
    cols = st.columns(4)
    cols[0].metric("Jobs in flight", f"{out['jobs_in_flight']:.0f}", help="Mean while the break lasts")
    cols[1].metric("Backlog growth", f"{out['backlog_growth_jobs_per_s']:+.2f} jobs/s")
    cols[2].metric("LLM calls", f"{out['llm_calls_per_s']:.1f} /s")
    cols[3].metric("Slot utilisation", f"{out['utilisation_pct']:.0f}%")
    cols = st.columns(4)
    cols[0].metric("Finished / degraded / failed",
                   f"{out['jobs_finished']:,} / {out['jobs_degraded']:,} / {out['jobs_failed']:,}")
    waits = out["wait_p95_s_others"]
    cols[1].metric("Others' wait p95", "–" if waits is None else f"{waits:.0f} s")
    recovery = out.get("others_recovery_min")
    cols[2].metric("Others recover in", "–" if recovery is None else f"{recovery:.1f} min")
    cols[3].metric("Provider spend", f"${out['spend_usd_total']:,.0f}",
                   delta=f"+${out['extra_provider_spend_usd']:,.0f} on fallbacks", delta_color="off")


def main() -> None:
    st.title("The platform, replayed")
    st.markdown(
        "Two thousand tenants share 200 worker slots and three LLM providers. Replay the hot-tenant "
        "break or the primary-provider outage, switch the final design's fixes on or off, and see "
        "what happens to the queue, the waits and the bill. Lock in a guess before you press Play."
    )
    names = list(SCENARIOS)
    scenario = st.selectbox("Scenario", names, format_func=lambda n: SCENARIO_TITLES[n],
                            key=keys.PLATFORM_SCENARIO)
    base = Params.for_scenario(scenario)
    chosen = switches(scenario, base)
    seed = int(chosen.pop("seed"))
    try:
        params = Params.for_scenario(scenario, **chosen)
    except ValueError as exc:
        st.error(f"Those settings don't make a valid run: {exc}")
        return

    question = QUESTIONS[scenario]
    st.subheader("Your guess")
    guess = guess_lockin(f"platform::{scenario}", question.label, question.unit,
                         min_value=question.low, max_value=question.high, default=question.default,
                         step=question.step)
    if not play_button(f"platform::{scenario}", guess):
        return
    result = simulate(params, seed)
    out = platform.summary(result)
    truth = out.get(question.metric)
    if truth is None:
        st.warning("With these settings the run never reaches the figure asked about; "
                   "try a longer window or switch a mitigation on.")
    else:
        guess_verdict(guess, float(truth), question.unit)
    headline(out)
    left, right = st.columns(2)
    for i, (build, note) in enumerate(CHART_NOTES):
        column = left if i % 2 == 0 else right
        column.plotly_chart(build(result), width="stretch", key=f"platform-chart-{i}")
        column.caption(note)
    with st.expander("Every figure from this run"):
        st.json(out)


main()
