"""Plotly figures for the hot-shard, concurrency-pool and retry-storm simulations.

Each builder takes a model result and a time cut-off, so a page can draw the run progressively
by calling it for a rising cut-off; ``*_frames`` return those sequences for ``ui.guess.animate``,
and ``guess_then_play`` is the lock-in, Play and compare flow the three pages share.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from sims import concurrency_pool, hot_shard, retry_storm
from ui.guess import animate, guess_lockin, guess_verdict, play_button

HOT = "#d62728"
CALM = "#1f77b4"
GREY = "#7f7f7f"
LIMIT = "#2ca02c"
STATE_COLOURS = {"waiting": "#c7c7c7", "429": HOT, "backoff": "#ff9896", "service": CALM}
STATE_NAMES = {"waiting": "waiting for a pool slot", "429": "429 round trip",
               "backoff": "sleeping Retry-After", "service": "in service"}
CALM_SHADES = ("#1f77b4", "#6baed6", "#08519c", "#9ecae1", "#4292c6", "#2171b5", "#c6dbef", "#084594")
FRAMES = 12                                 # frames per animation: smooth enough, cheap to send


def _cutoffs(end: float, frames: int = FRAMES) -> list[float]:
    return [end * (i + 1) / frames for i in range(frames)]


def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    fig.update_layout(title=title, height=height, margin=dict(l=50, r=20, t=60, b=40),
                      legend=dict(orientation="h", yanchor="bottom", y=-0.3, x=0))
    return fig


# ---- hot shard ------------------------------------------------------------------------------

def shard_load_figure(result: hot_shard.Result, upto_s: float | None = None) -> go.Figure:
    """Per-shard load (% of capacity) beside each shard's queue over time, up to ``upto_s``.

    Bars show arrivals seen so far over capacity; the final frame (``upto_s`` is None) shows
    the offered load the model computes, with the capacity line and the hot key's own floor.
    """
    p = result.params
    end = p.duration_s if upto_s is None else upto_s
    if upto_s is None:
        loads = list(hot_shard.shard_load_pct(result))
    else:
        seen = [0] * p.shards
        for _, shard, arrive, _, _ in result.jobs:
            if arrive <= end:
                seen[shard] += 1
        loads = [100.0 * n / max(end, 1e-9) / p.shard_capacity_rps for n in seen]
    hot = set(result.placement[0])
    names = [f"Shard {s + 1}" for s in range(p.shards)]
    fig = make_subplots(rows=1, cols=2, column_widths=[0.45, 0.55],
                        subplot_titles=("Load, % of one shard's capacity", "Requests waiting"))
    fig.add_trace(go.Bar(x=names, y=loads, marker_color=[HOT if s in hot else CALM for s in range(p.shards)],
                         text=[f"{v:.0f}%" for v in loads], textposition="outside", showlegend=False,
                         hovertemplate="%{x}: %{y:.0f}%<extra></extra>"), row=1, col=1)
    fig.add_hline(y=100, line=dict(color=LIMIT, dash="solid"), annotation_text="capacity", row=1, col=1)
    fig.add_hline(y=hot_shard.fleet_utilisation_pct(result), line=dict(color=GREY, dash="dash"),
                  annotation_text="fleet average", annotation_position="bottom right", row=1, col=1)
    floor = hot_shard.hot_key_floor_pct(p)
    if floor > 0:
        fig.add_hline(y=floor, line=dict(color=HOT, dash="dot"), annotation_text="hot key alone",
                      annotation_position="bottom right", row=1, col=1)
    top = max(loads + [floor, 100.0]) * 1.2
    fig.update_yaxes(range=[0, top], row=1, col=1)
    for shard in range(p.shards):
        rows = [(t, waiting) for t, s, waiting, _ in result.samples if s == shard and t <= end]
        fig.add_trace(go.Scatter(x=[t for t, _ in rows], y=[w for _, w in rows], mode="lines",
                                 name=names[shard],
                                 line=dict(color=HOT if shard in hot else CALM_SHADES[shard % len(CALM_SHADES)])),
                      row=1, col=2)
    fig.update_xaxes(title_text="seconds", range=[0, p.duration_s], row=1, col=2)
    return _layout(fig, f"{p.shards} shards, fleet at {hot_shard.fleet_utilisation_pct(result):.0f}% "
                        f"of capacity, t = {end:.0f} s")


def shard_load_frames(result: hot_shard.Result) -> list[go.Figure]:
    cuts = _cutoffs(result.params.duration_s)
    return [shard_load_figure(result, t) for t in cuts[:-1]] + [shard_load_figure(result)]


def _wait_series(result: hot_shard.Result, keys: frozenset[int], bin_s: float, end: float):
    sums: dict[int, list[float]] = {}
    for key, shard, arrive, start, _ in result.jobs:
        if key in keys and arrive <= end:
            wait = (start if start is not None else result.params.duration_s) - arrive
            sums.setdefault(int(arrive // bin_s), []).append(wait)
    bins = sorted(sums)
    return [(b + 0.5) * bin_s / 60 for b in bins], [sum(sums[b]) / len(sums[b]) / 60 for b in bins]


def tenant_wait_figure(result: hot_shard.Result, upto_s: float | None = None) -> go.Figure:
    """Mean wait (minutes) of the noisy tenant's neighbours and everyone else, by arrival time."""
    p = result.params
    end = p.duration_s if upto_s is None else upto_s
    near = hot_shard.neighbours(result)
    groups_of = {f"the noisy tenant's {len(near):,} neighbours": near,
                 "everyone else": frozenset(range(1, len(result.placement))) - near}
    fig = go.Figure()
    bin_s = max(p.duration_s / 40, p.sample_every_s)
    for (label, keys), colour in zip(groups_of.items(), (HOT, CALM)):
        x, y = _wait_series(result, keys, bin_s, end)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=label, line=dict(color=colour)))
    fig.update_xaxes(title_text="job submitted at (minutes into the run)", range=[0, p.duration_s / 60])
    fig.update_yaxes(title_text="mean wait before a worker starts (minutes)", rangemode="tozero")
    return _layout(fig, f"Waits with {p.shards} worker groups, t = {end / 60:.1f} min")


