"""Plotly figures for the hot-shard, concurrency-pool and retry-storm simulations.

Each builder takes a model result and a time cut-off, so a run can be drawn progressively by
calling it for a rising cut-off; ``*_frames`` return those sequences, ``playback_figure`` turns
them into one figure the browser replays, and ``*_series`` give the line an A/B chart overlays.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sims import concurrency_pool, hot_shard, retry_storm

HOT = "#d62728"
CALM = "#1f77b4"
GREY = "#7f7f7f"
LIMIT = "#2ca02c"
STATE_COLOURS = {"waiting": "#c7c7c7", "429": HOT, "backoff": "#ff9896", "service": CALM}
STATE_NAMES = {"waiting": "waiting for a pool slot", "429": "429 round trip",
               "backoff": "sleeping Retry-After", "service": "in service"}
CALM_SHADES = ("#1f77b4", "#6baed6", "#08519c", "#9ecae1", "#4292c6", "#2171b5", "#c6dbef", "#084594")
FRAMES = 12                                 # frames per animation: smooth enough, cheap to send
LEGEND_Y = -0.26                            # legends sit under the x axis title, in plot fractions
SCRUBBER_ROW_PX = 55                        # the playback scrubber's row under the play buttons
TITLE_PX = 44                               # a chart title's band at the top; a legend on top starts below it


def _cutoffs(end: float, frames: int = FRAMES) -> list[float]:
    return [end * (i + 1) / frames for i in range(frames)]


def _layout(fig: go.Figure, title: str, height: int = 420, *, legend_on_top: bool = False) -> go.Figure:
    """Shared layout. The legend sits under the axis titles, or with ``legend_on_top`` between the title and
    the plot: there, however many rows it wraps to on a narrow screen, it pushes the plot down instead
    of running into the playback controls below it."""
    if legend_on_top:
        fig.update_layout(title=dict(text=title, yref="container", y=1.0, yanchor="top", pad=dict(t=12)),
                          height=height, margin=dict(l=50, r=20, t=50, b=40),
                          legend=dict(orientation="h", yref="container", y=1.0 - TITLE_PX / height,
                                      yanchor="top", x=0, xanchor="left"))
        return fig
    fig.update_layout(title=title, height=height, margin=dict(l=50, r=20, t=60, b=40),
                      legend=dict(orientation="h", yanchor="top", y=LEGEND_Y, x=0))   # clear of the axis titles
    return fig


Frame = tuple[list[dict], str]         # per-trace data that changes over time, and the title


def _frames(final: go.Figure, frame_at: Callable[[float], Frame], cuts: list[float]) -> list[go.Figure]:
    """Earlier frames are the final figure with their own trace data swapped in.

    Building and validating a Plotly figure costs tens of milliseconds; swapping data in a dict
    copy costs almost nothing, so a whole animation costs about one figure. Traces past the
    frame's own (legend keys for reference lines) are kept as they are.
    """
    base = final.to_dict()
    frames = []
    for cut in cuts[:-1]:
        traces, title = frame_at(cut)
        data = [{**trace, **fresh} for trace, fresh in zip(base["data"], traces)] + base["data"][len(traces):]
        frames.append(go.Figure({"data": data,
                                 "layout": {**base["layout"], "title": {**base["layout"]["title"], "text": title}}},
                                _validate=False))
    return frames + [final]


def cut_frames(final: go.Figure, frame_at: Callable[[float], Frame], cuts: list[float]) -> list[go.Figure]:
    """``_frames`` for builders outside this module (the platform charts)."""
    return _frames(final, frame_at, cuts)


# ---- hot shard ------------------------------------------------------------------------------

def _shard_load_frame(result: hot_shard.Result, end: float, final: bool) -> Frame:
    p = result.params
    if final:
        loads = list(hot_shard.shard_load_pct(result))
    else:
        seen = [0] * p.shards
        for _, shard, arrive, _, _ in result.jobs:
            if arrive <= end:
                seen[shard] += 1
        loads = [100.0 * n / max(end, 1e-9) / p.shard_capacity_rps for n in seen]
    traces = [dict(y=loads, text=[f"{v:.0f}%" for v in loads])]
    for shard in range(p.shards):
        rows = [(t, waiting) for t, s, waiting, _ in result.samples if s == shard and t <= end]
        traces.append(dict(x=[t for t, _ in rows], y=[w for _, w in rows]))
    title = (f"{p.shards} shards, fleet at {hot_shard.fleet_utilisation_pct(result):.0f}% of capacity, "
             f"t = {end:.0f} s")
    return traces, title


def shard_load_figure(result: hot_shard.Result) -> go.Figure:
    """Per-shard load (% of capacity) beside each shard's queue over time.

    The bars show the offered load the model computes, against the capacity line, the fleet
    average and the hot key's own floor; animation frames show arrivals seen so far instead.
    """
    p = result.params
    traces, title = _shard_load_frame(result, p.duration_s, final=True)
    hot = set(result.placement[0])
    names = [f"Shard {s + 1}" for s in range(p.shards)]
    # Axis titles, not subplot titles: two titles side by side ran together on a phone.
    fig = make_subplots(rows=1, cols=2, column_widths=[0.45, 0.55], horizontal_spacing=0.1)
    # Bars numbered 1..n under a "shard" axis title: "Shard 1" labels turned 45° on a phone and took the
    # room the playback controls below need.
    fig.add_trace(go.Bar(x=[str(s + 1) for s in range(p.shards)],
                         marker_color=[HOT if s in hot else CALM for s in range(p.shards)],
                         textposition="inside", insidetextanchor="end", textfont=dict(color="white"),
                         showlegend=False,
                         hovertemplate="Shard %{x}: %{y:.0f}%<extra></extra>", **traces[0]), row=1, col=1)
    floor = hot_shard.hot_key_floor_pct(p)
    # Reference lines are named in the legend, not beside the line, so no bar label can overlap them.
    lines = [(100.0, dict(color=LIMIT, dash="solid"), "capacity (100%)"),
             (hot_shard.fleet_utilisation_pct(result), dict(color=GREY, dash="dash"),
              f"fleet average ({hot_shard.fleet_utilisation_pct(result):.0f}%)")]
    if floor > 0:
        lines.append((floor, dict(color=HOT, dash="dot"), f"hot key alone ({floor:.0f}%)"))
    # Lines behind the bars and labels inside them: a line never strikes through a bar's figure.
    for y, style, _ in lines:
        fig.add_hline(y=y, line=style, layer="below", row=1, col=1)
    fig.update_layout(uniformtext=dict(minsize=10, mode="hide"))
    fig.update_yaxes(range=[0, max(traces[0]["y"] + [floor, 100.0]) * 1.25], row=1, col=1)
    # One queue line per shard, named on hover rather than in the legend: with up to 12 shards the
    # legend wrapped into rows that ran under the playback controls on a narrow screen. The hot
    # shard's line is red like its bar; the axis title says so.
    for shard in range(p.shards):
        colour = HOT if shard in hot else CALM_SHADES[shard % len(CALM_SHADES)]
        fig.add_trace(go.Scatter(mode="lines", name=names[shard], line=dict(color=colour), showlegend=False,
                                 hovertemplate=f"{names[shard]}: %{{y}} waiting at %{{x:.0f}} s<extra></extra>",
                                 **traces[shard + 1]), row=1, col=2)
    for _, style, label in lines:
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=style, name=label, hoverinfo="skip"),
                      row=1, col=1)
    fig.update_xaxes(title_text="shard", tickangle=0, row=1, col=1)
    fig.update_yaxes(title_text="load, % of one shard's capacity", row=1, col=1)
    fig.update_xaxes(title_text="seconds", range=[0, p.duration_s], row=1, col=2)
    # the queue's axis on the right edge, so its title never sits against the load bars on a phone
    fig.update_yaxes(title_text="requests waiting", side="right",
                     rangemode="tozero", row=1, col=2)     # a count: no queue is a flat line at 0, not mid-axis
    return _layout(fig, title, legend_on_top=True)


def shard_load_frames(result: hot_shard.Result) -> list[go.Figure]:
    return _frames(shard_load_figure(result), lambda t: _shard_load_frame(result, t, final=False),
                   _cutoffs(result.params.duration_s))


def _tenant_classes(result: hot_shard.Result) -> dict[str, frozenset[int]]:
    near = hot_shard.neighbours(result)
    return {f"the noisy tenant's {len(near):,} neighbours": near,
            "everyone else": frozenset(range(1, len(result.placement))) - near}


def _tenant_wait_frame(result: hot_shard.Result, end: float) -> Frame:
    """Mean wait in minutes by arrival bin, for each class of tenant, up to ``end``."""
    p = result.params
    bin_s = max(p.duration_s / 40, p.sample_every_s)
    traces = []
    for keys in _tenant_classes(result).values():
        sums: dict[int, list[float]] = {}
        for key, _, arrive, start, _ in result.jobs:
            if key in keys and arrive <= end:
                sums.setdefault(int(arrive // bin_s), []).append((start if start is not None else p.duration_s)
                                                                  - arrive)
        bins = sorted(sums)
        traces.append(dict(x=[(b + 0.5) * bin_s / 60 for b in bins],
                           y=[sum(sums[b]) / len(sums[b]) / 60 for b in bins]))
    return traces, f"Waits with {p.shards} worker groups, t = {end / 60:.1f} min"


def tenant_wait_figure(result: hot_shard.Result) -> go.Figure:
    """Mean wait (minutes) of the noisy tenant's neighbours and everyone else, by arrival time."""
    p = result.params
    traces, title = _tenant_wait_frame(result, p.duration_s)
    fig = go.Figure()
    for label, data, colour in zip(_tenant_classes(result), traces, (HOT, CALM)):
        fig.add_trace(go.Scatter(mode="lines+markers", name=label, line=dict(color=colour), **data))
    fig.update_xaxes(title_text="job submitted at (minutes into the run)", range=[0, p.duration_s / 60])
    fig.update_yaxes(title_text="mean wait before a worker starts (minutes)", rangemode="tozero")
    return _layout(fig, title)


