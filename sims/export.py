"""A run as files: its per-event records as CSV rows, and its params and summary as JSON.

One table per model, one row per recorded event, times in seconds as the model keeps them.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json


def _hot_shard(result) -> tuple[tuple[str, ...], list[tuple]]:
    return (("key", "shard", "arrived_s", "started_s", "ended_s"), list(result.jobs))


def _concurrency_pool(result) -> tuple[tuple[str, ...], list[tuple]]:
    rows = [(lane.name, call + 1, state, start, end)
            for lane in (result.fanout, result.pool) for call, state, start, end in lane.segments]
    return ("lane", "call", "state", "start_s", "end_s"), rows


def _retry_storm(result) -> tuple[tuple[str, ...], list[tuple]]:
    return ("time_s", "process", "kind", "to_provider", "ok"), list(result.calls)


def _platform(result) -> tuple[tuple[str, ...], list[tuple]]:
    names = result.jobs[0]._fields if result.jobs else ("tenant",)
    return names, [tuple(job) for job in result.jobs]


def _partitions(result) -> tuple[tuple[str, ...], list[tuple]]:
    parts = len(result.partition_offered)
    header = ("time_s", "replay_left", *(f"backlog_p{i}" for i in range(parts)))
    return header, [(t, left, *backlog) for t, left, backlog
                    in zip(result.times_s, result.replay_left, result.fresh_backlog)]


def _cache_stampede(result) -> tuple[tuple[str, ...], list[tuple]]:
    return ("key", "requested_s", "started_s", "ended_s"), list(result.queries)


def _retry_chain(result) -> tuple[tuple[str, ...], list[tuple]]:
    return ("request", "started_s", "ended_s", "user_waiting"), list(result.attempts)


def _leases(result) -> tuple[tuple[str, ...], list[tuple]]:
    return ("landed_s", "node", "token", "accepted"), list(result.writes)


EVENT_TABLES = {"hot_shard": _hot_shard, "concurrency_pool": _concurrency_pool,
                "retry_storm": _retry_storm, "platform": _platform, "partitions": _partitions,
                "cache_stampede": _cache_stampede, "retry_chain": _retry_chain,
                "leases": _leases}


def events(model: str, result) -> tuple[tuple[str, ...], list[tuple]]:
    """(column names, rows) of the run's per-event records."""
    return EVENT_TABLES[model](result)


def events_csv(model: str, result) -> str:
    header, rows = events(model, result)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def summary_json(model: str, result, summary: dict) -> str:
    """Model, seed, every parameter and the summary: enough to rerun and to check the run."""
    return json.dumps({"model": model, "seed": result.seed, "params": dataclasses.asdict(result.params),
                       "summary": summary}, indent=2, sort_keys=True)
