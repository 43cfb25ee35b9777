"""What every simulation tab shares: settings and seed in the URL, a link and a command to share,
Play with in-browser playback, a spread over seeds, an A/B comparison and the run's files.

A page describes a tab once (``SimTab``), reads its sliders with ``settings`` and hands the
params to ``play``; everything after that is the same on every page.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
import statistics
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from urllib.parse import urlencode

import plotly.graph_objects as go
import streamlit as st

from sims import export, spread
from sims.__main__ import command, parse_params, to_args
from sims.platform import SCENARIO_TITLES
from ui import keys
from ui.guess import (digest, fmt_figure, fmt_guess, guess_for_param, guess_lockin, guess_param, guess_verdict,
                      play_button, waiting_chart)
from ui.sim_charts import Series, playback_figure
from ui.sim_embed import url_text

SEED_MAX = 1_000_000
SPREAD_DEFAULT = 20
SPREAD_MAX = 100
BAND = (10, 90)                              # the middle 80% of runs: where a guess counts as "typical"
A_COLOUR, B_COLOUR = "#7f7f7f", "#d62728"


@dataclass(frozen=True)
class Question:
    """What the reader guesses before pressing Play, and how it is checked."""

    label: str
    unit: str
    max_value: float
    step: float = 1.0
    tolerance_rel: float = 0.1
    min_value: float = 0.0


@dataclass(frozen=True)
class SimTab:
    """One simulation tab: its model, its question and how to draw, replay and compare a run."""

    name: str                                  # e.g. "hot_shard.celebrity": scopes the guess and the pin
    prefix: str                                # short URL prefix of its widgets, e.g. "hs_celeb"
    model: str                                 # module under sims/
    question: Question
    truth: Callable[[object], float | None]       # None: the run never reached the figure asked about
    frames: Callable[[object], list[go.Figure]] | None
    series: Callable[[object], Series]
    metric: str | None = None                  # truth's key in the model's summary: spreads then use
                                               # worker processes (see sims.spread)


@dataclass(frozen=True)
class Settings:
    """A tab's slider values and seed, and the query parameters that bring them back."""

    values: tuple
    seed: int
    query: dict[str, str]


def settings(tab: SimTab, intro: str, *sliders: dict, page_tab: tuple[str, str] | None = None) -> Settings:
    """The tab's introduction, its sliders and a seed box, every one bound to the URL.

    ``page_tab`` is (tabs key, this tab's label) so a shared link also opens the right tab.
    """
    st.markdown(intro)
    columns = st.columns([3] * len(sliders) + [2])
    values = tuple(column.slider(**spec, bind="query-params") for column, spec in zip(columns, sliders))
    seed_key = keys.sim_setting(tab.prefix, "seed")
    seed = int(columns[-1].number_input("Seed", 0, SEED_MAX, 1, 1, key=seed_key, bind="query-params",
                                        help="Runs with the same settings and seed are identical; seed 0 is the run drills grade against."))
    query = dict([page_tab]) if page_tab else {}
    query.update({spec["key"]: url_text(value) for spec, value in zip(sliders, values)})
    query[seed_key] = str(seed)
    return Settings(values, seed, query)


HEAVY_MODELS = frozenset({"platform"})        # about 2 MB a cached run; the others about 0.2 MB


@st.cache_data(max_entries=400, show_spinner=False)
def _run_light(model: str, params: object, seed: int):
    return importlib.import_module(f"sims.{model}").run(params, seed)


@st.cache_data(max_entries=48, show_spinner=False)
def _run_heavy(model: str, params: object, seed: int):
    return importlib.import_module(f"sims.{model}").run(params, seed)


def cached_run(model: str, params: object, seed: int = 1):
    """Run ``sims.<model>`` once per (params, seed); params are frozen, so they hash.

    Two caches so a few seed spreads of the big platform model cannot push memory past ~100 MB.
    """
    return (_run_heavy if model in HEAVY_MODELS else _run_light)(model, params, seed)


