"""Plotly figures for the board's item analysis, time and grader-gap tabs, from the reports' DataFrames.

Labels reach Plotly html-escaped: its labels understand a few tags.
"""
from __future__ import annotations

import html
import json
import math

import pandas as pd
import plotly.graph_objects as go

from drills.reports.items import NO_ANSWER
from ui.drill.results import wrap_text

RIGHT = "#2e7d32"
WRONG = ("#c62828", "#ef6c00", "#8e24aa", "#6d4c41", "#546e7a")
NONE = "#cfd8dc"
LABEL_WIDTH = 24    # characters per line of a question's label beside its bars (fits 390 px)


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
                      xaxis=dict(title="share of attempts (green: right)", range=[0, 100],
                                 ticksuffix="%"),
                      yaxis=dict(autorange="reversed", automargin=True))
    return fig


def time_heatmap(rows: list[str], parts: list[tuple[str, str, float]], minutes: list[list[float | None]],
                 median: list[float | None]) -> go.Figure:
    """Minutes per candidate (rows) and part (columns, with their pacing), the cohort's median row on top.

    Colour is the time against the part's pacing on a doubling scale: blue under, white on pace, red over.
    """
    labels = ["<b>median</b>"] + [html.escape(r) for r in rows]
    grid = [median] + minutes
    # Short upright column heads ("Break 1 · 8 min" of "Break 1: one tenant floods the job queue") that keep
    # nine parts apart even at 390 px; the hover names the whole part.
    x = [html.escape(f"{_short(title.split(':')[0])} · {pace:g} min") for _, title, pace in parts]
    z, text, hover = [], [], []
    for label, row in zip(labels, grid):
        z.append([None if m is None or pace <= 0 else max(-2.0, min(2.0, math.log2(max(m, 1e-3) / pace)))
                  for m, (_, _, pace) in zip(row, parts)])
        text.append(["" if m is None else f"{m:.0f}" if m >= 10 else f"{m:.1f}" for m in row])
        hover.append([f"{label}<br>{html.escape(title)}: " + ("not reached" if m is None else
                      f"{m:.1f} min against {pace:g} min of pacing") for m, (_, title, pace) in zip(row, parts)])
    fig = go.Figure(go.Heatmap(
        z=z, x=x, y=labels, text=text, texttemplate="%{text}", hovertext=hover, hoverinfo="text",
        colorscale=[[0, "#1565c0"], [0.5, "#fafafa"], [1, "#c62828"]], zmin=-2, zmax=2, xgap=2, ygap=2,
        colorbar=dict(title=dict(text="vs pacing", side="top"), tickvals=[-2, -1, 0, 1, 2],
                      ticktext=["¼×", "½×", "on pace", "2×", "4×"], orientation="h", y=-0.01, yanchor="top",
                      len=0.8, thickness=10),
    ))
    fig.update_layout(height=230 + 24 * len(labels), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed", automargin=True),
                      xaxis=dict(side="top", automargin=True, tickangle=-90, tickfont=dict(size=11)))
    return fig


def _short(text: str, limit: int = 16) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def gap_figure(by_skill: pd.DataFrame, names: dict[str, str]) -> go.Figure:
    """Per skill, the share of (self, instructor) pairs where the candidate rated themselves higher (left,
    red), the same (grey) or lower (right, blue) than the instructor did."""
    shown = by_skill.sort_values("self_higher")
    y = [wrap_text(names.get(s, s), 26) for s in shown["skill_id"]]
    fig = go.Figure()
    for column, name, colour in (("self_higher", "self-score higher", "#c62828"), ("agree", "the same", "#b0bec5"),
                                 ("self_lower", "self-score lower", "#1565c0")):
        values = 100 * shown[column]
        fig.add_trace(go.Bar(y=y, x=values, name=name, orientation="h", marker_color=colour,
                             text=[f"{v:.0f}%" if v >= 8 else "" for v in values], textposition="inside",
                             customdata=shown["pairs"],
                             hovertemplate="%{y}: " + name + " in %{x:.0f}% of %{customdata} pairs<extra></extra>"))
    lines = sum(label.count("<br>") + 1 for label in y)
    fig.update_layout(barmode="stack", height=110 + 20 * lines + 14 * len(y), margin=dict(l=10, r=10, t=30, b=40),
                      legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, traceorder="normal"),
                      xaxis=dict(range=[0, 100], ticksuffix="%", title="share of attempts both scored"),
                      yaxis=dict(automargin=True))
    return fig
