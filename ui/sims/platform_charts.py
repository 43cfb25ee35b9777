"""Plotly figures for the platform simulation: backlog, waits, slot share and provider load.

Pure builders (a Result in, a figure out) so the page stays thin and tests can inspect the traces.
"""
from __future__ import annotations

import bisect

import plotly.graph_objects as go

from sims import platform
from sims.platform import Result
from ui.chart_notes import empty_counts
from ui.sims.charts import FRAMES, Series, cut_frames

ACME_COLOUR = "#d62728"
OTHERS_COLOUR = "#1f77b4"
IDLE_COLOUR = "#c7c7c7"
PROVIDER_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c")
X_TITLE = "minutes from the break"


RUN_X_TITLE = "minutes of the run"
WARM_UP_COLOUR = "#7f7f7f"


def x_title(result: Result) -> str:
    """The time axis: minutes from the break, or, in a run with no break, minutes of the run from 0."""
    p = result.params
    if platform.has_break(p):
        return f"{X_TITLE} (minute {p.break_at_min:g} of the run)"
    return RUN_X_TITLE


def x_offset(p: platform.Params) -> float:
    """Minutes added to the model's minutes-from-the-break to place them on the chart's axis.

    A run with no break is drawn in minutes of the run from 0, the axis the page's caption quotes, with
    the warm-up minutes before the measurement shaded; a run with a break is drawn around the break.
    """
    return 0.0 if platform.has_break(p) else p.break_at_min


def _on_axis(result: Result, minutes) -> list[float]:
    offset = x_offset(result.params)
    return [m + offset for m in minutes]


def _visible(result: Result) -> int:
    """Index of the first sample worth drawing: with a break, the empty start-up minutes are left out
    (a run with no break draws them, shaded as the warm-up its rates leave out)."""
    if not platform.has_break(result.params):
        return 0
    for i, s in enumerate(result.samples):
        if s.t >= platform.SETTLE_S:
            return i
    return 0


def _frame(fig: go.Figure, result: Result, title: str, y_title: str) -> go.Figure:
    """Shared layout plus dotted markers where the break starts, mitigations start and A returns."""
    p = result.params
    offset = x_offset(p)
    marks = []
    if platform.has_break(p):
        marks.append((0.0, "break"))
    else:
        warm_up = platform.focus_window(p)[0] / 60.0
        # a grey veil over the minutes the rates leave out (the caption names it): over the data, so the
        # stacked areas cannot hide it, and with no label to strike through a limit line
        fig.add_vrect(x0=0.0, x1=warm_up, fillcolor=WARM_UP_COLOUR, opacity=0.3, line_width=0, layer="above")
        fig.update_xaxes(range=[0.0, p.window_min])
    if p.mitigations_from_min > 0:
        marks.append((p.mitigations_from_min - p.break_at_min + offset, "mitigations on"))
    if platform.has_outage(p):
        marks.append((p.outage_min, "A back"))
    end = p.window_min - p.break_at_min + offset
    for x, label in marks:
        if x <= end:
            fig.add_vline(x=x, line_dash="dot", line_color="#555", annotation_text=label,
                          annotation_position="top left")
    fig.update_yaxes(rangemode="tozero")     # counts, waits and rates: an axis below zero means nothing
    fig.update_layout(title=title, xaxis_title=x_title(result), yaxis_title=y_title, height=340,
                      margin=dict(l=10, r=10, t=60, b=10), hovermode="x unified",
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1.0, xanchor="right"))
    return fig


def backlog_figure(result: Result) -> go.Figure:
    line = platform.timeline(result)
    k = _visible(result)
    x = _on_axis(result, line["minute"][k:])
    fig = go.Figure()
    fig.add_scatter(x=x, y=line["queued_others"][k:], name="everyone else", line_color=OTHERS_COLOUR)
    fig.add_scatter(x=x, y=line["queued_acme"][k:], name="Acme", line_color=ACME_COLOUR)
    if not any(line["queued_others"][k:]) and not any(line["queued_acme"][k:]):
        # Two lines along zero would sit mid-chart on an axis from -1 to 1: say it instead.
        empty_counts(fig, "The queue stayed empty: no job was waiting for a slot at any sampled moment.", y=0.6)
    return _frame(fig, result, "Jobs waiting for a worker slot", "queued jobs")


