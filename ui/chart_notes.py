"""Words in place of data on a chart: a centred grey note, and the empty count axis it sits on.

Plotly draws an axis from -1 to 1 when every value is zero; a count never goes below zero.
"""
from __future__ import annotations

import plotly.graph_objects as go

NOTE_COLOUR = "#7f7f7f"


def centre_note(fig: go.Figure, text: str, *, y: float = 0.5) -> go.Figure:
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=y, xref="paper", yref="paper",
                       font=dict(size=15, color=NOTE_COLOUR))
    return fig


def empty_counts(fig: go.Figure, text: str, *, y: float = 0.5) -> go.Figure:
    """A count chart with nothing above zero: a 0-1 axis and a note saying why."""
    fig.update_yaxes(range=[0, 1], dtick=1)
    return centre_note(fig, text, y=y)