def tenant_wait_frames(result: hot_shard.Result) -> list[go.Figure]:
    return _frames(tenant_wait_figure(result), lambda t: _tenant_wait_frame(result, t),
                   _cutoffs(result.params.duration_s))


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


def _waiting_series(result: hot_shard.Result) -> tuple[list[float], list[list[int]]]:
    """Sample times, and for each tenant class the jobs submitted but not yet started then."""
    moments = sorted({t for t, *_ in result.samples})
    series = []
    for keys in shuffle_groups(result).values():
        changes = sorted([(arrive, 1) for key, _, arrive, _, _ in result.jobs if key in keys]
                         + [(start, -1) for key, _, _, start, _ in result.jobs if key in keys and start is not None])
        counts, level, i = [], 0, 0
        for moment in moments:
            while i < len(changes) and changes[i][0] <= moment:
                level += changes[i][1]
                i += 1
            counts.append(level)
        series.append(counts)
    return moments, series


def _waiting_by_class_frame(result: hot_shard.Result, end: float, waiting=None) -> Frame:
    p = result.params
    moments, series = waiting or _waiting_series(result)
    shown = [i for i, t in enumerate(moments) if t <= end]
    traces = [dict(x=[moments[i] / 60 for i in shown], y=[counts[i] for i in shown]) for counts in series]
    broken = ", ".join(str(g + 1) for g in result.down_shards)
    return traces, f"{p.shards} groups, {p.groups_per_key} per tenant; groups {broken} crash-looping"


