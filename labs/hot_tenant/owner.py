"""Strictly ordered tenant stream behind one fenced owner: a lease with an epoch, gap-free sequences.

Each append (a batch of any size) is one transaction that checks the epoch and takes the next numbers.

Safety and progress come from different places. Safety: the epoch check and the sequence bump are
one UPDATE of the stream's row, so a stale owner's append matches nothing, and DuckDB rolls back
one of two transactions that change the row at once. Progress: DuckDB settles such a conflict by
failing whoever writes second, and an owner appending back to back always has a transaction open,
so a takeover retried against it can lose every time. Writers of one stream in this process
therefore take turns first come, first served (``Turnstile``); a conflict from anywhere else is
still retried.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from labs.hot_tenant.db import Database, Turnstile, retry_on_conflict, transaction

T = TypeVar("T")

MAX_BATCH = 10_000

SCHEMA = (
    # Creation guard: the primary key makes two racing "first owner" transactions collide.
    "CREATE TABLE IF NOT EXISTS ordered_streams (tenant_id VARCHAR PRIMARY KEY)",
    # One row per stream: the lease and the sequence head. DuckDB 2.0.1 finds write-write
    # conflicts column by column, so every statement that changes this row writes all four
    # mutable columns; and the table has no primary key, because on a keyed table an
    # UPDATE ... RETURNING from an older snapshot was seen to overwrite a newer commit.
    """CREATE TABLE IF NOT EXISTS stream_owner (
        tenant_id VARCHAR NOT NULL,
        owner_id VARCHAR,
        epoch BIGINT NOT NULL,
        last_seq BIGINT NOT NULL,
        lease_until DOUBLE NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS stream_events (
        tenant_id VARCHAR NOT NULL,
        seq BIGINT NOT NULL,
        epoch BIGINT NOT NULL,
        owner_id VARCHAR NOT NULL,
        payload VARCHAR NOT NULL,
        PRIMARY KEY (tenant_id, seq))""",
)


# Both statements write owner_id, epoch, last_seq and lease_until (see the schema note), so a
# takeover and an append that overlap always conflict and one of them is rolled back.
TAKE_OWNERSHIP = ("UPDATE stream_owner SET owner_id = ?, epoch = ?, last_seq = last_seq, lease_until = ? "
                  "WHERE tenant_id = ? AND epoch = ? RETURNING epoch")
CLAIM_SEQUENCES = ("UPDATE stream_owner SET owner_id = owner_id, epoch = epoch, last_seq = last_seq + ?, "
                   "lease_until = lease_until WHERE tenant_id = ? AND epoch = ? AND owner_id = ? RETURNING last_seq")


@dataclass(frozen=True)
class Lease:
    """Proof of ownership an owner carries into every append."""

    tenant_id: str
    owner_id: str
    epoch: int
    until: float


@dataclass(frozen=True)
class StreamEvent:
    seq: int
    epoch: int
    owner_id: str
    payload: str


@dataclass(frozen=True)
class StreamHead:
    owner_id: str | None
    epoch: int
    last_seq: int
    lease_until: float


class StaleOwner(RuntimeError):
    """The lease's epoch is no longer the stream's: someone newer owns it; nothing was written."""

    def __init__(self, lease: Lease, current_epoch: int, current_owner: str | None):
        super().__init__(f"{lease.owner_id} holds epoch {lease.epoch} but the stream is at epoch "
                         f"{current_epoch} (owner {current_owner}); append refused")
        self.lease, self.current_epoch, self.current_owner = lease, current_epoch, current_owner


class LeaseHeld(RuntimeError):
    """Another owner's lease is still live and no takeover was asked for."""


class OrderedStream:
    """Ordered per-tenant streams in DuckDB; ``clock`` returns seconds (inject one in tests)."""

    def __init__(self, path: str = ":memory:", *, db: Database | None = None,
                 clock: Callable[[], float] = time.time):
        self.db = db if db is not None else Database(path)
        self.clock = clock
        self._turnstiles: dict[str, Turnstile] = {}
        self._turnstiles_lock = threading.Lock()
        cur = self.db.cursor()
        for statement in SCHEMA:
            cur.execute(statement)

    def _turn(self, tenant_id: str) -> Turnstile:
        """The queue that this process's writers of one stream wait in."""
        with self._turnstiles_lock:
            return self._turnstiles.setdefault(tenant_id, Turnstile())

    def _write(self, tenant_id: str, work: Callable[[], T]) -> T:
        """Run one write transaction on a stream in its turn, retrying a lost conflict."""
        with self._turn(tenant_id):
            return retry_on_conflict(work)

    def _ensure_stream(self, tenant_id: str) -> None:
        def create() -> None:
            with transaction(self.db.cursor()) as cur:
                made = cur.execute("INSERT INTO ordered_streams VALUES (?) ON CONFLICT DO NOTHING RETURNING tenant_id",
                                   [tenant_id]).fetchall()
                if made:
                    cur.execute("INSERT INTO stream_owner VALUES (?, NULL, 0, 0, 0.0)", [tenant_id])
        self._write(tenant_id, create)

    def head(self, tenant_id: str) -> StreamHead:
        row = self.db.cursor().execute(
            "SELECT owner_id, epoch, last_seq, lease_until FROM stream_owner WHERE tenant_id = ?",
            [tenant_id]).fetchone()
        return StreamHead(*row) if row else StreamHead(None, 0, 0, 0.0)

    def acquire(self, tenant_id: str, owner_id: str, *, ttl_s: float = 10.0, takeover: bool = False) -> Lease:
        """Take (or renew) ownership. A new owner gets the next epoch, which fences every older one.

        Without ``takeover`` a live lease of another owner raises ``LeaseHeld``; with it the
        caller (say, a failover controller that has declared the owner dead) takes it anyway.
        """
        if not owner_id:
            raise ValueError("owner_id must not be empty")
        self._ensure_stream(tenant_id)

        def attempt() -> Lease:
            now = self.clock()
            with transaction(self.db.cursor()) as cur:
                current, epoch, until = cur.execute(
                    "SELECT owner_id, epoch, lease_until FROM stream_owner WHERE tenant_id = ?",
                    [tenant_id]).fetchone()
                renewing = current == owner_id and epoch > 0
                if not renewing and current is not None and until > now and not takeover:
                    raise LeaseHeld(f"{current} holds the lease on {tenant_id} for {until - now:.1f}s more")
                new_epoch = epoch if renewing else epoch + 1
                cur.execute(TAKE_OWNERSHIP, [owner_id, new_epoch, now + ttl_s, tenant_id, epoch]).fetchall()
                return Lease(tenant_id, owner_id, new_epoch, now + ttl_s)
        return self._write(tenant_id, attempt)

    def append(self, lease: Lease, payloads: Sequence[str]) -> list[int]:
        """Append a batch in one transaction; returns its sequence numbers, or raises ``StaleOwner``.

        The epoch check and the sequence bump are one UPDATE on the stream's row, so a takeover
        committed first makes it match nothing, and a takeover racing it conflicts on that row.
        """
        payloads = list(payloads)
        if not 1 <= len(payloads) <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} events, got {len(payloads)}")

        def attempt() -> list[int]:
            with transaction(self.db.cursor()) as cur:
                bumped = cur.execute(CLAIM_SEQUENCES,
                                     [len(payloads), lease.tenant_id, lease.epoch, lease.owner_id]).fetchall()
                if not bumped:
                    raise self._stale(lease)
                first = bumped[0][0] - len(payloads) + 1
                cur.execute(
                    "INSERT INTO stream_events (tenant_id, seq, epoch, owner_id, payload) "
                    "SELECT ?, ? + ordinal - 1, ?, ?, payload FROM unnest(?::VARCHAR[]) WITH ORDINALITY AS b(payload, ordinal)",
                    [lease.tenant_id, first, lease.epoch, lease.owner_id, payloads])
                return list(range(first, first + len(payloads)))

        return self._write(lease.tenant_id, attempt)

    def _stale(self, lease: Lease) -> StaleOwner:
        head = self.head(lease.tenant_id)
        return StaleOwner(lease, head.epoch, head.owner_id)

    def read(self, tenant_id: str, after_seq: int = 0, limit: int = 1_000) -> list[StreamEvent]:
        rows = self.db.cursor().execute(
            "SELECT seq, epoch, owner_id, payload FROM stream_events WHERE tenant_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?", [tenant_id, after_seq, limit]).fetchall()
        return [StreamEvent(*row) for row in rows]
