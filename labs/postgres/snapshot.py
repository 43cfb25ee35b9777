"""A held snapshot keeps dead job rows: the claim query has to step over them until it is released.

One server stands in for the primary and the replica: a REPEATABLE READ transaction left open
holds back vacuum exactly as a replica's long query does through hot_standby_feedback. Jobs are
churned (inserted, then deleted as if finished) while the snapshot is held, VACUUM is run, and the
claim query is measured; then the snapshot is released, VACUUM runs again and the claim is measured
once more. Buffers and rows come from EXPLAIN (ANALYZE, BUFFERS) and VACUUM VERBOSE: those counts
are deterministic, the milliseconds are not. Autovacuum is off for the table so only our VACUUMs act.
A long transaction elsewhere in the same database would hold vacuum back too, so run this one alone.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

import psycopg

from labs.postgres.harness import check_range, scratch_schema

SNAPSHOT_TABLES = (
    """CREATE TABLE jobs (
        id bigserial PRIMARY KEY,
        status text NOT NULL DEFAULT 'queued',
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        payload text NOT NULL DEFAULT '')
       WITH (autovacuum_enabled = false)""",
    "CREATE INDEX jobs_queue_head ON jobs (created_at, id) WHERE status = 'queued'",
)

CLAIM = "SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, id FETCH FIRST 1 ROW ONLY FOR UPDATE SKIP LOCKED"
CHURN = """INSERT INTO jobs (created_at, payload)
           SELECT now() - interval '1 hour' + i * interval '1 ms', repeat('x', 40)
           FROM generate_series(1, %s) AS i"""
# Live work submitted after the churn, so it sits behind every dead entry at the head of the index.
ENQUEUE_LIVE = """INSERT INTO jobs (created_at) SELECT now() + i * interval '1 ms' FROM generate_series(1, %s) AS i"""
LIVE_JOBS = 5
NOT_REMOVABLE = re.compile(r"(\d+) are dead but not yet removable")


@dataclass(frozen=True)
class SnapshotParams:
    """Finished jobs churned through the queue while (or without) an old snapshot is held."""

    churn: int = 20_000
    repeats: int = 15                # claim timings per phase; the median is reported

    def __post_init__(self) -> None:
        check_range("churn", self.churn, 100, 1_000_000)
        check_range("repeats", self.repeats, 1, 200)


@dataclass(frozen=True)
class ClaimProbe:
    """One phase's view of the claim query."""

    dead_kept: int                   # VACUUM VERBOSE: dead row versions it could not remove
    buffers: int                     # shared buffers the claim touched (hit + read)
    index_rows_removed: int          # heap rows the claim fetched and threw away (not visible)
    median_ms: float                 # claim execution time (EXPLAIN ANALYZE), median of repeats


@dataclass(frozen=True)
class SnapshotResult:
    params: SnapshotParams
    held: ClaimProbe
    released: ClaimProbe

    @property
    def slowdown(self) -> float:
        return self.held.median_ms / max(self.released.median_ms, 1e-6)


def _vacuum(conn: psycopg.Connection) -> int:
    """VACUUM VERBOSE the jobs table; return how many dead versions it had to keep."""
    notes: list[str] = []
    conn.add_notice_handler(lambda diag: notes.append(diag.message_primary or ""))
    conn.execute("VACUUM (VERBOSE) jobs")
    kept = [int(m.group(1)) for note in notes for m in NOT_REMOVABLE.finditer(note)]
    return sum(kept)


def _walk(node: dict) -> list[dict]:
    return [node] + [n for child in node.get("Plans", []) for n in _walk(child)]


def _probe_claim(conn: psycopg.Connection, repeats: int) -> tuple[int, int, float]:
    """EXPLAIN ANALYZE the claim inside a rolled-back transaction, ``repeats`` times."""
    times, buffers, removed = [], 0, 0
    for _ in range(repeats):
        with conn.transaction(force_rollback=True):
            (plan,) = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {CLAIM}").fetchone()[0]
        top = plan["Plan"]
        times.append(plan["Execution Time"])
        buffers = top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
        removed = sum(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0)
                      for n in _walk(top))
    return buffers, removed, statistics.median(times)


def _phase(conn: psycopg.Connection, p: SnapshotParams) -> ClaimProbe:
    dead = _vacuum(conn)
    buffers, removed, median_ms = _probe_claim(conn, p.repeats)
    return ClaimProbe(dead, buffers, removed, median_ms)


def run_held_snapshot(url: str, params: SnapshotParams = SnapshotParams()) -> SnapshotResult:
    p = params
    with scratch_schema(url, "snap") as scratch:
        scratch.execute_script(SNAPSHOT_TABLES)
        with scratch.connect() as conn, scratch.connect(autocommit=False) as holder:
            # The replica's long export: a snapshot taken now, kept until we let it go.
            holder.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            holder.execute("SELECT count(*) FROM jobs").fetchone()
            conn.execute(CHURN, [p.churn])
            conn.execute("DELETE FROM jobs")          # every churned job finished and was removed
            conn.execute(ENQUEUE_LIVE, [LIVE_JOBS])
            held = _phase(conn, p)
            holder.rollback()                          # the export ends
            released = _phase(conn, p)
    return SnapshotResult(p, held, released)