def tenant_wait_frames(result: hot_shard.Result) -> list[go.Figure]:
    return [tenant_wait_figure(result, t) for t in _cutoffs(result.params.duration_s)]


def waiting_by_class_figure(result: hot_shard.Result, classes: dict[str, frozenset[int]],
                            upto_s: float | None = None) -> go.Figure:
    """Jobs submitted but not yet started, per class of tenant, sampled over time."""
    p = result.params
    end = p.duration_s if upto_s is None else upto_s
    moments = sorted({t for t, *_ in result.samples if t <= end})
    fig = go.Figure()
    for (label, keys), colour in zip(classes.items(), (HOT, "#ff7f0e", CALM)):
        waiting = [sum(1 for key, _, arrive, start, _ in result.jobs
                       if key in keys and arrive <= t and (start is None or start > t)) for t in moments]
        fig.add_trace(go.Scatter(x=[t / 60 for t in moments], y=waiting, mode="lines", name=label,
                                 line=dict(color=colour, width=3)))
    fig.update_xaxes(title_text="minutes into the run", range=[0, p.duration_s / 60])
    fig.update_yaxes(title_text="jobs waiting for a worker", rangemode="tozero")
    broken = ", ".join(str(g + 1) for g in result.down_shards)
    return _layout(fig, f"{p.shards} groups, {p.groups_per_key} per tenant; groups {broken} crash-looping")


def waiting_by_class_frames(result: hot_shard.Result) -> list[go.Figure]:
    classes = shuffle_groups(result)
    return [waiting_by_class_figure(result, classes, t) for t in _cutoffs(result.params.duration_s)]


def shuffle_groups(result: hot_shard.Result) -> dict[str, frozenset[int]]:
    """Ordinary tenants by how many of their groups the bad workload broke."""
    down = set(result.down_shards)
    classes: dict[str, set[int]] = {"all of its groups broken": set(), "some groups broken": set(),
                                    "no group broken": set()}
    for key in range(1, len(result.placement)):
        hit = len(set(result.placement[key]) & down)
        label = ("no group broken" if hit == 0 else
                 "all of its groups broken" if hit == len(result.placement[key]) else "some groups broken")
        classes[label].add(key)
    return {f"{label} ({len(keys):,})": frozenset(keys) for label, keys in classes.items() if keys}


# ---- concurrency pool -----------------------------------------------------------------------

def lanes_figure(result: concurrency_pool.Result, upto_s: float | None = None) -> go.Figure:
    """One row per call, fan-out above and the pool below, coloured by what the call is doing."""
    lanes = (result.fanout, result.pool)
    end = max(lane.makespan_s for lane in lanes)
    cut = end if upto_s is None else upto_s
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=[f"{lane.name}: {_lane_score(lane, cut)}" for lane in lanes])
    for row, lane in enumerate(lanes, start=1):
        for state in concurrency_pool.STATES:
            bars = [(call, start, min(stop, cut)) for call, s, start, stop in lane.segments
                    if s == state and start < cut]
            fig.add_trace(go.Bar(y=[f"call {c + 1}" for c, _, _ in bars], x=[b - a for _, a, b in bars],
                                 base=[a for _, a, _ in bars], orientation="h", marker_color=STATE_COLOURS[state],
                                 name=STATE_NAMES[state], legendgroup=state, showlegend=row == 1,
                                 hovertemplate="%{y}: %{base:.2f}–%{x:.2f} s<extra>" + STATE_NAMES[state] + "</extra>"),
                          row=row, col=1)
        fig.update_yaxes(categoryorder="array", autorange="reversed", showticklabels=False, title_text="calls",
                         categoryarray=[f"call {c + 1}" for c in range(result.params.calls)], row=row, col=1)
    fig.update_layout(barmode="overlay", bargap=0.15)
    fig.update_xaxes(range=[0, end * 1.02], title_text="seconds", row=2, col=1)
    return _layout(fig, f"{result.params.calls} calls, provider serves {result.params.provider_limit} at a time",
                   height=620)