def backlog_frames(result: Result) -> list[go.Figure]:
    """The backlog chart drawn up to a rising minute, for in-browser playback; axes stay put."""
    final = backlog_figure(result)
    lines = final.data[:2]
    minutes = list(lines[0].x or ())
    if len(minutes) < 2:
        return [final]
    top = max([*lines[0].y, *lines[1].y, 1])
    final.update_xaxes(range=[minutes[0], minutes[-1]])
    final.update_yaxes(range=[0, top * 1.05])
    title = final.layout.title.text

    def frame_at(cut: float):
        shown = bisect.bisect_right(minutes, cut)
        return [dict(x=minutes[:shown], y=list(line.y[:shown])) for line in lines], f"{title}, minute {cut:+.0f}"

    span = minutes[-1] - minutes[0]
    return cut_frames(final, frame_at, [minutes[0] + span * (i + 1) / FRAMES for i in range(FRAMES)])


def waits_figure(result: Result) -> go.Figure:
    fig = go.Figure()
    start = platform.minutes_from_break(result, platform.SETTLE_S if platform.has_break(result.params) else 0.0)
    for acme, name, colour in ((False, "everyone else", OTHERS_COLOUR), (True, "Acme", ACME_COLOUR)):
        minutes, p95 = platform.wait_p95_by_minute(result, acme)
        keep = [i for i, m in enumerate(minutes) if m >= start]
        fig.add_scatter(x=_on_axis(result, [minutes[i] for i in keep]), y=[p95[i] for i in keep], name=name,
                        mode="lines+markers", line_color=colour, marker_size=4)
    budget = 120.0 - result.params.job_s
    fig.add_hline(y=budget, line_dash="dash", line_color="#888",
                  annotation_text=f"{budget:.0f} s: what a 2-minute target leaves for waiting")
    return _frame(fig, result, "Queue wait p95, by minute of claim", "seconds")


def slot_share_figure(result: Result) -> go.Figure:
    line = platform.timeline(result)
    k = _visible(result)
    x = _on_axis(result, line["minute"][k:])
    slots = result.params.slots
    fig = go.Figure()
    for key, name, colour in (("running_acme", "Acme", ACME_COLOUR),
                              ("running_others", "everyone else", OTHERS_COLOUR),
                              ("idle", "idle", IDLE_COLOUR)):
        fig.add_scatter(x=x, y=[100.0 * v / slots for v in line[key][k:]], name=name, stackgroup="slots",
                        line_color=colour, line_width=0.5)
    fig.update_yaxes(range=[0, 100])
    return _frame(fig, result, f"Who holds the {slots} worker slots", "% of slots")


def provider_load_figure(result: Result) -> go.Figure:
    line = platform.timeline(result)
    k = _visible(result)
    x = _on_axis(result, line["minute"][k:])
    fig = go.Figure()
    for i, (name, limit) in enumerate(zip(platform.PROVIDERS, platform.limits_per_s(result.params))):
        colour = PROVIDER_COLOURS[i]
        fig.add_scatter(x=x, y=line["calls_per_s"][i][k:], name=f"{name} sent", line_color=colour)
        fig.add_scatter(x=[x[0], x[-1]] if x else [], y=[limit, limit], name=f"{name} limit",
                        mode="lines", line=dict(color=colour, dash="dash", width=1))
    return _frame(fig, result, "Calls sent to each provider against its limit", "calls per second")


def backlog_series(result: Result) -> Series:
    """All jobs waiting for a slot, by minute from the break: the line an A/B chart overlays."""
    line = platform.timeline(result)
    k = _visible(result)
    waiting = tuple(a + b for a, b in zip(line["queued_acme"][k:], line["queued_others"][k:]))
    return Series(tuple(_on_axis(result, line["minute"][k:])), waiting, x_title(result),
                  "jobs waiting for a worker slot")


FIGURES = (
    ("backlog", backlog_figure),
    ("waits", waits_figure),
    ("slots", slot_share_figure),
    ("providers", provider_load_figure),
)
