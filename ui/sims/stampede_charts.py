"""Plotly figures for the cache-stampede simulation: queries at the database over time, against its slots.

Built like ui.sims.charts: a final figure, frames cut from it for in-browser playback, and the A/B series.
"""
from __future__ import annotations

import plotly.graph_objects as go

from sims import cache_stampede
from ui.sims.charts import HOT, LIMIT, Series, cut_frames

FRAMES = 12
POLICY_NAMES = {"none": "every miss queries", "coalesce": "one query per key", "stale": "stale while one refreshes"}


def _end(result: cache_stampede.Result) -> float:
    return result.params.duration_s


def _steps_until(result: cache_stampede.Result, cut: float) -> tuple[list[float], list[int]]:
    steps = [(t, n) for t, n in cache_stampede.in_flight_steps(result) if t <= cut]
    xs, ys = [0.0], [0]
    for moment, level in steps:
        xs.append(moment)
        ys.append(level)
    xs.append(cut)
    ys.append(ys[-1])
    return xs, ys


def _title(result: cache_stampede.Result) -> str:
    p = result.params
    keys = "One hot key" if p.keys == 1 else f"{p.keys:,} keys"
    spread = f", expiry spread over {p.jitter_s:g} s" if p.jitter_s else ""
    return f"{keys}, {POLICY_NAMES[p.policy]}{spread}"


def _frame(result: cache_stampede.Result, cut: float):
    xs, ys = _steps_until(result, cut)
    return [dict(x=xs, y=ys)], _title(result)


def db_queue_figure(result: cache_stampede.Result) -> go.Figure:
    """Queries waiting for or holding a database slot, second by second, with the slots as a line."""
    p = result.params
    (trace,), title = _frame(result, _end(result))
    fig = go.Figure(go.Scatter(name="queries at the database (running and waiting)", mode="lines",
                               line=dict(color=HOT, shape="hv", width=2), fill="tozeroy", **trace))
    fig.add_trace(go.Scatter(name=f"database slots ({p.db_slots})", mode="lines", x=[0.0, _end(result)],
                             y=[p.db_slots, p.db_slots], line=dict(color=LIMIT, dash="dash")))
    peak = max(cache_stampede.peak_db_in_flight(result), p.db_slots)
    fig.update_xaxes(title_text="seconds into the run", range=[0.0, _end(result)])
    fig.update_yaxes(title_text="queries at the database", range=[0, peak * 1.1])
    fig.update_layout(title=title, height=420, margin=dict(l=50, r=20, t=60, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.26, x=0))
    return fig


def db_queue_frames(result: cache_stampede.Result) -> list[go.Figure]:
    cuts = [_end(result) * (i + 1) / FRAMES for i in range(FRAMES)]
    return cut_frames(db_queue_figure(result), lambda cut: _frame(result, cut), cuts)


def db_queue_series(result: cache_stampede.Result) -> Series:
    xs, ys = _steps_until(result, _end(result))
    return Series(tuple(xs), tuple(ys), "seconds into the run", "queries at the database")

