"""The platform simulation page's pieces: each scenario's question, the mitigation switches, the headline
figures and one sentence per chart, worded from the run's own settings and figures.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from sims import platform
from sims.platform import CLAIM_RULES, MITIGATIONS, Params
from ui import keys
from ui.sims.guess import guess_verdict
from ui.sims.platform_charts import (backlog_figure, backlog_frames, backlog_series, provider_load_figure,
                                slot_share_figure, waits_figure, x_offset)
from ui.sims.charts import playback_figure
from ui.sims.embed import claim_label
from ui.sims.tab import Question as SimQuestion
from ui.sims.tab import SimTab

K = keys.register("platform_page", __name__)   # this module's keys (ui.keys holds only shared ones)


def chart_key(index: int) -> str:
    """One of the platform simulation page's charts, by position."""
    return f"platform-chart-{index}"


@dataclass(frozen=True)
class Question:
    metric: str
    label: str
    unit: str
    low: float
    high: float
    step: float


RECOVERY = Question("others_recovery_min", "Minutes until everyone else's queue is back to normal",
                    "min", 0.0, 120.0, 1.0)
QUESTIONS = {
    "baseline": Question("jobs_in_flight", "Jobs running at once at the weekday peak", "jobs",
                         0.0, 400.0, 5.0),
    "break1_fifo": Question("acme_slot_share_pct", "Share of the worker slots Acme ends up holding",
                            "% of slots", 0.0, 100.0, 1.0),
    "break1_fair": RECOVERY,
    "break1_round_robin": RECOVERY,
    "break1_paused": RECOVERY,
    "break2": Question("fallback_share_of_peak_pct", "Share of peak call demand that B and C serve",
                       "% of peak", 0.0, 200.0, 1.0),
    "break2_polish_off": Question("backlog_growth_jobs_per_s", "How fast the queue grows while A is down",
                                  "jobs/s", -5.0, 20.0, 0.05),
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

CHARTS = (backlog_figure, waits_figure, slot_share_figure, provider_load_figure)
BIND = "query-params"                   # every setting lives in the URL, so a link reopens this run


def sim_tab(scenario: str) -> SimTab:
    """The shared controls' view of this scenario's question (spread, A/B, files)."""
    question = QUESTIONS[scenario]
    return SimTab(f"platform::{scenario}", f"pf_{scenario}", "platform",
                  SimQuestion(question.label, question.unit, question.high, question.step,
                              min_value=question.low),
                  lambda r: platform.summary(r).get(question.metric), None, backlog_series,
                  metric=question.metric)


def has_fixes(p: Params) -> bool:
    """Whether any of Break 1's fixes is switched on (a claim rule with caps, a bucket, a pause, keys)."""
    return p.claim != "fifo" or p.rate_limit or p.pause_acme or p.idempotency


def acme_band(p: Params) -> str:
    if p.pause_acme:
        return "The red band is Acme's slice of the fleet: paused, it empties as its running jobs finish."
    if p.claim != "fifo":
        return (f"The red band is Acme's slice of the fleet, held to its running cap of "
                f"{p.acme_cap} slot{'s' if p.acme_cap != 1 else ''}.")
    return ("The red band is Acme's slice of the fleet: first-in, first-out has no running cap, so it "
            "holds whatever its admitted jobs claim.")


def chart_notes(p: Params, out: dict[str, object]) -> tuple[str, str, str, str]:
    """One sentence per chart on what to notice, worded from this run's settings and figures."""
    limits = platform.limits_per_s(p)
    if platform.has_outage(p):
        backlog = ("While A is down the fleet finishes only what B and C can serve, so the line climbs by the "
                   f"gap to the {p.peak_jobs_per_s:g} jobs/s arriving")
        backlog += (", or stays flatter because jobs skip the polish call." if p.polish_switch
                    else "; dropping the polish step during failover would flatten it.")
        fallback = (f"B and C top out at their limits of {limits[1]:g} and {limits[2]:g} calls/s against the "
                    f"{p.peak_jobs_per_s * len(platform.STEPS):g} calls/s the peak needs; ")
        fallback += ("with per-provider pools the overflow waits for a slot instead of collecting 429s."
                     if p.provider_pools else "without per-provider pools the overflow shows up as 429s.")
        return (backlog,
                "Every tenant waits alike here: this break hurts everyone, so the fix is capacity, not fairness.",
                f"The {p.slots} slots stay busy during the outage, many of them waiting on a fallback or a "
                "hung call.",
                fallback)
    if platform.has_surge(p):
        if has_fixes(p):
            start = ("from the start" if p.mitigations_from_min <= p.break_at_min else
                     f"from {p.mitigations_from_min - p.break_at_min:g} min after the break")
            return (f"With the fixes on {start}, watch how fast everyone else's line falls while Acme's "
                    "drains at its own cap.",
                    "Everyone else's wait comes back under the dashed line once the fixes hold, while "
                    "Acme's own wait keeps rising: the queue it built is its own.",
                    acme_band(p),
                    "Provider A is not the bottleneck here: the limit that runs out is the worker slots.")
        return (f"Under first-in, first-out with no fixes, both lines climb together by the gap between "
                f"arrivals and the {p.capacity_jobs_per_s:g} jobs/s the slots finish.",
                "Everyone else crosses the dashed line within minutes of the surge: nothing separates "
                "their jobs from Acme's in the queue.",
                "The red band is Acme's slice of the fleet: with no cap it grows to its share of arrivals.",
                "Provider A is not the bottleneck here: the limit that runs out is the worker slots.")
    util = out.get("utilisation_pct")
    calls = out.get("llm_calls_per_s")
    busy = f"{util:.0f}%" if isinstance(util, (int, float)) else "this load"
    return (f"Nothing piles up: at {busy} busy the fleet absorbs the random bunching of arrivals.",
            "Waits stay near zero, well under the dashed line of what a 2-minute target leaves for waiting.",
            "The grey band is the idle slots: the spare capacity that absorbs bursts.",
            (f"A carries about {calls:.0f} calls/s against its limit of {limits[0]:g}; " if
             isinstance(calls, (int, float)) else "A carries the calls; ")
            + "B and C stay idle until A fails.")


def switches(scenario: str, base: Params) -> dict[str, object]:
    """The mitigation switches and a few bounded sliders, starting from the scenario's values."""
    chosen: dict[str, object] = {}
    st.header("Mitigations")
    cols = st.columns(2)
    for i, name in enumerate(MITIGATIONS):
        label, help_text = SWITCH_LABELS[name]
        chosen[name] = cols[i % 2].toggle(label, value=getattr(base, name), help=help_text,
                                          key=keys.platform_key(scenario, name), bind=BIND)
    rules = list(CLAIM_RULES)
    chosen["claim"] = st.radio("Claim rule", rules, index=rules.index(base.claim), horizontal=True,
                               format_func=claim_label,
                               captions=[CLAIM_RULES[r] for r in rules],
                               key=keys.platform_key(scenario, "claim"), bind=BIND)
    with st.expander("Load, outage and timing"):
        left, right = st.columns(2)
        chosen["acme_multiplier"] = left.slider(
            "Acme's load during the break (x normal)", 1.0, 200.0, float(base.acme_multiplier), 1.0,
            key=keys.platform_key(scenario, "acme_multiplier"), bind=BIND)
        chosen["acme_cap"] = left.slider("Acme's running cap", 0, 200, int(base.acme_cap), 1,
                                         key=keys.platform_key(scenario, "acme_cap"), bind=BIND)
        chosen["outage_min"] = right.slider("Provider A down for (min)", 0.0, 60.0, float(base.outage_min),
                                            1.0, key=keys.platform_key(scenario, "outage_min"), bind=BIND)
        chosen["window_min"] = right.slider("Simulated minutes", 10.0, 90.0, float(base.window_min), 5.0,
                                            key=keys.platform_key(scenario, "window_min"), bind=BIND)
        chosen["mitigations_from_min"] = left.slider(
            "Mitigations start at minute", 0.0, 60.0, float(base.mitigations_from_min), 1.0,
            help=f"The break starts at minute {base.break_at_min:g}; 0 means the fixes were always there.",
            key=keys.platform_key(scenario, "mitigations_from_min"), bind=BIND)
        chosen["seed"] = right.number_input("Seed", 1, 10_000, 1, 1, key=keys.platform_key(scenario, "seed"),
                                            bind=BIND)
    return chosen


def written_numbers(base: Params) -> str | None:
    """Which numbers a break scenario replays: the drill's as written, which a retake may change."""
    if not platform.has_break(base):
        return None
    parts = []
    if platform.has_surge(base):
        parts.append(f"Acme at {base.acme_multiplier:g}× its usual load from minute {base.break_at_min:g} of the run")
        if base.break_at_min < base.mitigations_from_min < base.window_min:
            parts.append(f"the limits going in {base.mitigations_from_min - base.break_at_min:g} minutes later")
    if platform.has_outage(base):
        parts.append(f"provider A down for {base.outage_min:g} minutes from minute {base.break_at_min:g}")
    return (f"This scenario replays the drill's numbers as written: {', '.join(parts)}. A retake of the drill "
            "may draw other numbers; set them under Load, outage and timing.")


def measured_caption(out: dict[str, object], p: Params) -> str:
    """Where the headline rates come from, on the same axis as the charts: minutes from the break, or,
    with no break, minutes of the run from 0 (ui.sims.platform_charts.x_offset)."""
    offset = x_offset(p) - p.break_at_min
    start = float(out["measured_from_min"]) + offset
    end = float(out["measured_to_min"]) + offset
    if platform.has_break(p):
        why = (" (while the break lasts, before any mitigation starts)"
               if p.break_at_min < p.mitigations_from_min < p.window_min else " (while the break lasts)")
        return (f"Rates are measured from minute {start:g} to {end:g} after the break, on the charts' "
                f"time axis{why}.")
    return (f"Rates are measured from minute {start:g} to {end:g} of the run, the charts' time axis: the "
            f"first {start:g} minutes, shaded on the charts as warming up, are left out: the fleet starts empty.")


def headline(out: dict[str, object], params: Params) -> None:
    """Three rows of short numbers: load, outcomes, and who waited and paid."""
    def fmt(value: object, pattern: str) -> str:
        return "–" if value is None else pattern.format(value)

    rows = (
        (("Jobs in flight", fmt(out["jobs_in_flight"], "{:.0f}")),
         ("Backlog growth, jobs/s", fmt(out["backlog_growth_jobs_per_s"], "{:+.2f}")),
         ("LLM calls/s", fmt(out["llm_calls_per_s"], "{:.1f}")),
         ("Slots busy", fmt(out["utilisation_pct"], "{:.0f}%"))),
        (("Jobs finished", fmt(out["jobs_finished"], "{:,}")),
         ("Degraded (no polish)", fmt(out["jobs_degraded"], "{:,}")),
         ("Failed", fmt(out["jobs_failed"], "{:,}")),
         ("Still waiting at the end", fmt(out["backlog_at_end"], "{:,}"))),
        (("Others' wait p95", fmt(out["wait_p95_s_others"], "{:.0f} s")),
         ("Acme's wait p95", fmt(out["wait_p95_s_acme"], "{:.0f} s")),
         ("Longest hung call on A", fmt(out.get("hung_call_max_s"), "{:.0f} s")) if "hung_calls" in out
         else ("Others recover in", fmt(out.get("others_recovery_min"), "{:.1f} min")),
         ("Extra spend on B and C", fmt(out["extra_provider_spend_usd"], "${:,.0f}"))),
    )
    st.caption(measured_caption(out, params))
    for row in rows:
        for column, (label, value) in zip(st.columns(4), row):
            column.metric(label, value)


def show_run(scenario: str, params: Params, result: platform.Result, guess: float | None) -> float | None:
    """The played run: the verdict on the guess, the headline figures, the four charts with their notes and
    every figure; returns the truth the guess was about (None when the run never reached it)."""
    question = QUESTIONS[scenario]
    out = platform.summary(result)
    truth = out.get(question.metric)
    if truth is None:
        st.warning("With these settings the run never reaches the figure asked about; "
                   "try a longer window or switch a mitigation on.")
    else:
        guess_verdict(guess, float(truth), question.unit)
    headline(out, params)
    for i, (build, note) in enumerate(zip(CHARTS, chart_notes(params, out))):
        # the backlog replays in the browser (play, pause, speed, scrub); the others are drawn whole
        figure = playback_figure(backlog_frames(result)) if build is backlog_figure else build(result)
        st.plotly_chart(figure, width="stretch", key=chart_key(i))
        st.caption(note)
    with st.expander("Every figure from this run"):
        st.json(out)
    return None if truth is None else float(truth)
