"""Plotly figures for the PostgreSQL lab: each run's outcome with the reader's guess marked on it.

Pure builders (a lab result and the guess in, a figure out), so tests can read the traces.
"""
from __future__ import annotations

from collections import Counter

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from labs.hot_tenant.pg_resize import ResizeResult
from labs.postgres.experiments import BudgetResult, CapRaceResult, FairClaimResult, RefundResult, SnapshotResult
from labs.postgres.ledger import PATHS

HOT = "#d62728"
CALM = "#1f77b4"
LIMIT = "#2ca02c"
GUESS = "#111111"
PATH_COLOURS = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b")
HEIGHT = 380


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=HEIGHT,
                      margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1.0, xanchor="right"))
    return fig


def _guess_marker(fig: go.Figure, x: object, y: float, label: str | None = None, **where) -> None:
    """The reader's locked guess as a wide black bar mark, named in the legend."""
    fig.add_scatter(x=[x], y=[y], mode="markers", name=f"your guess ({label or f'{y:,.6g}'})",
                    marker=dict(symbol="line-ew", size=46, color=GUESS, line=dict(width=4, color=GUESS)),
                    hovertemplate="your guess: %{y:,.6g}<extra></extra>", **where)


def fair_claim_figure(result: FairClaimResult, guess: float) -> go.Figure:
    """Running jobs per tenant after the slots fill, FIFO beside round robin; the flood is first."""
    names = ["flood"] + [f"T{t + 1}" for t in range(1, len(result.fifo))]
    fig = go.Figure()
    fig.add_bar(x=names, y=list(result.fifo), name="FIFO claim", marker_color=HOT)
    fig.add_bar(x=names, y=list(result.fair), name="round robin with a cap", marker_color=CALM)
    _guess_marker(fig, names[0], guess)
    fig.update_layout(barmode="group", bargap=0.15)
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, f"{sum(result.fifo)} worker slots filled by {result.params.workers} concurrent workers",
                   "tenant", "running jobs")


def cap_race_figure(result: CapRaceResult, guess: float) -> go.Figure:
    """How many jobs were running when the workers stopped, run by run, for both caps."""
    cap = result.params.cap
    fig = go.Figure()
    for label, values, colour in (("count in a subquery", result.counted, HOT),
                                  ("counter row", result.counter, CALM)):
        counts = Counter(values)
        xs = sorted(counts)
        fig.add_bar(x=xs, y=[counts[x] for x in xs], name=label, marker_color=colour)
    fig.add_vline(x=cap, line=dict(color=LIMIT, width=2), annotation_text=f"cap {cap}",
                  annotation_position="top left")
    fig.add_vline(x=guess, line=dict(color=GUESS, dash="dash", width=2), annotation_text="your guess",
                  annotation_position="top right")
    fig.update_layout(barmode="group")
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(rangemode="tozero", dtick=max(1, len(result.counted) // 5))
    return _layout(fig, f"{len(result.counted)} races of {result.params.workers} workers against a cap of {cap}",
                   "jobs running when every worker stopped", "runs")


def budget_figure(result: BudgetResult, guess: float) -> go.Figure:
    """Provider calls made and dollars spent under each strategy, against what the balance covers."""
    p = result.params
    names = ["check, then call", "reserve, call, settle"]
    outcomes = (result.check, result.reserve)
    fig = go.Figure()
    fig.add_bar(x=names, y=[o.calls for o in outcomes], marker_color=[HOT, CALM], showlegend=False,
                text=[f"{o.calls} calls, ${o.spent_cents / 100:,.2f} spent" for o in outcomes],
                textposition="outside")
    fig.add_hline(y=result.affordable, line=dict(color=LIMIT, dash="dot"),
                  annotation_text=f"${p.balance_cents / 100:,.2f} covers {result.affordable}",
                  annotation_position="top left")
    _guess_marker(fig, names[0], guess)
    fig.update_yaxes(rangemode="tozero", range=[0, max(p.jobs, guess, result.affordable) * 1.2])
    return _layout(fig, f"{p.jobs} jobs at once, ${p.estimate_cents / 100:,.2f} a call, "
                        f"${p.balance_cents / 100:,.2f} left", "", "provider calls")


def refund_figure(result: RefundResult, guess: float) -> go.Figure:
    """Refunds paid, stacked by the recovery path that paid them, with and without the key."""
    names = ["UNIQUE (job_id, kind)", "check first, no key"]
    fig = go.Figure()
    for colour, path in zip(PATH_COLOURS, PATHS):
        paid = [dict(result.keyed_by_path)[path], dict(result.plain_by_path)[path]]
        fig.add_bar(x=names, y=paid, name=path, marker_color=colour)
    fig.add_hline(y=result.params.failed_jobs, line=dict(color=LIMIT, dash="dot"),
                  annotation_text="one per failed job", annotation_position="top left")
    _guess_marker(fig, names[1], guess)
    fig.update_layout(barmode="stack")
    fig.update_yaxes(rangemode="tozero")
    return _layout(fig, f"{result.params.failed_jobs} failed jobs, each reached by all four paths at once",
                   "", "refunds paid")


def snapshot_figure(result: SnapshotResult, guess: float) -> go.Figure:
    """Buffers and time for one claim with the snapshot held and after it ends (log scales)."""
    names = ["snapshot held", "released + VACUUM"]
    probes = (result.held, result.released)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("buffers one claim touches", "claim time, ms (median)"))
    fig.add_bar(x=names, y=[max(p.buffers, 1) for p in probes], marker_color=[HOT, CALM], showlegend=False,
                text=[f"{p.buffers:,}" for p in probes], textposition="outside", row=1, col=1)
    fig.add_bar(x=names, y=[p.median_ms for p in probes], marker_color=[HOT, CALM], showlegend=False,
                text=[f"{p.median_ms:.3g}" for p in probes], textposition="outside", row=1, col=2)
    _guess_marker(fig, names[0], result.released.median_ms * guess, f"{guess:,.6g}× slower", row=1, col=2)
    fig.update_yaxes(type="log", dtick=1, row=1, col=1)          # powers of ten only: readable ticks
    fig.update_yaxes(type="log", dtick=1, row=1, col=2)
    fig.update_layout(title=f"{result.held.dead_kept:,} dead job rows kept by the held snapshot",
                      height=HEIGHT, margin=dict(l=10, r=10, t=80, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.08, x=1.0, xanchor="right"))
    return fig


def resize_figure(result: ResizeResult, guess: float) -> go.Figure:
    """Extra copies left by retrying every event after the bucket count changed."""
    p = result.params
    names = ["keyed by (bucket, event id)", "keyed by event id"]
    dups = [result.duplicates_by_bucket, result.duplicates_by_id]
    fig = go.Figure()
    fig.add_bar(x=names, y=dups, marker_color=[HOT, CALM], showlegend=False,
                text=[f"{d:,} duplicates" for d in dups], textposition="outside")
    _guess_marker(fig, names[0], guess)
    fig.update_yaxes(rangemode="tozero", range=[0, max(dups + [guess, 1]) * 1.25])
    return _layout(fig, f"{p.events} events retried after {p.buckets_before} → {p.buckets_after} buckets",
                   "", "extra rows")