def _lane_score(lane: concurrency_pool.Lane, cut: float) -> str:
    refused = sum(1 for _, s, start, _ in lane.segments if s == "429" and start < cut)
    done = lane.makespan_s <= cut + 1e-9
    return f"{refused} × 429" + (f", done at {lane.makespan_s:.2f} s" if done else "")


def lanes_frames(result: concurrency_pool.Result) -> list[go.Figure]:
    end = max(result.fanout.makespan_s, result.pool.makespan_s)
    return [lanes_figure(result, t) for t in _cutoffs(end)[:-1]] + [lanes_figure(result)]


# ---- retry storm ----------------------------------------------------------------------------

def calls_per_second_figure(result: retry_storm.Result, upto_s: float | None = None) -> go.Figure:
    """Calls reaching the provider each second around recovery, against its per-second limit."""
    p = result.params
    start = max(0.0, p.outage_s - retry_storm.LEAD_S)
    end = p.end_s if upto_s is None else upto_s
    fig = go.Figure()
    for kinds, label, colour in ((("probe", "parked"), "parked calls and probes", HOT),
                                 (("fresh",), "fresh demand", CALM)):
        counts = retry_storm.per_second(result, kinds)
        seconds = [s for s in sorted(counts) if start <= s <= end]
        fig.add_trace(go.Bar(x=[s - p.outage_s for s in seconds], y=[counts[s] for s in seconds],
                             name=label, marker_color=colour, marker_line_width=0))
    fig.add_hline(y=p.provider_limit_per_s, line=dict(color=LIMIT, width=2),
                  annotation_text=f"provider limit {p.provider_limit_per_s}/s")
    peak = max(retry_storm.peak_calls_per_s(result), p.provider_limit_per_s)
    fig.update_layout(barmode="stack", bargap=0)
    fig.update_xaxes(title_text="seconds since the provider recovered", range=[start - p.outage_s, p.after_s])
    fig.update_yaxes(title_text="calls reaching the provider that second", range=[0, peak * 1.1])
    mode = "jittered probes, shared breaker, staged ramp" if p.jitter else "own breakers, fixed probe schedule"
    return _layout(fig, f"{p.processes} processes, {mode}")


def calls_per_second_frames(result: retry_storm.Result) -> list[go.Figure]:
    p = result.params
    start = max(0.0, p.outage_s - retry_storm.LEAD_S)
    cuts = [start + c for c in _cutoffs(p.end_s - start)]
    return [calls_per_second_figure(result, t) for t in cuts[:-1]] + [calls_per_second_figure(result)]


# ---- drill embeds ---------------------------------------------------------------------------

def preset_figure(preset_id: str, seed: int) -> go.Figure:
    """The final chart of a drill-embedded preset, run with the attempt's seed."""
    from sims import presets

    preset = presets.PRESETS[preset_id]
    if preset.model == "hot_shard":
        result = hot_shard.run(preset.params, seed)
        if preset.params.bad_key_breaks_groups:
            return waiting_by_class_figure(result, shuffle_groups(result))
        if preset.params.servers_per_shard > 1:
            return tenant_wait_figure(result)
        return shard_load_figure(result)
    if preset.model == "concurrency_pool":
        return lanes_figure(concurrency_pool.run(preset.params, seed))
    if preset.model == "retry_storm":
        return calls_per_second_figure(retry_storm.run(preset.params, seed))
    raise KeyError(f"no chart for preset {preset_id!r} (model {preset.model})")


# ---- the guess-then-play flow the three pages share ----------------------------------------

@st.cache_data(max_entries=256, show_spinner="Simulating…")
def cached_run(model: str, params: object, seed: int = 1):
    """Run ``sims.<model>`` once per (params, seed); params are frozen, so they hash."""
    module = importlib.import_module(f"sims.{model}")
    return module.run(params, seed)


@dataclass(frozen=True)
class Question:
    """What the reader guesses before pressing Play, and how it is checked."""

    label: str
    unit: str
    max_value: float
    default: float
    step: float = 1.0
    tolerance_rel: float = 0.1


def tab_controls(intro: str, *sliders: dict) -> list:
    """A tab's short introduction and its sliders side by side; returns the slider values."""
    st.markdown(intro)
    return [column.slider(**spec) for column, spec in zip(st.columns(len(sliders)), sliders)]


def guess_then_play(name: str, question: Question, model: str, params: object,
                    frames: Callable[[object], list[go.Figure]], truth: Callable[[object], float],
                    seed: int = 1) -> object | None:
    """Lock a guess, press Play, watch the run drawn frame by frame, then compare.

    Returns the result once played (so the page can add its own notes), else None.
    """
    guess = guess_lockin(name, question.label, question.unit, min_value=0.0, max_value=question.max_value,
                         default=question.default, step=question.step)
    if not play_button(name, guess):
        return None
    result = cached_run(model, params, seed)
    just_pressed = bool(st.session_state.get(f"play::{name}"))
    animate(frames(result), delay_s=0.08, animate_now=just_pressed, chart_key=f"chart::{name}")
    guess_verdict(guess, truth(result), question.unit, tolerance_rel=question.tolerance_rel)
    return result
