"""Plotly figures for the hot-tenant page: bucket layouts, read cost, owner fencing, partition load.

Pure builders (lab or sim data in, a figure out) so the page stays thin and tests can read traces.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import plotly.graph_objects as go

from labs.hot_tenant import Page, StreamEvent
from labs.hot_tenant.playground import OwnerAttempt
from sims import partitions
from sims.partitions import Result
from ui.chart_notes import empty_counts

VERSION_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
OWNER_COLOURS = {"A": "#1f77b4", "B": "#d62728"}
REFUSED_COLOUR = "#7f7f7f"
PARTITION_COLOURS = ("#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
HEIGHT = 320


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, *, height: int = HEIGHT) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, height=height,
                      margin=dict(l=10, r=10, t=60, b=10),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1.0, xanchor="right"))
    return fig


def _version_colour(version: int) -> str:
    return VERSION_COLOURS[(version - 1) % len(VERSION_COLOURS)]


# -- the event-store lab ----------------------------------------------------------------------
def bucket_figure(counts: dict[tuple[int, int], int], buckets_by_version: dict[int, int]) -> go.Figure:
    """Events per bucket, one bar group per routing version: both layouts side by side."""
    fig = go.Figure()
    for version, buckets in sorted(buckets_by_version.items()):
        fig.add_bar(x=[f"v{version} · b{b}" for b in range(buckets)],
                    y=[counts.get((version, b), 0) for b in range(buckets)],
                    name=f"version {version} ({buckets} buckets)", marker_color=_version_colour(version))
    fig.update_yaxes(rangemode="tozero")           # a count: never a negative axis, even with no events
    if not any(counts.values()):
        empty_counts(fig, "No events stored yet: write a burst to fill the buckets.")
    return _layout(fig, "Stored events by (routing version, bucket)", "bucket", "events")


def read_cost_figure(bounded: Page, naive: Page) -> go.Figure:
    """Rows each read pulled from the buckets against the rows it returned."""
    names = ["bounded merge", "naive: limit from every bucket"]
    fig = go.Figure()
    fig.add_bar(x=names, y=[bounded.candidates_read, naive.candidates_read], name="candidates read",
                marker_color="#ff7f0e", text=[bounded.candidates_read, naive.candidates_read],
                textposition="outside")
    fig.add_bar(x=names, y=[len(bounded.events), len(naive.events)], name="events returned",
                marker_color="#2ca02c", text=[len(bounded.events), len(naive.events)], textposition="outside")
    fig.update_layout(barmode="group")
    top = max(bounded.candidates_read, naive.candidates_read, 1)
    fig.update_yaxes(range=[0, top * 1.2])
    return _layout(fig, f"Cost of one page across {bounded.streams} bucket streams", "", "rows")


def stream_figure(events: Sequence[StreamEvent], attempts: Sequence[OwnerAttempt] = (), *,
                  title: str = "The ordered stream: one mark per sequence number") -> go.Figure:
    """Sequence numbers coloured by the owner that wrote them; refused appends as grey crosses.

    A refusal is drawn at the number it would have taken: one past the stream's head at the time.
    """
    fig = go.Figure()
    for owner in sorted({e.owner_id for e in events}):
        mine = [e for e in events if e.owner_id == owner]
        fig.add_scatter(x=[e.seq for e in mine], y=[f"epoch {e.epoch}" for e in mine], mode="markers",
                        name=f"owner {owner}", marker=dict(size=11, symbol="square",
                                                           color=OWNER_COLOURS.get(owner, "#555")),
                        hovertext=[e.payload for e in mine])
    refused = [a for a in attempts if a.action == "append" and not a.ok and a.epoch > 0]
    if refused:
        fig.add_scatter(x=[a.head_seq + 1 for a in refused], y=[f"epoch {a.epoch}" for a in refused], mode="markers",
                        name="refused append", marker=dict(size=14, symbol="x", color=REFUSED_COLOUR),
                        hovertext=[a.detail for a in refused])
    fig.update_yaxes(type="category", categoryorder="category ascending")
    fig.update_xaxes(rangemode="tozero")
    return _layout(fig, title, "sequence number", "", height=260)


# -- the partition simulation ------------------------------------------------------------------
def _partition_name(idx: int) -> str:
    return chr(ord("A") + idx) if idx < 26 else f"P{idx}"


def partition_load_figure(result: Result) -> go.Figure:
    """Offered load per partition against its capacity, with the fleet average that hides the skew."""
    p = result.params
    seconds = partitions.run_duration_s(result)
    names = [_partition_name(i) for i in range(p.partitions)]
    rates = [offered / seconds for offered in result.partition_offered]
    colours = ["#d62728" if r > p.partition_capacity + 1e-9 else "#1f77b4" for r in rates]
    fig = go.Figure()
    fig.add_bar(x=names, y=rates, marker_color=colours, name="offered units/s",
                text=[f"{r:,.1f}" for r in rates], textposition="outside")
    fig.add_hline(y=p.partition_capacity, line_dash="dash", line_color="#333",
                  annotation_text=f"capacity {p.partition_capacity:,.0f} units/s", annotation_position="top right")
    average_pct = partitions.fleet_utilisation_pct(result)
    average = average_pct / 100 * p.partition_capacity
    fig.add_hline(y=average, line_dash="dot", line_color="#2ca02c",
                  annotation_text=f"fleet average {average:,.1f} units/s ({average_pct:.1f}% of capacity)",
                  annotation_position="bottom right")
    fig.update_yaxes(range=[0, max(rates + [p.partition_capacity]) * 1.25])
    return _layout(fig, "Offered load by partition", "partition", "units/s")


def backlog_figure(result: Result, upto: int | None = None) -> go.Figure:
    """Unserved fresh work per partition and the replay still pending, up to tick ``upto``."""
    end = len(result.times_s) if upto is None else max(1, min(upto, len(result.times_s)))
    times = result.times_s[:end]
    fig = go.Figure()
    for idx in range(result.params.partitions):
        series = [row[idx] for row in result.fresh_backlog[:end]]
        if max(row[idx] for row in result.fresh_backlog) <= 0:
            continue  # a partition that never falls behind would only draw a line along zero
        fig.add_scatter(x=times, y=series, name=f"fresh backlog on {_partition_name(idx)}",
                        line_color=PARTITION_COLOURS[idx % len(PARTITION_COLOURS)])
    fig.add_scatter(x=times, y=result.replay_left[:end], name="replay still pending",
                    line=dict(color="#7f7f7f", dash="dash"))
    floor = partitions.replay_drain_floor_s(result.params)
    if floor is not None and 0 < floor <= result.times_s[-1]:
        fig.add_vline(x=floor, line_dash="dot", line_color="#2ca02c",
                      annotation_text=f"ideal drain {floor:,.0f} s", annotation_position="top right")
    top = max([result.params.pending] + [sum(row) for row in result.fresh_backlog] + [1.0])
    fig.update_xaxes(range=[0, result.times_s[-1]])
    fig.update_yaxes(range=[0, top * 1.1])
    return _layout(fig, "Backlog over time", "seconds", "units")


def backlog_frames(result: Result, frames: int = 24) -> Iterator[go.Figure]:
    """The backlog chart drawn progressively, for the play animation."""
    ticks = len(result.times_s)
    for k in range(1, frames + 1):
        yield backlog_figure(result, upto=max(1, round(ticks * k / frames)))