@st.cache_data(max_entries=64, show_spinner=False)
def _files(model: str, params: object, seed: int) -> tuple[str, str]:
    module = importlib.import_module(f"sims.{model}")
    result = cached_run(model, params, seed)
    return export.events_csv(model, result), export.summary_json(model, result, module.summary(result))


# ---- share -------------------------------------------------------------------------------------

def share_link(query: dict[str, str]) -> str:
    """This page's address with the given settings: st.context.url when served, a bare query in tests."""
    base = (st.context.url or "").split("?", 1)[0]
    return f"{base}?{urlencode(query)}"


def with_guess(query: dict[str, str], name: str, guess: float | None, scope: str | None = None) -> dict[str, str]:
    """The settings' query plus the locked guess and the settings it was made for, when there is one."""
    if guess is None:
        return query
    return {**query, guess_param(name): format(guess, ".12g"), **({guess_for_param(name): scope} if scope else {})}


def locked_guess(tab: SimTab, params: object, seed: int) -> tuple[float | None, str]:
    """The reader's guess for these settings and seed (None until locked), and the settings' digest.

    A guess belongs to the settings it was made for: move a slider and the page asks for a new one. A link
    carries that too, as the digest beside the guess (``guess_lockin`` with ``in_url`` keeps the two together).
    """
    scope = digest(tab.model, params, seed)
    question = tab.question
    guess = guess_lockin(tab.name, question.label, question.unit, min_value=question.min_value,
                         max_value=question.max_value, step=question.step, scope=scope, in_url=True)
    return guess, scope


@dataclass(frozen=True)
class Pin:
    """The run pinned as A: its settings and seed, and the guess the reader locked for it."""

    params: object
    seed: int
    guess: float | None = None


def pin_param(name: str) -> str:
    return f"{keys.PIN_PARAM_PREFIX}{name}"


def pin_text(pin: Pin) -> str:
    """A pin as the ``python -m sims`` words of its run, plus ``guess=`` when one was locked."""
    words = to_args(pin.params, pin.seed)
    if pin.guess is not None:
        words.append(f"guess={format(pin.guess, '.12g')}")
    return " ".join(words)


def pin_from_text(tab: SimTab, text: str) -> Pin | None:
    """The pin a link carries, or None when its words do not make a valid run of this tab's model."""
    guess: float | None = None
    words = []
    for word in text.split():
        if word.startswith("guess="):
            try:
                guess = float(word.removeprefix("guess="))
            except ValueError:
                return None
            if not (math.isfinite(guess) and tab.question.min_value <= guess <= tab.question.max_value):
                return None
        else:
            words.append(word)
    try:
        params, seed = parse_params(importlib.import_module(f"sims.{tab.model}").Params, words)
    except (ValueError, TypeError):
        return None
    return Pin(params, seed, guess) if 0 <= seed <= SEED_MAX else None


def pinned(tab: SimTab) -> Pin | None:
    """The tab's pinned run A: this session's, or the one a link (a reload, a shared link) carries."""
    key = keys.SIM_PIN_PREFIX + tab.name
    pin = st.session_state.get(key)
    if isinstance(pin, Pin):
        return pin
    text = st.query_params.get(pin_param(tab.name))
    pin = None if text is None else pin_from_text(tab, text)
    if pin is None:
        st.query_params.pop(pin_param(tab.name), None)
        return None
    st.session_state[key] = pin
    return pin


def with_pin(query: dict[str, str], tab: SimTab) -> dict[str, str]:
    """The query plus the pinned run A, when there is one, so a shared link keeps the comparison."""
    pin = pinned(tab)
    return query if pin is None else {**query, pin_param(tab.name): pin_text(pin)}


def share_panel(model: str, params: object, seed: int, query: dict[str, str]) -> None:
    with st.expander("Share or rerun these settings", icon=":material/link:"):
        st.caption("Copy the link (the icon at the right of the box) to open this page with these settings, "
                   "this seed and your locked guess:")
        st.code(share_link(query), language=None, wrap_lines=True)
        st.caption("Or run the same simulation from a terminal in the project folder; it prints the summary "
                   "as JSON:")
        st.code(command(model, params, seed), language="bash", wrap_lines=True)


# ---- spread over seeds -------------------------------------------------------------------------

