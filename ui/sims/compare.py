"""A/B: the pinned run A beside this run B, on one chart and in tables of what differs, in words.
"""
from __future__ import annotations

import dataclasses
import importlib
import math

import plotly.graph_objects as go
import streamlit as st

from sims.platform import SCENARIO_TITLES
from ui import keys
from ui.sims.guess import fmt_figure, fmt_guess
from ui.sims.charts import Series
from ui.sims.pins import Pin, pin_param, pin_text, pinned
from ui.sims.runs import cached_run
from ui.sims.tab import SimTab

K = keys.register("sim_compare", __name__)   # this module's keys (ui.keys holds only shared ones)


def pin_button(tab_name: str) -> str:
    """A simulation tab's "Pin this run as A" button."""
    return f"pin::{tab_name}"


def unpin_button(tab_name: str) -> str:
    """A simulation tab's "Unpin A" button."""
    return f"unpin::{tab_name}"


def ab_chart(tab_name: str) -> str:
    """A simulation tab's pinned run A beside the current run B."""
    return f"ab-chart::{tab_name}"


A_COLOUR, B_COLOUR = "#7f7f7f", "#d62728"


def _flat(summary: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            out[f"{prefix}{key}"] = value
    return out


# What a reader sees for a summary figure or a setting in the A/B tables: words and a unit, never the
# field name. Names not listed here get words from the name itself (see ``figure_label``).
FIGURE_LABELS = {
    # hot_shard
    "shards": "Shards",
    "hot_key_share": "Celebrity key's share of traffic",
    "hot_shard": "Celebrity key's shard",
    "busiest_shard": "Busiest shard",
    "hot_shard_load_pct": "Load on the celebrity key's shard (% of one shard's capacity)",
    "busiest_shard_load_pct": "Load on the busiest shard (% of one shard's capacity)",
    "hot_key_floor_pct": "Celebrity key on its own (% of one shard's capacity)",
    "fleet_utilisation_pct": "Fleet average load (% of capacity)",
    "requests": "Requests simulated",
    "neighbour_keys": "Keys sharing the hot key's shard or group",
    "neighbour_mean_wait_s": "Mean wait of those neighbours (s)",
    "other_mean_wait_s": "Mean wait of everyone else (s)",
    "exact_share_all_pct": "Tenants with exactly the bad tenant's groups, in theory (%)",
    "cut_off_keys_pct": "Tenants left with no working group (%)",
    "hurt_keys_pct": "Tenants that lost a group (%)",
    # concurrency_pool
    "calls": "Calls in the batch",
    "provider_limit": "Provider serves at once (calls)",
    "pool_size": "Pool size K (calls)",
    "retry_after_s": "Retry-After (s)",
    "fanout.rejected": "Fan-out: 429 refusals",
    "fanout.makespan_s": "Fan-out: time to finish (s)",
    "fanout.peak_in_service": "Fan-out: most calls in service at once",
    "pool.rejected": "Pool of K: 429 refusals",
    "pool.makespan_s": "Pool of K: time to finish (s)",
    "pool.peak_in_service": "Pool of K: most calls in service at once",
    # retry_storm
    "processes": "Worker processes",
    "in_flight_per_process": "Calls parked per process",
    "jitter": "Jitter, shared state and ramp",
    "peak_calls_per_s": "Calls reaching A in the worst second (calls/s)",
    "provider_limit_per_s": "A's limit (calls/s)",
    "peak_at_s_after_recovery": "Worst second, after A recovers (s)",
    "parked_calls_in_peak_second": "Parked calls released in the worst second",
    "seconds_over_limit": "Seconds over A's limit",
    "calls_to_provider": "Calls sent to A",
    "calls_to_fallback": "Calls sent to the fallbacks",
    # platform
    "scenario": "Scenario",
    "window_min": "Simulated minutes",
    "measured_from_min": "Rates measured from (minute of the run)",
    "measured_to_min": "Rates measured to (minute of the run)",
    "slots": "Worker slots",
    "capacity_jobs_per_s": "Jobs the slots can finish (jobs/s)",
    "arrivals_jobs_per_s": "Jobs arriving (jobs/s)",
    "jobs_in_flight": "Jobs running at once",
    "llm_calls_per_s": "LLM calls (calls/s)",
    "utilisation_pct": "Slots busy (%)",
    "backlog_growth_jobs_per_s": "Backlog growth (jobs/s)",
    "acme_slot_share_pct": "Acme's share of the slots (%)",
    "acme_multiplier": "Acme's load during the break (× normal)",
    "acme_cap": "Acme's running cap (jobs)",
    "outage_min": "Provider A down for (min)",
    "mitigations_from_min": "Mitigations start at (minute of the run)",
    "backlog_at_end": "Jobs still waiting at the end",
    "wait_p50_s_acme": "Acme's wait, median (s)",
    "wait_p95_s_acme": "Acme's wait, p95 (s)",
    "wait_p50_s_others": "Everyone else's wait, median (s)",
    "wait_p95_s_others": "Everyone else's wait, p95 (s)",
    "rejected_429_acme": "Acme's submissions refused (429s)",
    "rejected_429_others": "Others' submissions refused (429s)",
    "deduplicated": "Repeat submissions deduplicated",
    "spend_usd_total": "Provider spend, total ($)",
    "extra_provider_spend_usd": "Extra spend on B and C ($)",
    "others_backlog_at_mitigation": "Others' queued jobs when the fixes start",
    "others_recovery_min": "Everyone else recovers in (min)",
    "fallback_share_of_peak_pct": "Share of peak call demand B and C serve (%)",
    "hung_calls": "Calls hung on A",
    "hung_call_mean_s": "Hung call on A, mean (s)",
    "hung_call_max_s": "Hung call on A, longest (s)",
    "breaker_a_opened_after_s": "A's breaker opened after (s)",
    "claim": "Claim rule",
    "seed": "Seed",
}
_PER_PROVIDER = {"calls_sent_": "Calls sent to {}", "spend_usd_": "Spend on {} ($)",
                 "provider_429s_": "429s from {}"}
_UNIT_SUFFIXES = (("_jobs_per_s", "jobs/s"), ("_per_s", "/s"), ("_pct", "%"), ("_usd", "$"), ("_min", "min"),
                  ("_s", "s"))
_SHARD_INDEXES = frozenset({"hot_shard", "busiest_shard"})     # 0-based in the model, "Shard 1" on the charts


def figure_label(name: str) -> str:
    """A summary figure or a setting in words with its unit: 'neighbour_mean_wait_s' -> 'Mean wait … (s)'."""
    if name in FIGURE_LABELS:
        return FIGURE_LABELS[name]
    for prefix, pattern in _PER_PROVIDER.items():
        if name.startswith(prefix):
            return pattern.format(name.removeprefix(prefix))
    words, unit = name, None
    for suffix, text in _UNIT_SUFFIXES:
        if words.endswith(suffix):
            words, unit = words.removesuffix(suffix), text
            break
    words = words.replace(".", ": ").replace("_", " ")
    words = words[:1].upper() + words[1:]
    return f"{words} ({unit})" if unit else words


def figure_text(name: str, value: object) -> str:
    """A figure's value as the tables show it: shard numbers from 1 as on the charts, flags in words."""
    if value is None:
        return "–"
    if name in _SHARD_INDEXES and isinstance(value, int):
        return f"Shard {value + 1}"
    if name == "scenario":
        return SCENARIO_TITLES.get(value, str(value))
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:,.12g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def differences(params_a: object, seed_a: int, params_b: object, seed_b: int,
                summary_a: dict, summary_b: dict) -> tuple[list[dict], list[dict]]:
    """(settings that differ, results that differ) as table rows with A and B columns, in words."""
    settings_rows = [{"setting": figure_label(f.name), "A": figure_text(f.name, getattr(params_a, f.name)),
                      "B": figure_text(f.name, getattr(params_b, f.name))}
                     for f in dataclasses.fields(params_a) if getattr(params_a, f.name) != getattr(params_b, f.name)]
    if seed_a != seed_b:
        settings_rows.append({"setting": figure_label("seed"), "A": str(seed_a), "B": str(seed_b)})
    flat_a, flat_b = _flat(summary_a), _flat(summary_b)
    result_rows = [{"figure": figure_label(key), "A": figure_text(key, flat_a.get(key)),
                    "B": figure_text(key, flat_b.get(key))}
                   for key in dict.fromkeys([*flat_a, *flat_b]) if flat_a.get(key) != flat_b.get(key)]
    return settings_rows, result_rows


def _decimals(*values: float) -> int:
    """Decimals that show every one of ``values`` at least as finely as ``fmt_figure`` shows the finest."""
    finest = min((abs(v) for v in values if v), default=0.0)
    if finest == 0 or finest >= 100:
        return 0
    if finest >= 1:
        return 1
    return min(6, 1 - math.floor(math.log10(finest)))        # two significant figures of the smallest


def ab_line(label: str, unit: str, a: float, b: float) -> str:
    """A and B and their difference at one precision, so the difference is the one of the numbers shown."""
    places = _decimals(a, b)
    shown_a, shown_b = round(a, places), round(b, places)
    change = round(shown_b - shown_a, places)
    sign = "+" if change > 0 else "−" if change < 0 else "±"
    return (f"**{label}**: A {shown_a:,.{places}f} {unit}, B {shown_b:,.{places}f} {unit} "
            f"(B − A = {sign}{abs(change):,.{places}f} {unit}).")


def overlay_figure(a: Series, b: Series, label_a: str, label_b: str) -> go.Figure:
    fig = go.Figure()
    for series, name, colour in ((a, label_a, A_COLOUR), (b, label_b, B_COLOUR)):
        if series.bars:
            fig.add_trace(go.Bar(x=list(series.x), y=list(series.y), name=name, marker_color=colour))
        else:
            fig.add_trace(go.Scatter(x=list(series.x), y=list(series.y), name=name, mode="lines",
                                     line=dict(color=colour, shape="hv", width=2)))
    fig.update_layout(title="A and B on one chart", height=340, barmode="group",
                      margin=dict(l=50, r=20, t=60, b=40), xaxis_title=b.x_title, yaxis_title=b.y_title,
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    fig.update_yaxes(rangemode="tozero")
    return fig


def guesses_line(tab: SimTab, pin: Pin, truth_a: float | None, guess_b: float | None,
                 truth_b: float | None) -> str | None:
    """Each run's own guess beside its own result: A's was locked for A, B's for B's settings."""
    unit = tab.question.unit
    parts = []
    for name, guess, truth in (("A", pin.guess, truth_a), ("B", guess_b, truth_b)):
        if guess is None:
            continue
        shown = "–" if truth is None else fmt_figure(truth)
        parts.append(f"{name}: you guessed **{fmt_guess(guess)} {unit}**, the run gave **{shown} {unit}**")
    return "Your guesses, each for its own run. " + "; ".join(parts) + "." if parts else None


def compare_panel(tab: SimTab, params: object, seed: int, result: object, guess: float | None = None) -> None:
    """Pin this run as A (with its guess), or draw the pinned A beside this run B with what differs.

    The pin lives in the session and in the URL (?pin_<tab>=), so a reload or a shared link keeps A.
    """
    pin_key = keys.SIM_PIN_PREFIX + tab.name
    pin = pinned(tab)
    with st.expander("Compare: pin this run as A, change settings, see B beside it", icon=":material/compare:",
                     expanded=pin is not None):
        left, right = st.columns(2)
        if left.button("Pin this run as A", key=pin_button(tab.name), icon=":material/push_pin:"):
            pin = Pin(params, seed, guess)
            st.session_state[pin_key] = pin
            st.query_params[pin_param(tab.name)] = pin_text(pin)
            st.rerun()                       # so the share link above carries the pin too
        if pin is not None and right.button("Unpin A", key=unpin_button(tab.name)):
            st.session_state.pop(pin_key, None)
            st.query_params.pop(pin_param(tab.name), None)
            st.rerun()
        if pin is None:
            st.caption("Nothing pinned yet.")
            return
        if (pin.params, pin.seed) == (params, seed):
            st.caption("This run is A. Change a setting or the seed to draw B beside it; B asks for its own "
                       "guess.")
            return
        module = importlib.import_module(f"sims.{tab.model}")
        result_a = cached_run(tab.model, pin.params, pin.seed)
        st.plotly_chart(overlay_figure(tab.series(result_a), tab.series(result), "A (pinned)", "B (now)"),
                        width="stretch", key=ab_chart(tab.name))
        truth_a, truth_b = tab.truth(result_a), tab.truth(result)
        if truth_a is not None and truth_b is not None:
            st.markdown(ab_line(tab.question.label, tab.question.unit, truth_a, truth_b))
        line = guesses_line(tab, pin, truth_a, guess, truth_b)
        if line:
            st.markdown(line)
        changed, moved = differences(pin.params, pin.seed, params, seed, module.summary(result_a),
                                     module.summary(result))
        columns = st.columns(2)
        columns[0].caption("Settings that differ")
        # mixed numbers, flags and names in one column: shown as text so the table keeps one type
        columns[0].dataframe(changed, hide_index=True, width="stretch")
        columns[1].caption("Results that differ")
        columns[1].dataframe(moved, hide_index=True, width="stretch")