def waiting_by_class_figure(result: hot_shard.Result) -> go.Figure:
    """Jobs submitted but not yet started, per class of tenant (by broken groups), over time."""
    p = result.params
    traces, title = _waiting_by_class_frame(result, p.duration_s)
    fig = go.Figure()
    for label, data, colour in zip(shuffle_groups(result), traces, (HOT, "#ff7f0e", CALM)):
        fig.add_trace(go.Scatter(mode="lines", name=label, line=dict(color=colour, width=3), **data))
    fig.update_xaxes(title_text="minutes into the run", range=[0, p.duration_s / 60])
    fig.update_yaxes(title_text="jobs waiting for a worker", rangemode="tozero")
    return _layout(fig, title)


def waiting_by_class_frames(result: hot_shard.Result) -> list[go.Figure]:
    waiting = _waiting_series(result)
    return _frames(waiting_by_class_figure(result), lambda t: _waiting_by_class_frame(result, t, waiting),
                   _cutoffs(result.params.duration_s))


# ---- concurrency pool -----------------------------------------------------------------------

def _lanes_end(result: concurrency_pool.Result) -> float:
    return max(result.fanout.makespan_s, result.pool.makespan_s)


def refusals(count: int) -> str:
    """The 429s a lane collected, as a reader would say it: "no 429s", "1 × 429", "20 × 429"."""
    return "no 429s" if count == 0 else f"{count:,} × 429"


