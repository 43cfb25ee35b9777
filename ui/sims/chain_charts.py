"""Plotly figures for the retry-chain simulation: calls reaching the dependency each tenth of a second, split
into those a user is still waiting for and those started after the user gave up.

Built like ui.sims.charts: a final figure, frames cut from it for in-browser playback, and the A/B series.
"""
from __future__ import annotations

import math

import plotly.graph_objects as go

from sims import retry_chain
from ui.sims.charts import CALM, HOT, Series, cut_frames

FRAMES = 12
BIN_S = 0.1                                  # the bars' width: calls start at timeouts' multiples, not per second


def _bins(result: retry_chain.Result, waiting: bool, cut: float) -> tuple[list[float], list[int]]:
    counts: dict[int, int] = {}
    for _, started, _, still_waiting in result.attempts:
        if still_waiting == waiting and started <= cut:
            slot = math.floor(started / BIN_S)
            counts[slot] = counts.get(slot, 0) + 1
    slots = sorted(counts)
    return [round(s * BIN_S, 6) for s in slots], [counts[s] for s in slots]


def _end(result: retry_chain.Result) -> float:
    return max((started for _, started, _, _ in result.attempts), default=0.0) + BIN_S


def _title(result: retry_chain.Result) -> str:
    p = result.params
    how = "a partner that fails fast" if p.fault == "errors" else "a partner that hangs"
    extras = [word for word, on in (("retry budgets", p.budget), ("propagated deadlines", p.propagate)) if on]
    return f"{p.depth} layers × {1 + p.retries} attempts, {how}" + (f", {' and '.join(extras)}" if extras else "")


def _frame(result: retry_chain.Result, cut: float):
    traces = []
    for waiting in (True, False):
        xs, ys = _bins(result, waiting, cut)
        traces.append(dict(x=xs, y=ys))
    return traces, _title(result)


def partner_calls_figure(result: retry_chain.Result) -> go.Figure:
    """Calls reaching the dependency per tenth of a second, stacked by whether their user still waits."""
    traces, title = _frame(result, _end(result))
    fig = go.Figure()
    for label, colour, data in zip(("calls for a user still waiting", "calls after the user gave up"),
                                   (CALM, HOT), traces):
        fig.add_trace(go.Bar(name=label, marker_color=colour, marker_line_width=0, width=BIN_S, offset=0, **data))
    fig.update_layout(barmode="stack", bargap=0, title=title, height=420, margin=dict(l=50, r=20, t=60, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.26, x=0))
    fig.update_xaxes(title_text="seconds into the run", range=[0.0, _end(result)])
    fig.update_yaxes(title_text=f"calls reaching the partner per {BIN_S:g} s")
    return fig


def partner_calls_frames(result: retry_chain.Result) -> list[go.Figure]:
    cuts = [_end(result) * (i + 1) / FRAMES for i in range(FRAMES)]
    return cut_frames(partner_calls_figure(result), lambda cut: _frame(result, cut), cuts)


def partner_calls_series(result: retry_chain.Result) -> Series:
    xs, ys = _bins(result, True, _end(result))
    late_x, late_y = _bins(result, False, _end(result))
    totals: dict[float, int] = {}
    for x, y in [*zip(xs, ys), *zip(late_x, late_y)]:
        totals[x] = totals.get(x, 0) + y
    moments = sorted(totals)
    return Series(tuple(moments), tuple(totals[m] for m in moments), "seconds into the run",
                  f"calls reaching the partner per {BIN_S:g} s", bars=True)
