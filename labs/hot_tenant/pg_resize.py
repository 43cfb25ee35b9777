"""A retry across a 4 -> 8 bucket change, stored twice on PostgreSQL: keyed by bucket, and by event id.

The client lost its acknowledgements and forgot each event's route, so it retries under today's layout.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import psycopg

from labs.hot_tenant.router import bucket_for
from labs.postgres.harness import check_range, race, scratch_schema

RESIZE_TABLES = (
    # Unguarded: the bucket is part of the key, so one event in two buckets is two rows.
    """CREATE TABLE events_by_bucket (
        tenant_id text NOT NULL, bucket integer NOT NULL, event_id text NOT NULL,
        routing_version integer NOT NULL,
        PRIMARY KEY (tenant_id, bucket, event_id))""",
    # Guarded: the event id alone is the key, the deduplication record whatever the route.
    """CREATE TABLE events_by_id (
        tenant_id text NOT NULL, event_id text NOT NULL,
        bucket integer NOT NULL, routing_version integer NOT NULL,
        PRIMARY KEY (tenant_id, event_id))""",
)
WRITE = {
    "events_by_bucket": """INSERT INTO events_by_bucket VALUES (%s, %s, %s, %s)
                           ON CONFLICT (tenant_id, bucket, event_id) DO NOTHING""",
    "events_by_id": """INSERT INTO events_by_id VALUES (%s, %s, %s, %s)
                       ON CONFLICT (tenant_id, event_id) DO NOTHING""",
}
TENANT = "acme"


@dataclass(frozen=True)
class ResizeParams:
    events: int = 200
    buckets_before: int = 4
    buckets_after: int = 8
    retry_workers: int = 4           # retries arrive from several client threads at once

    def __post_init__(self) -> None:
        check_range("events", self.events, 1, 20_000)
        check_range("buckets_before", self.buckets_before, 1, 1_024)
        check_range("buckets_after", self.buckets_after, 1, 1_024)
        check_range("retry_workers", self.retry_workers, 1, 16)


@dataclass(frozen=True)
class ResizeResult:
    params: ResizeParams
    moved: int                       # events whose bucket differs between the two layouts
    rows_by_bucket: int              # rows in the bucket-keyed table after the retries
    rows_by_id: int                  # rows in the event-id-keyed table after the retries

    @property
    def duplicates_by_bucket(self) -> int:
        return self.rows_by_bucket - self.params.events

    @property
    def duplicates_by_id(self) -> int:
        return self.rows_by_id - self.params.events


def _write_all(conn: psycopg.Connection, ids: list[str], buckets: int, version: int) -> None:
    rows = [(e, bucket_for(TENANT, e, buckets)) for e in ids]
    with conn.cursor() as cur:
        cur.executemany(WRITE["events_by_bucket"], [(TENANT, bucket, e, version) for e, bucket in rows])
        cur.executemany(WRITE["events_by_id"], [(TENANT, e, bucket, version) for e, bucket in rows])


def run_resize_retry(url: str, params: ResizeParams = ResizeParams()) -> ResizeResult:
    """Write every event under layout 1, change the bucket count, retry every event under layout 2."""
    p = params
    ids = [f"evt-{k:05d}" for k in range(p.events)]
    with scratch_schema(url, "resize") as scratch:
        scratch.execute_script(RESIZE_TABLES)
        with scratch.connect() as conn:
            _write_all(conn, ids, p.buckets_before, 1)

        def retry(index: int, conn: psycopg.Connection, barrier: threading.Barrier) -> None:
            barrier.wait()
            _write_all(conn, ids[index::p.retry_workers], p.buckets_after, 2)

        race(scratch, p.retry_workers, retry)
        with scratch.connect() as conn:
            by_bucket, by_id = conn.execute("SELECT (SELECT count(*) FROM events_by_bucket), "
                                            "(SELECT count(*) FROM events_by_id)").fetchone()
    moved = sum(bucket_for(TENANT, e, p.buckets_before) != bucket_for(TENANT, e, p.buckets_after) for e in ids)
    return ResizeResult(p, moved, by_bucket, by_id)