def _lanes_frame(result: concurrency_pool.Result, cut: float) -> Frame:
    traces, scores = [], []
    for lane in (result.fanout, result.pool):
        for state in concurrency_pool.STATES:
            bars = [(call, start, min(stop, cut)) for call, s, start, stop in lane.segments
                    if s == state and start < cut]
            traces.append(dict(y=[f"call {c + 1}" for c, _, _ in bars], x=[b - a for _, a, b in bars],
                               base=[a for _, a, _ in bars]))
        refused = sum(1 for _, s, start, _ in lane.segments if s == "429" and start < cut)
        done = f", done at {lane.makespan_s:.2f} s" if lane.makespan_s <= cut + 1e-9 else ""
        scores.append(f"{lane.name}: {refusals(refused)}{done}")
    return traces, f"t = {min(cut, _lanes_end(result)):.1f} s · " + " · ".join(scores)


def lanes_figure(result: concurrency_pool.Result) -> go.Figure:
    """One row per call, fan-out above and the pool below, coloured by what the call is doing."""
    end = _lanes_end(result)
    traces, title = _lanes_frame(result, end)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=[f"{lane.name}" for lane in (result.fanout, result.pool)])
    data = iter(traces)
    for row in (1, 2):
        for state in concurrency_pool.STATES:
            fig.add_trace(go.Bar(orientation="h", marker_color=STATE_COLOURS[state], name=STATE_NAMES[state],
                                 legendgroup=state, showlegend=row == (2 if state == "waiting" else 1),
                                 hovertemplate="%{y}: from %{base:.2f} s for %{x:.2f} s<extra>"
                                               + STATE_NAMES[state] + "</extra>", **next(data)),
                          row=row, col=1)
        fig.update_yaxes(categoryorder="array", autorange="reversed", showticklabels=False, title_text="calls",
                         categoryarray=[f"call {c + 1}" for c in range(result.params.calls)], row=row, col=1)
    fig.update_layout(barmode="overlay", bargap=0.15)
    fig.update_xaxes(range=[0, end * 1.02], title_text="seconds", row=2, col=1)
    return _layout(fig, title, height=620)


def lanes_frames(result: concurrency_pool.Result) -> list[go.Figure]:
    return _frames(lanes_figure(result), lambda t: _lanes_frame(result, t), _cutoffs(_lanes_end(result)))


# ---- retry storm ----------------------------------------------------------------------------

def _storm_start(result: retry_storm.Result) -> float:
    return max(0.0, result.params.outage_s - retry_storm.LEAD_S)


def _calls_per_second_frame(result: retry_storm.Result, end: float) -> Frame:
    p = result.params
    traces = []
    for kinds in (("probe", "parked"), ("fresh",)):
        counts = retry_storm.per_second(result, kinds)
        seconds = [s for s in sorted(counts) if _storm_start(result) <= s <= end]
        traces.append(dict(x=[s - p.outage_s for s in seconds], y=[counts[s] for s in seconds]))
    mode = "jittered probes, shared breaker, staged ramp" if p.jitter else "own breakers, fixed probe schedule"
    return traces, f"{p.processes} processes, {mode}"


