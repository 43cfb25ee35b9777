"""Plotly figures for the instructor board, built from the cohort reports' DataFrames.

Handles, cohorts and comments reach Plotly html-escaped: its labels understand a few tags.
"""
from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go

from drills.reports.aggregates import LEVEL_VALUE
from drills.reports.grading_key import DrillKey
from ui.drill.results import percent_text, percent_ticks, wrap_text

LEVEL_COLOURS = ((0.0, "#c62828"), (0.5, "#f9a825"), (1.0, "#2e7d32"))
OVERRIDE_MARK = "†"
SKILL_LABEL_WIDTH = 26   # characters per line of a skill name beside the calibration bars


SHORT_PROMPT = 45


def short_prompt(text: str, limit: int = SHORT_PROMPT) -> str:
    """The first `limit` characters of a prompt, cut at a word and marked with an ellipsis."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,;:.?") + "…"


def candidate_label(handle: str, cohort: str) -> str:
    return f"{handle} ({cohort})" if cohort else handle


def skills_heatmap(levels: pd.DataFrame, key: DrillKey, order: list[tuple[str, str]],
                   level_names: dict[str, str]) -> go.Figure:
    """Rows: candidates in `order` (handle, cohort); columns: the drill's skills, cells named with the drill's
    own `level_names` (strong / ok / weak -> e.g. Staff / Senior / Junior); † marks an override."""
    names = dict(zip(key.skill_ids, key.skill_names))
    rows = [candidate_label(h, c) for h, c in order]
    index = {pair: i for i, pair in enumerate(order)}
    column = {s: j for j, s in enumerate(key.skill_ids)}
    z = [[None] * len(key.skill_ids) for _ in rows]
    text = [[""] * len(key.skill_ids) for _ in rows]
    hover = [[f"{html.escape(row)}: no scored attempt yet"] * len(key.skill_ids) for row in rows]
    for r in levels.itertuples(index=False):
        i, j = index.get((r.handle, r.cohort)), column.get(r.skill_id)
        if i is None or j is None:
            continue
        z[i][j] = LEVEL_VALUE[r.level] / 2
        name = html.escape(level_names[r.level])
        text[i][j] = name + (f" {OVERRIDE_MARK}" if r.overridden else "")
        who = "instructor override: " + html.escape(str(r.reason)) if r.overridden else "self-scored"
        hover[i][j] = f"{html.escape(rows[i])}<br>{html.escape(names[r.skill_id])}: {name}<br>{who}"
    fig = go.Figure(go.Heatmap(
        z=z, x=[names[s] for s in key.skill_ids], y=[html.escape(r) for r in rows], text=text,
        texttemplate="%{text}", hovertext=hover, hoverinfo="text", colorscale=LEVEL_COLOURS, zmin=0, zmax=1,
        showscale=False, xgap=2, ygap=2,
    ))
    fig.update_layout(height=140 + 26 * len(rows), margin=dict(l=10, r=10, t=40, b=10),
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top"))
    return fig


def question_figure(errors: pd.DataFrame, sample: pd.DataFrame, labels: dict[str, str] | None = None) -> go.Figure:
    """Each numeric question's guesses as % of the truth: a box (5-95% whiskers), sampled points, truth at 100%.

    Rows are labelled with `labels` (a short prompt per question id); the id stays in the hover text.
    """
    ranked = errors.sort_values("median_abs_error", ascending=False)
    ids = list(ranked["question_id"])
    labels = labels or {}
    fig = go.Figure(go.Box(
        y=ids, q1=ranked["p25"], median=ranked["p50"], q3=ranked["p75"], lowerfence=ranked["p5"],
        upperfence=ranked["p95"], orientation="h", name="cohort", marker_color="#1e88e5", fillcolor="rgba(30,136,229,0.25)",
        hoverinfo="x+y",
    ))
    if not sample.empty:
        # Guesses at or below zero cannot sit on the log axis; leaving them out keeps one odd guess
        # from flattening the chart for the whole cohort (the table still counts them).
        sample = sample[sample["pct"] > 0]
        # A numeric colour scale: Plotly validates a list of colour strings point by point (~0.5 s here).
        fig.add_trace(go.Scatter(
            x=sample["pct"], y=sample["question_id"], mode="markers", name="guesses (sample)",
            marker=dict(size=6, color=sample["score"].fillna(-1), cmin=-1, cmax=1, opacity=0.6,
                        colorscale=[[0, "#607d8b"], [0.49, "#607d8b"], [0.5, "#c62828"], [0.74, "#c62828"],
                                    [0.75, "#f9a825"], [0.99, "#f9a825"], [1, "#2e7d32"]]),
            hovertext=[html.escape(str(h)) for h in sample["handle"]], hoverinfo="text+x",
        ))
    guesses = list(sample.get("pct", []))
    lows = _drawn(ranked["p5"], guesses)
    log = bool(lows) and min(lows) > 0
    # The truth as a trace, not a shape: shapes and autorange disagree about log axes.
    fig.add_trace(go.Scatter(x=[100] * len(ids), y=ids, mode="lines", name="truth", hoverinfo="skip",
                             line=dict(color="#37474f", dash="dash", width=2)))
    fig.add_annotation(x=2.0 if log else 100, y=ids[0], text="truth", showarrow=False, yshift=18)
    if log:
        # Labelled ticks: Plotly's own log ticks read "3 4 5 … 9 100 2 3", so 30% showed as "3".
        ticks = log_percent_ticks(min(lows + [100]), max(_drawn(ranked["p95"], guesses) + [100]))
        fig.update_xaxes(title="guess as % of the truth (log scale)", type="log", tickmode="array",
                         tickvals=ticks, ticktext=[percent_text(t) for t in ticks])
    else:
        fig.update_xaxes(title="guess as % of the truth", type="linear", ticksuffix="%")
    fig.update_layout(height=120 + 32 * len(ids), margin=dict(l=10, r=10, t=30, b=40), showlegend=False,
                      yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=ids, tickmode="array",
                                 tickvals=ids, ticktext=[html.escape(labels.get(q, q)) for q in ids]))
    return fig


def _nan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _drawn(*columns) -> list[float]:
    """The values of `columns` that can be drawn: neither missing nor NaN."""
    return [v for column in columns for v in column if v is not None and not _nan(v)]


def time_figure(spent: pd.DataFrame) -> go.Figure:
    medians = spent["median_min"].fillna(0)
    fig = go.Figure([
        go.Bar(name="suggested pacing", x=spent["title"], y=spent["suggested_min"], marker_color="#b0bec5"),
        go.Bar(name="cohort median", x=spent["title"], y=medians, marker_color="#1e88e5",
               error_y=dict(type="data", symmetric=False, array=(spent["p75_min"].fillna(0) - medians).clip(lower=0),
                            arrayminus=(medians - spent["p25_min"].fillna(0)).clip(lower=0), color="#0d47a1")),
    ])
    fig.update_layout(barmode="group", height=340, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="minutes",
                      legend=dict(orientation="h", y=1.12))
    return fig


def log_percent_ticks(low: float, high: float) -> list[float]:
    """Ticks for a log axis of percentages from `low` to `high` (both > 0): 1-2-5 steps over a short span,
    1-3 steps (10%, 30%, 100%, 300%) over a longer one, so every decade keeps a tick either side of 100%."""
    low_log, high_log = math.log10(low), math.log10(high)
    pad = max(0.05, 0.04 * (high_log - low_log))
    return percent_ticks(low_log - pad, high_log + pad, long_steps=(1, 3))


def wrap_label(text: str, width: int = SKILL_LABEL_WIDTH) -> str:
    """A label broken into lines of about `width` characters (Plotly's <br>), the text escaped."""
    return wrap_text(str(text), width)


def calibration_figure(by_skill: pd.DataFrame) -> go.Figure:
    """Per skill, the share of 80% ranges that held: horizontal bars so long skill names sit level and
    wrapped; each bar's "held of given" count sits inside its base (past the end of a bar too short to hold
    it), clear of the 80% line and its note, which sits above the plot."""
    shown = by_skill[by_skill["ranges"] > 0]
    labels = [wrap_label(s) for s in shown["skill"]]
    fig = go.Figure(go.Bar(
        y=labels, x=100 * shown["hit_rate"], orientation="h", marker_color="#7e57c2",
        text=[f"{h} of {r}" for h, r in zip(shown["hits"], shown["ranges"])], textposition="auto",
        insidetextanchor="start", insidetextfont=dict(color="white"), outsidetextfont=dict(color="#37474f"),
        cliponaxis=False,
        hovertemplate="%{y}: %{x:.0f}% held (%{text})<extra></extra>",
    ))
    fig.add_vline(x=80, line_dash="dash", line_color="#37474f")
    # The note sits above the plot, over the line, where no bar or label can be.
    fig.add_annotation(x=80, y=1, yref="paper", yanchor="bottom", text="80% claimed", showarrow=False,
                       font=dict(color="#37474f"))
    lines = sum(label.count("<br>") + 1 for label in labels)
    fig.update_layout(height=90 + 22 * lines + 18 * len(labels), margin=dict(l=10, r=10, t=30, b=10),
                      xaxis=dict(title="ranges that held (%)", range=[0, 104], ticksuffix="%", dtick=20),
                      yaxis=dict(autorange="reversed", automargin=True))
    return fig


def calibration_histogram(board: pd.DataFrame) -> go.Figure:
    rates = 100 * board["hit_rate"].dropna()
    fig = go.Figure(go.Histogram(x=rates, xbins=dict(start=0, end=100.001, size=10), marker_color="#7e57c2"))
    fig.add_vline(x=80, line_dash="dash", line_color="#37474f", annotation_text="80%",
                  annotation_position="top left")
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=30, b=10), bargap=0.05,
                      xaxis=dict(title="a candidate's ranges that held (%)", ticksuffix="%"), yaxis_title="candidates")
    return fig
