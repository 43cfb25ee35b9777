"""The fenced ordered stream on PostgreSQL, raced by two owners with no turnstile, beside DuckDB's.

Row locks do the serialising: a takeover and an append both write the stream's owner row, so one
waits for the other, and READ COMMITTED re-checks the epoch against the row it finally locks.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from labs.hot_tenant.owner import MAX_BATCH, Lease, LeaseHeld, OrderedStream, StaleOwner, StreamEvent, StreamHead
from labs.hot_tenant.race import RaceReport, race_two_owners
from labs.postgres.harness import Scratch, scratch_schema

PG_SCHEMA = (
    """CREATE TABLE stream_owner (
        tenant_id text PRIMARY KEY,
        owner_id text,
        epoch bigint NOT NULL,
        last_seq bigint NOT NULL,
        lease_until double precision NOT NULL)""",
    """CREATE TABLE stream_events (
        tenant_id text NOT NULL,
        seq bigint NOT NULL,
        epoch bigint NOT NULL,
        owner_id text NOT NULL,
        payload text NOT NULL,
        PRIMARY KEY (tenant_id, seq))""",
)

# The fence: the epoch test and the sequence bump are one UPDATE of the owner row. An append that
# waited behind a takeover's lock re-reads the committed row, finds a newer epoch and matches nothing.
BUMP_SEQUENCE = """UPDATE stream_owner SET last_seq = last_seq + %(n)s
                   WHERE tenant_id = %(tenant)s AND epoch = %(epoch)s AND owner_id = %(owner)s
                   RETURNING last_seq"""


class PgOrderedStream:
    """The same contract as ``OrderedStream`` (acquire, append, head, read) on PostgreSQL.

    Each thread that touches the stream gets its own connection; ``close`` closes them all.
    """

    def __init__(self, scratch: Scratch, *, clock=time.time):
        self.scratch = scratch
        self.clock = clock
        self._local = threading.local()
        self._opened: list[psycopg.Connection] = []
        self._lock = threading.Lock()
        scratch.execute_script(PG_SCHEMA)

    def _conn(self) -> psycopg.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self.scratch.connect()
            with self._lock:
                self._opened.append(conn)
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()

    def head(self, tenant_id: str) -> StreamHead:
        row = self._conn().execute("SELECT owner_id, epoch, last_seq, lease_until FROM stream_owner "
                                   "WHERE tenant_id = %s", [tenant_id]).fetchone()
        return StreamHead(*row) if row else StreamHead(None, 0, 0, 0.0)

    def acquire(self, tenant_id: str, owner_id: str, *, ttl_s: float = 10.0, takeover: bool = False) -> Lease:
        if not owner_id:
            raise ValueError("owner_id must not be empty")
        conn = self._conn()
        with conn.transaction():
            conn.execute("INSERT INTO stream_owner VALUES (%s, NULL, 0, 0, 0) ON CONFLICT DO NOTHING", [tenant_id])
            current, epoch, until = conn.execute(
                "SELECT owner_id, epoch, lease_until FROM stream_owner WHERE tenant_id = %s FOR UPDATE",
                [tenant_id]).fetchone()
            now = self.clock()
            renewing = current == owner_id and epoch > 0
            if not renewing and current is not None and until > now and not takeover:
                raise LeaseHeld(f"{current} holds the lease on {tenant_id} for {until - now:.1f}s more")
            new_epoch = epoch if renewing else epoch + 1
            conn.execute("UPDATE stream_owner SET owner_id = %s, epoch = %s, lease_until = %s WHERE tenant_id = %s",
                         [owner_id, new_epoch, now + ttl_s, tenant_id])
        return Lease(tenant_id, owner_id, new_epoch, now + ttl_s)

    def append(self, lease: Lease, payloads: Sequence[str]) -> list[int]:
        payloads = list(payloads)
        if not 1 <= len(payloads) <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} events, got {len(payloads)}")
        conn = self._conn()
        with conn.transaction():
            bumped = conn.execute(BUMP_SEQUENCE, {"n": len(payloads), "tenant": lease.tenant_id,
                                                  "epoch": lease.epoch, "owner": lease.owner_id}).fetchone()
            if bumped is not None:
                first = bumped[0] - len(payloads) + 1
                conn.execute("""INSERT INTO stream_events (tenant_id, seq, epoch, owner_id, payload)
                                SELECT %s, %s + ordinality - 1, %s, %s, payload
                                FROM unnest(%s::text[]) WITH ORDINALITY AS b(payload, ordinality)""",
                             [lease.tenant_id, first, lease.epoch, lease.owner_id, payloads])
                return list(range(first, first + len(payloads)))
        head = self.head(lease.tenant_id)
        raise StaleOwner(lease, head.epoch, head.owner_id)

    def read(self, tenant_id: str, after_seq: int = 0, limit: int = 1_000) -> list[StreamEvent]:
        rows = self._conn().execute("SELECT seq, epoch, owner_id, payload FROM stream_events "
                                    "WHERE tenant_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                                    [tenant_id, after_seq, limit]).fetchall()
        return [StreamEvent(*row) for row in rows]


@dataclass(frozen=True)
class RaceAudit:
    """What a race left behind, checked against what each owner was told."""

    engine: str
    events: int
    a_batches: int
    b_epoch: int
    gap_free: bool                  # sequence numbers run 1..N with no hole
    all_told_stored: bool           # every (seq, payload) an owner was told is stored, and nothing else
    fenced: bool                    # after B's first event, no event of A's epoch
    seconds: float


def audit(engine: str, report: RaceReport, events: list[StreamEvent], seconds: float) -> RaceAudit:
    seqs = [e.seq for e in events]
    told = sorted(report.a_told + report.b_told)
    first_b = next((e.seq for e in events if e.owner_id == "B"), None)
    fenced = first_b is not None and all(e.owner_id == "B" for e in events if e.seq >= first_b)
    return RaceAudit(engine, len(events), report.a_batches, report.b_epoch,
                     seqs == list(range(1, len(seqs) + 1)),
                     told == [(e.seq, e.payload) for e in events], fenced, seconds)


TENANT = "acme"


def race_on_postgres(url: str, *, takeover_after: int = 3) -> tuple[RaceAudit, list[StreamEvent]]:
    """Two owner threads, each with its own PostgreSQL connection, on a fresh schema."""
    with scratch_schema(url, "owner") as scratch:
        stream = PgOrderedStream(scratch)
        try:
            start = time.perf_counter()
            report = race_two_owners(stream, TENANT, takeover_after=takeover_after)  # same race, same owners
            seconds = time.perf_counter() - start
            events = stream.read(TENANT, limit=100_000)
        finally:
            stream.close()
    return audit("PostgreSQL", report, events, seconds), events


def race_on_duckdb(*, takeover_after: int = 3) -> tuple[RaceAudit, list[StreamEvent]]:
    """The hot-tenant lab's own race: an in-memory DuckDB whose writers take turns in a turnstile."""
    stream = OrderedStream()
    try:
        start = time.perf_counter()
        report = race_two_owners(stream, TENANT, takeover_after=takeover_after)
        seconds = time.perf_counter() - start
        events = stream.read(TENANT, limit=100_000)
    finally:
        stream.db.close()
    return audit("DuckDB", report, events, seconds), events




@dataclass(frozen=True)
class OwnerRaceParams:
    takeover_after: int = 3          # B takes over once A has had this many batches accepted

    def __post_init__(self) -> None:
        if isinstance(self.takeover_after, bool) or not isinstance(self.takeover_after, int) \
                or not 1 <= self.takeover_after <= 50:
            raise ValueError(f"takeover_after must be a whole number from 1 to 50, got {self.takeover_after!r}")


@dataclass(frozen=True)
class OwnerRaceResult:
    params: OwnerRaceParams
    duckdb: RaceAudit
    duckdb_events: tuple[StreamEvent, ...]
    postgres: RaceAudit
    postgres_events: tuple[StreamEvent, ...]


def run_owner_race(url: str, params: OwnerRaceParams = OwnerRaceParams()) -> OwnerRaceResult:
    """The lab's race on both engines, for showing side by side."""
    duck, duck_events = race_on_duckdb(takeover_after=params.takeover_after)
    pg, pg_events = race_on_postgres(url, takeover_after=params.takeover_after)
    return OwnerRaceResult(params, duck, tuple(duck_events), pg, tuple(pg_events))