def calls_per_second_figure(result: retry_storm.Result) -> go.Figure:
    """Calls reaching the provider each second around recovery, against its per-second limit."""
    p = result.params
    traces, title = _calls_per_second_frame(result, p.end_s)
    fig = go.Figure()
    for label, colour, data in zip(("parked calls and probes", "fresh demand"), (HOT, CALM), traces):
        fig.add_trace(go.Bar(name=label, marker_color=colour, marker_line_width=0, **data))
    fig.add_hline(y=p.provider_limit_per_s, line=dict(color=LIMIT, width=2),
                  annotation_text=f"provider limit {p.provider_limit_per_s}/s")
    peak = max(retry_storm.peak_calls_per_s(result), p.provider_limit_per_s)
    fig.update_layout(barmode="stack", bargap=0)
    fig.update_xaxes(title_text="seconds since the provider recovered",
                     range=[_storm_start(result) - p.outage_s, p.after_s])
    fig.update_yaxes(title_text="calls reaching the provider that second", range=[0, peak * 1.1])
    return _layout(fig, title)


def calls_per_second_frames(result: retry_storm.Result) -> list[go.Figure]:
    start = _storm_start(result)
    cuts = [start + c for c in _cutoffs(result.params.end_s - start)]
    return _frames(calls_per_second_figure(result), lambda t: _calls_per_second_frame(result, t), cuts)


# ---- drill embeds ---------------------------------------------------------------------------

def preset_figure(preset_id: str, seed: int, params: object | None = None) -> go.Figure:
    """The final chart of a drill-embedded preset, run with `seed` (on `params`: a variant's run)."""
    from sims import presets

    preset = presets.PRESETS[preset_id]
    params = preset.params if params is None else params
    if preset.model == "hot_shard":
        result = hot_shard.run(params, seed)
        if params.bad_key_breaks_groups:
            return waiting_by_class_figure(result)
        if params.servers_per_shard > 1:
            return tenant_wait_figure(result)
        return shard_load_figure(result)
    if preset.model == "concurrency_pool":
        return lanes_figure(concurrency_pool.run(params, seed))
    if preset.model == "retry_storm":
        return calls_per_second_figure(retry_storm.run(params, seed))
    raise KeyError(f"no chart for preset {preset_id!r} (model {preset.model})")


# ---- playback in the browser -----------------------------------------------------------------

PLAY_FRAME_MS = 350                         # one frame at 1x; the whole run plays in about 4 s
SPEEDS = (("▶ Play", 1.0), ("▶▶ 2×", 0.5), ("▷ ½×", 2.0))


def _animate_args(frame_ms: float, names: list | None = None) -> list:
    return [names, {"frame": {"duration": frame_ms, "redraw": True}, "fromcurrent": names is None,
                    "transition": {"duration": 0}, "mode": "immediate"}]


