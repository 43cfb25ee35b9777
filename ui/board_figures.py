"""Plotly figures for the board's item analysis, time and grader-gap tabs, from the reports' DataFrames.

Labels reach Plotly html-escaped: its labels understand a few tags.
"""
from __future__ import annotations

import html
import json

import pandas as pd
import plotly.graph_objects as go

from drills.reports.items import NO_ANSWER
from ui.results import wrap_text

RIGHT = "#2e7d32"
WRONG = ("#c62828", "#ef6c00", "#8e24aa", "#6d4c41", "#546e7a")
NONE = "#cfd8dc"
LABEL_WIDTH = 34    # characters per line of a question's label beside its bars


def choice_figure(rows: pd.DataFrame, labels: dict[str, str], right: dict[str, str],
                  option_text: dict[str, dict[str, str]]) -> go.Figure:
    """One horizontal bar per choice question, split by the share choosing each option: the right option
    green and first, wrong ones warm, no answer grey. `rows` are item_stats rows (one per question)."""
    fig = go.Figure()
    ys = [wrap_text(labels.get(q, q), LABEL_WIDTH) for q in rows["question_id"]]
    slots: dict[int, dict] = {}
    for y, qid, shares in zip(ys, rows["question_id"], rows["option_shares"]):
        ordered = json.loads(shares)
        names = [right.get(qid)] + [o for o in ordered if o not in (right.get(qid), NO_ANSWER)] + [NO_ANSWER]
        for slot, option in enumerate(n for n in names if n in ordered):
            text = option_text.get(qid, {}).get(option, option)
            colour = RIGHT if option == right.get(qid) else NONE if option == NO_ANSWER else WRONG[(slot - 1) % len(WRONG)]
            entry = slots.setdefault(slot, {"y": [], "x": [], "colour": [], "hover": []})
            entry["y"].append(y)
            entry["x"].append(100 * ordered[option])
            entry["colour"].append(colour)
            mark = " (right)" if option == right.get(qid) else ""
            entry["hover"].append(f"{html.escape(text)}{mark}: {100 * ordered[option]:.0f}%")
    for slot, entry in sorted(slots.items()):
        fig.add_trace(go.Bar(y=entry["y"], x=entry["x"], orientation="h", marker_color=entry["colour"],
                             hovertext=entry["hover"], hoverinfo="text", showlegend=False,
                             text=[f"{x:.0f}%" if x >= 8 else "" for x in entry["x"]], textposition="inside",
                             insidetextanchor="middle"))
    lines = sum(y.count("<br>") + 1 for y in ys)
    fig.update_layout(barmode="stack", height=80 + 20 * lines + 14 * len(ys), margin=dict(l=10, r=10, t=10, b=40),
                      xaxis=dict(title="share of the attempts counted (green: the right option)", range=[0, 100],
                                 ticksuffix="%"),
                      yaxis=dict(autorange="reversed", automargin=True))
    return fig
