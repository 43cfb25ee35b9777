"""Plotly figures of the live room: a strip of guesses with their 80% ranges, and the share of each option.

No names reach a figure: a guess is a number, its range and whether it is the viewer's own.
Option texts come from drill content, html-escaped anyway since Plotly labels understand a few tags.
"""
from __future__ import annotations

import html

import plotly.graph_objects as go

from drills.formulas import format_quantity
from drills.live import ChoiceRoom, NumericRoom
from ui.instructor_figures import short_prompt

OWN, OTHERS, TRUTH = "#d84315", "#546e7a", "#2e7d32"


def numeric_figure(room: NumericRoom, *, show_truth: bool) -> go.Figure:
    """One row per guess, sorted: the guess as a dot, its 80% range as a bar; the truth as a line.

    Built as one plain spec without Plotly's per-property validation: after a Close every page in the room
    draws this strip at once, and validating a few hundred points made it most of a page's run."""
    traces = []
    for own in (False, True):
        rows = [(i, g) for i, g in enumerate(room.guesses) if g.own == own]
        if not rows:
            continue
        traces.append({
            "type": "scatter", "x": [g.value for _, g in rows], "y": [i + 1 for i, _ in rows], "mode": "markers",
            "name": "your guess" if own else "the room's guesses",
            "marker": {"size": 13 if own else 9, "color": OWN if own else OTHERS,
                       "symbol": "diamond" if own else "circle"},
            "error_x": {"type": "data", "symmetric": False, "color": OWN if own else OTHERS, "thickness": 2,
                        "width": 0, "array": [(g.high - g.value) if g.high is not None else 0 for _, g in rows],
                        "arrayminus": [(g.value - g.low) if g.low is not None else 0 for _, g in rows]},
            "hovertext": [format_quantity(g.value, room.unit) + (
                f" (80% range {format_quantity(g.low, room.unit)} – {format_quantity(g.high, room.unit)})"
                if g.low is not None else "") for _, g in rows],
            "hoverinfo": "text"})
    truths = room.truths if show_truth else ()
    layout = {
        "height": max(220, 26 * len(room.guesses) + 120), "margin": {"l": 20, "r": 20, "t": 40, "b": 40},
        "xaxis": {"title": {"text": html.escape(room.unit)}}, "yaxis": {"visible": False}, "showlegend": True,
        "legend": {"orientation": "h", "y": -0.25},
        # what fig.add_vline draws: a dashed line across the plot, its label above it
        "shapes": [{"type": "line", "x0": t, "x1": t, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
                    "line": {"color": TRUTH, "width": 3, "dash": "dash"}} for t in truths],
        "annotations": [{"x": t, "xref": "x", "y": 1, "yref": "y domain", "xanchor": "center", "yanchor": "bottom",
                         "showarrow": False, "text": f"truth {format_quantity(t, room.unit)}"} for t in truths],
    }
    return go.Figure({"data": traces, "layout": layout}, _validate=False)


def choice_figure(room: ChoiceRoom, *, show_right: bool) -> go.Figure:
    """The share of the room that picked each option; the right one marked once revealed, yours named."""
    labels = [html.escape(short_prompt(o.text, 60)) + (" ✓" if show_right and o.right else "")
              + (" (you)" if o.own else "") for o in room.options]
    colours = [TRUTH if show_right and o.right else (OWN if o.own else OTHERS) for o in room.options]
    fig = go.Figure(go.Bar(x=[o.share for o in room.options], y=labels, orientation="h", marker={"color": colours},
                           text=[f"{o.share:.0%} ({o.count})" for o in room.options], textposition="auto",
                           hoverinfo="skip"))
    fig.update_layout(height=80 + 50 * len(room.options), margin={"l": 20, "r": 20, "t": 20, "b": 30},
                      xaxis={"tickformat": ".0%", "range": [0, 1]}, yaxis={"autorange": "reversed"})
    return fig
