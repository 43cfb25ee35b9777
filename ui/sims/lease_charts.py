"""Plotly figures for the lease simulation: every write at storage by node over time, refused ones marked, with
the moment the lease lapsed and the moment the standby took over.

Built like ui.sims.charts: a final figure, frames cut from it for in-browser playback, and the A/B series.
"""
from __future__ import annotations

import plotly.graph_objects as go

from sims import leases
from ui.sims.charts import CALM, GREY, HOT, LIMIT, Series, cut_frames

FRAMES = 12
ROWS = {"A": 1, "B": 0}                 # the old leader on top


def _points(result: leases.Result, cut: float) -> list[dict]:
    stale = {w for w in leases.stale_writes(result)}
    groups = {"normal": ([], []), "stale": ([], []), "refused": ([], [])}
    for write in result.writes:
        landed, node, _, accepted = write
        if landed > cut:
            continue
        kind = "refused" if not accepted else "stale" if write in stale else "normal"
        groups[kind][0].append(landed)
        groups[kind][1].append(ROWS[node])
    return [dict(x=xs, y=ys) for xs, ys in groups.values()]


def _title(result: leases.Result) -> str:
    p = result.params
    what = (f"a pause of {p.fault_s:g} s" if p.fault == "pause"
            else f"a split with the clock set back {p.clock_step_s:g} s")
    return f"{p.lease_s:g} s lease, {what}, fencing {'on' if p.fencing else 'off'}"


def _frame(result: leases.Result, cut: float):
    return _points(result, cut), _title(result)


def writes_figure(result: leases.Result) -> go.Figure:
    p = result.params
    traces, title = _frame(result, p.duration_s)
    fig = go.Figure()
    styles = (("write", CALM, "circle"), ("old leader's write after the takeover", HOT, "x"),
              ("refused by fencing", GREY, "square-open"))
    for (label, colour, symbol), data in zip(styles, traces):
        fig.add_trace(go.Scatter(name=label, mode="markers", marker=dict(color=colour, symbol=symbol, size=9), **data))
    fault = "A frozen" if p.fault == "pause" else "A cut off from the lease service"
    fig.add_vrect(x0=p.fault_at_s, x1=min(p.fault_at_s + p.fault_s, p.duration_s), fillcolor=GREY, opacity=0.12,
                  line_width=0, annotation_text=fault, annotation_position="bottom left")
    # the two moments are often under a second apart: one label each side of its line
    for moment, label, colour, side in ((result.lease_lapsed_s, "lease lapses", LIMIT, "top left"),
                                        (result.b_acquired_s, "B takes over", HOT, "top right")):
        if moment is not None:
            fig.add_vline(x=moment, line=dict(color=colour, dash="dash"), annotation_text=label,
                          annotation_position=side)
    fig.update_xaxes(title_text="seconds (the coordination service's clock)", range=[0.0, p.duration_s])
    fig.update_yaxes(tickvals=list(ROWS.values()), ticktext=[f"node {n}" for n in ROWS], range=[-0.5, 1.5])
    fig.update_layout(title=title, height=380, margin=dict(l=60, r=20, t=60, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.3, x=0))
    return fig


def writes_frames(result: leases.Result) -> list[go.Figure]:
    end = result.params.duration_s
    return cut_frames(writes_figure(result), lambda cut: _frame(result, cut), [end * (i + 1) / FRAMES
                                                                                for i in range(FRAMES)])


def stale_series(result: leases.Result) -> Series:
    """Old-leader writes accepted after the takeover, counted up over time."""
    moments = sorted(w[0] for w in leases.stale_writes(result) if w[3])
    return Series(tuple([0.0, *moments]), tuple(range(len(moments) + 1)), "seconds",
                  "old leader's writes accepted after the takeover")