def spread_values(tab: SimTab, params: object, seeds: range) -> list[float | None]:
    """The tab's figure for each seed, with a progress bar.

    A heavy model with a named figure runs its seeds in worker processes (one per core) and sends
    back only the figure; the others run here, each run cached on (params, seed).
    """
    bar = st.progress(0.0, text=f"Running {len(seeds)} seeds…")

    def show(done: int, total: int) -> None:
        bar.progress(done / total, text=f"Running {total} seeds… {done}/{total}")

    values: list[float | None] | None = None
    if tab.metric is not None and tab.model in HEAVY_MODELS:
        try:
            values = spread.figures(tab.model, params, seeds, tab.metric, progress=show)
        except (BrokenProcessPool, OSError):
            values = None                    # no worker processes here: run them one by one below
    if values is None:
        values = []
        for done, seed in enumerate(seeds, start=1):
            value = tab.truth(cached_run(tab.model, params, seed))
            values.append(None if value is None else float(value))
            show(done, len(seeds))
    bar.empty()
    return values


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def spread_words(values: list[float], unit: str) -> str:
    """How much one run varies, in a sentence."""
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    middle = statistics.median(values)
    if max(values) == min(values):
        return (f"Every one of the {len(values)} seeds gives **{fmt_figure(middle)} {unit}**: with these settings "
                "the figure does not depend on chance, so one run tells the whole story.")
    swing = (high - low) / 2 / abs(middle) if middle else None
    relative = f" (about ±{swing:.0%} of the median)" if swing is not None else ""
    return (f"Over {len(values)} seeds the median is **{fmt_figure(middle)} {unit}**; 8 runs in 10 land between "
            f"**{fmt_figure(low)}** and **{fmt_figure(high)} {unit}**{relative}, and the extremes are "
            f"{fmt_figure(min(values))} and {fmt_figure(max(values))}. A single run can sit anywhere in that range.")


def grade_against_spread(guess: float, values: list[float], unit: str,
                         tolerance_rel: float = 0.0) -> tuple[bool, str]:
    """Whether the guess falls in the middle 80% of runs (widened by the question's tolerance),
    and a sentence saying where it falls among them."""
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    below = sum(1 for v in values if v < guess)
    inside = low - tolerance_rel * abs(low) <= guess <= high + tolerance_rel * abs(high)
    slack = f", give or take the {tolerance_rel:.0%} tolerance" if tolerance_rel else ""
    where = (f"inside the middle 80% of runs{slack}: a typical outcome" if inside else
             "below every run" if guess < min(values) else "above every run" if guess > max(values) else
             "outside the middle 80% of runs")
    return inside, (f"Your guess of **{fmt_guess(guess)} {unit}** is above {below} of {len(values)} runs, "
                    f"{where}.")