def playback_figure(frames: list[go.Figure]) -> go.Figure:
    """One figure that replays ``frames`` in the browser: play, pause, speed and a scrubber.

    It opens on the last frame, the whole run; "Back to start" rewinds it. Every frame travels
    with the figure, so playing, pausing and scrubbing never ask the server for anything.
    """
    final = frames[-1].to_dict()
    count = len(frames)
    names = [str(i) for i in range(count)]
    final["frames"] = [{"name": name, "data": fig.to_dict()["data"],
                        "layout": {"title": fig.to_dict()["layout"].get("title", {})}}
                       for name, fig in zip(names, frames)]
    buttons = [dict(label=label, method="animate", args=_animate_args(PLAY_FRAME_MS * factor))
               for label, factor in SPEEDS]
    buttons += [dict(label="Pause", method="animate", args=_animate_args(0, [None])),
                dict(label="Back to start", method="animate", args=_animate_args(0, [names[0]]))]
    layout = final.setdefault("layout", {})
    margin = dict(layout.get("margin") or {})
    top, bottom = margin.get("t", 60), margin.get("b", 40)
    plot_px = (layout.get("height") or 420) - top - bottom     # kept: the controls get new room below
    legend = layout.get("legend") or {}
    legend_on_top = legend.get("yref") == "container"          # set by _layout(legend_on_top=True)
    if legend_on_top:
        # A legend on top pushes the plot down as it wraps on a narrow screen, and the controls' place is
        # a fraction of the plot's height: room enough for the axis titles when the plot is a third shorter.
        legend_px = 65.0
    else:
        legend_px = max(0.0, -legend.get("y", LEGEND_Y)) * plot_px + 45   # under the x axis title and legend
    below = -legend_px / plot_px
    # Buttons, then the scrubber on its own row under them: side by side they overlapped on a phone.
    margin["b"] = int(legend_px + 80 + SCRUBBER_ROW_PX)
    layout["margin"] = margin
    height = int(plot_px + top + margin["b"])
    if legend_on_top:                            # keep it the same pixels under the title
        legend["y"] = 1.0 - (1.0 - legend.get("y", 1.0)) * (layout.get("height") or 420) / height
    layout["height"] = height
    layout["updatemenus"] = [dict(type="buttons", direction="left", showactive=False, x=0.0, xanchor="left",
                                  y=below, yanchor="top", pad=dict(t=10), buttons=buttons)]
    layout["sliders"] = [dict(active=count - 1, x=0.0, len=1.0, y=below - SCRUBBER_ROW_PX / plot_px,
                              yanchor="top", pad=dict(t=0),
                              currentvalue=dict(prefix="Playback: ", font=dict(size=12)),
                              steps=[dict(label=f"{100 * (i + 1) // count}%", method="animate",
                                          args=_animate_args(0, [name])) for i, name in enumerate(names)])]
    return go.Figure(final, skip_invalid=True)


# ---- one series per tab for the A/B overlay ----------------------------------------------------

@dataclass(frozen=True)
class Series:
    """What the A/B chart draws for one run: a named line or set of bars over a shared axis."""

    x: tuple
    y: tuple
    x_title: str
    y_title: str
    bars: bool = False


def shard_load_series(result: hot_shard.Result) -> Series:
    loads = hot_shard.shard_load_pct(result)
    return Series(tuple(f"Shard {s + 1}" for s in range(len(loads))), loads, "shard",
                  "load, % of one shard's capacity", bars=True)


def neighbour_wait_series(result: hot_shard.Result) -> Series:
    traces, _ = _tenant_wait_frame(result, result.params.duration_s)
    return Series(tuple(traces[0]["x"]), tuple(traces[0]["y"]), "job submitted at (minutes into the run)",
                  "neighbours' mean wait (minutes)")


def waiting_total_series(result: hot_shard.Result) -> Series:
    moments, series = _waiting_series(result)
    totals = tuple(sum(counts[i] for counts in series) for i in range(len(moments)))
    return Series(tuple(t / 60 for t in moments), totals, "minutes into the run", "jobs waiting for a worker")


def pool_in_service_series(result: concurrency_pool.Result) -> Series:
    return _in_service_series(result.pool)


def fanout_in_service_series(result: concurrency_pool.Result) -> Series:
    return _in_service_series(result.fanout)


def _in_service_series(lane) -> Series:
    steps = concurrency_pool.in_service_steps(lane)
    return Series(tuple(t for t, _ in steps), tuple(n for _, n in steps), "seconds", f"calls in service, {lane.name}")


def calls_per_second_series(result: retry_storm.Result) -> Series:
    counts = retry_storm.per_second(result)
    p = result.params
    seconds = [s for s in range(int(_storm_start(result)), int(p.end_s) + 1)]
    return Series(tuple(s - p.outage_s for s in seconds), tuple(counts.get(s, 0) for s in seconds),
                  "seconds since the provider recovered", "calls reaching the provider that second")
