"""Plotly figures of the live room: a strip of guesses with their 80% ranges (bars of counts in a big room), and
the share of each option.

No names reach a figure: a guess is a number, its range and whether it is the viewer's own.
Option texts come from drill content, html-escaped anyway since Plotly labels understand a few tags.
"""
from __future__ import annotations

import functools
import html
from dataclasses import dataclass

import plotly.graph_objects as go

from drills.formulas import format_quantity
from drills.live import ChoiceRoom, NumericRoom
from ui.instructor.figures import short_prompt

OWN, OTHERS, TRUTH = "#d84315", "#546e7a", "#2e7d32"
STRIP_ROWS = 40   # a room of more guesses shows them as bars of counts: a row each would make a chart pages tall


@functools.cache
def _template() -> dict:
    """Plotly's default template, as a Figure built the usual way carries it in its layout."""
    return go.Figure().to_dict()["layout"]["template"]


class SpecFigure(go.Figure):
    """A figure already built as a plain spec, for st.plotly_chart: it asks a Figure for to_dict(), which here
    is the spec itself (with the default template a Figure adds), with none of Figure's own building, copying
    and checking of every point.

    Only for handing to st.plotly_chart: nothing else of go.Figure is set up."""

    def __init__(self, spec: dict):   # deliberately not Figure's __init__
        spec["layout"] = {**spec["layout"], "template": _template()}
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return self._spec


@dataclass(frozen=True)
class Strip:
    """The room's strip of a numeric question, row by row in the room's order (a dot, its 80% range, its hover
    text) with the layout and the truth line. After a Close it is built once per process; each page only picks
    out its own guess (numeric_figure). Over STRIP_ROWS guesses, `counts` is the room's guesses as one histogram
    trace every page shares, and a page's own guess is a mark on its baseline."""
    x: tuple[float, ...]
    y: tuple[int, ...]
    plus: tuple[float, ...]
    minus: tuple[float, ...]
    hover: tuple[str, ...]
    layout: dict
    counts: dict | None = None


def numeric_strip(room: NumericRoom, *, show_truth: bool) -> Strip:
    guesses = room.guesses
    truths = room.truths if show_truth else ()
    crowd = len(guesses) > STRIP_ROWS
    layout = {
        "height": 340 if crowd else max(220, 26 * len(guesses) + 120),
        "margin": {"l": 50 if crowd else 20, "r": 20, "t": 40, "b": 40},
        "xaxis": {"title": {"text": html.escape(room.unit)}},
        "yaxis": {"title": {"text": "guesses"}, "rangemode": "tozero"} if crowd else {"visible": False},
        "showlegend": True, **({"bargap": 0.05} if crowd else {}),
        "legend": {"orientation": "h", "y": -0.25},
        # what fig.add_vline draws: a dashed line across the plot, its label above it
        "shapes": [{"type": "line", "x0": t, "x1": t, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
                    "line": {"color": TRUTH, "width": 3, "dash": "dash"}} for t in truths],
        "annotations": [{"x": t, "xref": "x", "y": 1, "yref": "y domain", "xanchor": "center", "yanchor": "bottom",
                         "showarrow": False, "text": f"truth {format_quantity(t, room.unit)}"} for t in truths],
    }
    return Strip(
        x=tuple(g.value for g in guesses), y=tuple(range(1, len(guesses) + 1)),
        plus=tuple((g.high - g.value) if g.high is not None else 0 for g in guesses),
        minus=tuple((g.value - g.low) if g.low is not None else 0 for g in guesses),
        hover=tuple(format_quantity(g.value, room.unit) + (
            f" (80% range {format_quantity(g.low, room.unit)} – {format_quantity(g.high, room.unit)})"
            if g.low is not None else "") for g in guesses),
        layout=layout,
        counts={"type": "histogram", "x": [g.value for g in guesses], "nbinsx": 30, "name": "the room's guesses",
                "marker": {"color": OTHERS},
                "hovertemplate": "%{x}: %{y} of the room's guesses<extra></extra>"} if crowd else None)


def numeric_figure(room: NumericRoom, *, show_truth: bool, strip: Strip | None = None) -> go.Figure:
    """One row per guess, sorted: the guess as a dot, its 80% range as a bar; the truth as a line.

    `strip` is numeric_strip(room) made already (for the same guesses in the same order, whoever's own they
    are). Built as one plain spec without Plotly's per-property validation: after a Close every page in the
    room draws this strip at once, and validating a few hundred points made it most of a page's run."""
    strip = strip or numeric_strip(room, show_truth=show_truth)
    mine = [i for i, g in enumerate(room.guesses) if g.own]
    if strip.counts is not None:   # the room's guesses as counts, the viewer's own marked on the baseline
        own = _strip_trace(strip, lambda column: [column[i] for i in mine], own=True)
        own.update(y=[0] * len(mine), cliponaxis=False)
        return SpecFigure({"data": [strip.counts, own] if mine else [strip.counts], "layout": strip.layout})
    traces = []
    if len(mine) < len(room.guesses):
        traces.append(_strip_trace(strip, lambda column: _without(column, mine), own=False))
    if mine:
        traces.append(_strip_trace(strip, lambda column: [column[i] for i in mine], own=True))
    return SpecFigure({"data": traces, "layout": strip.layout})


def _strip_trace(strip: Strip, pick, *, own: bool) -> dict:
    """The strip's rows `pick` takes from each column, as the viewer's own guess or the room's."""
    return {"type": "scatter", "x": pick(strip.x), "y": pick(strip.y), "mode": "markers",
            "name": "your guess" if own else "the room's guesses",
            "marker": {"size": 13 if own else 9, "color": OWN if own else OTHERS,
                       "symbol": "diamond" if own else "circle"},
            "error_x": {"type": "data", "symmetric": False, "color": OWN if own else OTHERS, "thickness": 2,
                        "width": 0, "array": pick(strip.plus), "arrayminus": pick(strip.minus)},
            "hovertext": pick(strip.hover), "hoverinfo": "text"}


def _without(column: tuple, rows: list[int]) -> list:
    """`column` with the rows `rows` (ascending, usually the viewer's one guess) left out, in slices: after a Close
    every page of the room builds its strip this way, and a loop over a few hundred rows per column was most of
    the figure's cost."""
    kept, start = [], 0
    for row in rows:
        kept.extend(column[start:row])
        start = row + 1
    kept.extend(column[start:])
    return kept


def choice_figure(room: ChoiceRoom, *, show_right: bool) -> go.Figure:
    """The share of the room that picked each option; the right one marked once revealed, yours named.

    A plain spec too (see numeric_figure): a closed question's shares are drawn by every page at once."""
    labels = [html.escape(short_prompt(o.text, 60)) + (" (right)" if show_right and o.right else "")
              + (" (you)" if o.own else "") for o in room.options]
    colours = [TRUTH if show_right and o.right else (OWN if o.own else OTHERS) for o in room.options]
    bar = {"type": "bar", "x": [o.share for o in room.options], "y": labels, "orientation": "h",
           "marker": {"color": colours}, "text": [f"{o.share:.0%} ({o.count})" for o in room.options],
           "textposition": "auto", "hoverinfo": "skip"}
    return SpecFigure({"data": [bar], "layout": {
        "height": 80 + 50 * len(room.options), "margin": {"l": 20, "r": 20, "t": 20, "b": 30},
        "xaxis": {"tickformat": ".0%", "range": [0, 1]}, "yaxis": {"autorange": "reversed"}}})