def spread_figure(values: list[float], guess: float, this_run: float | None, unit: str, label: str) -> go.Figure:
    fig = go.Figure(go.Histogram(x=values, marker_color="#1f77b4", name="runs", nbinsx=min(30, len(values)),
                                 hovertemplate="%{x}: %{y} runs<extra></extra>"))
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    fig.add_vrect(x0=low, x1=high, fillcolor="#1f77b4", opacity=0.12, line_width=0, layer="below")
    marks = [(guess, "#d62728", "dash", f"your guess ({fmt_guess(guess)})")]
    if this_run is not None:
        marks.append((this_run, "#2ca02c", "solid", f"this seed ({fmt_figure(this_run)})"))
    for x, colour, dash, name in marks:
        fig.add_vline(x=x, line=dict(color=colour, dash=dash, width=2))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color=colour, dash=dash), name=name))
    fig.update_layout(title=f"{label}: {len(values)} seeds (shaded: the middle 80%)", height=320, bargap=0.05,
                      margin=dict(l=50, r=20, t=60, b=40), xaxis_title=unit, yaxis_title="runs",
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    return fig


@st.fragment
def spread_panel(tab: SimTab, params: object, seed: int, guess: float, this_run: float | None) -> None:
    """Run seeds 1 to N of these settings and place the guess and this seed among them.

    A fragment: asking for a spread reruns this panel only, not the page's charts above it.
    """
    with st.expander("Spread: how much does one run vary?", icon=":material/casino:"):
        count = int(st.number_input("Seeds to run", 5, SPREAD_MAX, SPREAD_DEFAULT, 5,
                                    key=keys.sim_setting(tab.prefix, "n"), bind="query-params"))
        wanted = digest(tab.model, params, count)
        memo = keys.SIM_SPREAD_PREFIX + tab.name     # (settings digest, their figures once run)
        if st.button(f"Run {count} seeds", key=keys.sim_spread_button(tab.name)):
            st.session_state[memo] = (wanted, None)
        ran = st.session_state.get(memo)
        if not (isinstance(ran, tuple) and ran[0] == wanted):
            st.caption("Runs seeds 1 to N with these settings and shows where your guess and this seed fall.")
            return
        found = ran[1]
        if found is None:                             # just asked for: run them once, not on every rerun
            found = spread_values(tab, params, range(1, count + 1))
            st.session_state[memo] = (wanted, found)
        values = [v for v in found if v is not None]
        if len(values) < len(found):
            st.info(f"{len(found) - len(values)} of {len(found)} runs never reached the figure asked about.")
        if not values:
            return
        unit = tab.question.unit
        st.plotly_chart(spread_figure(values, guess, this_run, unit, tab.question.label), width="stretch",
                        key=keys.sim_spread_chart(tab.name))
        inside, where = grade_against_spread(guess, values, unit, tab.question.tolerance_rel)
        (st.success if inside else st.warning)(where)
        st.markdown(spread_words(values, unit))


# ---- A/B ---------------------------------------------------------------------------------------

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
        if left.button("Pin this run as A", key=keys.sim_pin_button(tab.name), icon=":material/push_pin:"):
            pin = Pin(params, seed, guess)
            st.session_state[pin_key] = pin
            st.query_params[pin_param(tab.name)] = pin_text(pin)
            st.rerun()                       # so the share link above carries the pin too
        if pin is not None and right.button("Unpin A", key=keys.sim_unpin_button(tab.name)):
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
                        width="stretch", key=keys.sim_ab_chart(tab.name))
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


# ---- files ----------------------------------------------------------------------------------

def download_panel(tab: SimTab, params: object, seed: int) -> None:
    events, summary = _files(tab.model, params, seed)
    stem = f"{tab.name.replace('.', '-')}-seed{seed}"
    left, right = st.columns(2)
    left.download_button("Events (CSV)", events, file_name=f"{stem}-events.csv", mime="text/csv",
                         key=keys.sim_events_csv(tab.name), width="stretch", icon=":material/download:")
    right.download_button("Settings and summary (JSON)", summary, file_name=f"{stem}-summary.json",
                          mime="application/json", key=keys.sim_summary_json(tab.name), width="stretch",
                          icon=":material/download:")


# ---- the flow --------------------------------------------------------------------------------

def play(tab: SimTab, params: object, chosen: Settings) -> object | None:
    """Lock a guess, press Play, replay the run in the browser, grade it, then the tools.

    The guess is scoped to ``params`` and the seed (``locked_guess``): move a slider and the page asks
    for a new one, also when a run is pinned as A. Returns the result once played (so the page can add its own notes), else None.
    """
    seed, question = chosen.seed, tab.question
    guess, scope = locked_guess(tab, params, seed)
    query = with_pin(with_guess(chosen.query, tab.name, guess, scope), tab)
    if not play_button(tab.name, guess):
        waiting_chart(tab.name)
        share_panel(tab.model, params, seed, query)
        return None
    result = cached_run(tab.model, params, seed)
    st.plotly_chart(playback_figure(tab.frames(result)), width="stretch", key=keys.sim_chart(tab.name))
    truth = tab.truth(result)
    guess_verdict(guess, truth, question.unit, tolerance_rel=question.tolerance_rel)
    share_panel(tab.model, params, seed, query)
    spread_panel(tab, params, seed, guess, truth)
    compare_panel(tab, params, seed, result, guess)
    download_panel(tab, params, seed)
    return result
