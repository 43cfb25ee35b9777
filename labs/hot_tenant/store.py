"""Independent events spread over buckets: versioned routing and idempotent, retry-safe writes.

An accepted event keeps its identity, routing version and bucket for life; retries never add a copy.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from labs.hot_tenant.db import Database, retry_on_conflict
from labs.hot_tenant.router import RoutingVersion

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS routing_versions (
        tenant_id VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        buckets INTEGER NOT NULL CHECK (buckets >= 1),
        PRIMARY KEY (tenant_id, version))""",
    # The primary key is the deduplication record: one row per logical event, whatever its route.
    """CREATE TABLE IF NOT EXISTS tenant_events (
        tenant_id VARCHAR NOT NULL,
        event_id VARCHAR NOT NULL,
        routing_version INTEGER NOT NULL,
        bucket INTEGER NOT NULL,
        occurred_at BIGINT NOT NULL,
        payload VARCHAR NOT NULL,
        PRIMARY KEY (tenant_id, event_id))""",
)

EVENT_COLUMNS = "event_id, routing_version, bucket, occurred_at, payload"


@dataclass(frozen=True)
class Event:
    """One stored event. Reads order events by (occurred_at, event_id), newest first."""

    event_id: str
    routing_version: int
    bucket: int
    occurred_at: int
    payload: str

    @property
    def order_key(self) -> tuple[int, str]:
        return (self.occurred_at, self.event_id)


@dataclass(frozen=True)
class WriteOutcome:
    """What a write did: ``accepted`` is False when the event was already stored (a retry)."""

    event: Event
    accepted: bool


class UnknownTenant(LookupError):
    pass


class EventStore:
    """Tenant events in buckets; the bucket layout is a stored routing version per tenant."""

    def __init__(self, path: str = ":memory:", *, db: Database | None = None):
        self.db = db if db is not None else Database(path)
        cur = self.db.cursor()
        for statement in SCHEMA:
            cur.execute(statement)

    # -- routing versions ------------------------------------------------------------------
    def create_tenant(self, tenant_id: str, buckets: int) -> RoutingVersion:
        """Start a tenant at routing version 1; calling again returns the existing versions' latest."""
        existing = self.versions(tenant_id)
        if existing:
            return existing[-1]
        return self._add_version(tenant_id, buckets, expect_latest=0)

    def change_buckets(self, tenant_id: str, buckets: int) -> RoutingVersion:
        """Publish a new routing version; earlier versions (and their events) stay as they are."""
        current = self.current_version(tenant_id)
        return self._add_version(tenant_id, buckets, expect_latest=current.version)

    def _add_version(self, tenant_id: str, buckets: int, *, expect_latest: int) -> RoutingVersion:
        if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= 1024:
            raise ValueError(f"buckets must be a whole number from 1 to 1024, got {buckets!r}")
        version = RoutingVersion(tenant_id, expect_latest + 1, buckets)
        # Two concurrent changes both aim at the same version number; the primary key lets one win.
        self.db.cursor().execute(
            "INSERT INTO routing_versions (tenant_id, version, buckets) VALUES (?, ?, ?)",
            [tenant_id, version.version, buckets])
        return version

    def versions(self, tenant_id: str) -> list[RoutingVersion]:
        rows = self.db.cursor().execute(
            "SELECT version, buckets FROM routing_versions WHERE tenant_id = ? ORDER BY version",
            [tenant_id]).fetchall()
        return [RoutingVersion(tenant_id, version, buckets) for version, buckets in rows]

    def current_version(self, tenant_id: str) -> RoutingVersion:
        versions = self.versions(tenant_id)
        if not versions:
            raise UnknownTenant(f"tenant {tenant_id!r} has no routing version yet")
        return versions[-1]

    def version(self, tenant_id: str, version: int) -> RoutingVersion:
        for candidate in self.versions(tenant_id):
            if candidate.version == version:
                return candidate
        raise UnknownTenant(f"tenant {tenant_id!r} has no routing version {version}")

    def streams(self, tenant_id: str) -> list[tuple[int, int]]:
        """Every (routing_version, bucket) a reader must cover: all layouts, old and new."""
        return [(v.version, b) for v in self.versions(tenant_id) for b in range(v.buckets)]

    # -- writes ----------------------------------------------------------------------------
    def _route(self, tenant_id: str, routing_version: int | None) -> RoutingVersion:
        return (self.current_version(tenant_id) if routing_version is None
                else self.version(tenant_id, routing_version))

    def write(self, tenant_id: str, event_id: str, occurred_at: int, payload: str = "", *,
              routing_version: int | None = None) -> WriteOutcome:
        """Store an event once. A retry of a stored event returns the stored copy, unchanged.

        ``routing_version`` is the version the client first routed the event under; a retry
        sent before a layout change keeps its original route. None means the current version.
        """
        return self.write_burst(tenant_id, [(event_id, occurred_at, payload)],
                                routing_version=routing_version)[0]

    def write_burst(self, tenant_id: str, items: Sequence[tuple[str, int, str]], *,
                    routing_version: int | None = None) -> list[WriteOutcome]:
        """Write (event_id, occurred_at, payload) items in one statement; one outcome per item.

        Ids already stored, or repeated earlier in the same burst, come back with
        ``accepted=False`` and the copy that was stored first.
        """
        route = self._route(tenant_id, routing_version)
        fresh = [Event(str(event_id), route.version, route.bucket_of(str(event_id)), int(at), str(payload))
                 for event_id, at, payload in items]
        unique = list({e.event_id: e for e in reversed(fresh)}.values())[::-1]  # first copy wins

        def attempt() -> set[str]:
            if not unique:
                return set()
            # One INSERT is its own transaction. A concurrent first write of the same id shows
            # up as a conflict; the retry then sees the winner's row and skips it.
            rows = self.db.cursor().execute(
                f"""INSERT INTO tenant_events (tenant_id, {EVENT_COLUMNS})
                    SELECT ?, unnest(?::VARCHAR[]), unnest(?::INTEGER[]), unnest(?::INTEGER[]),
                           unnest(?::BIGINT[]), unnest(?::VARCHAR[])
                    ON CONFLICT DO NOTHING RETURNING event_id""",
                [tenant_id, [e.event_id for e in unique], [e.routing_version for e in unique],
                 [e.bucket for e in unique], [e.occurred_at for e in unique],
                 [e.payload for e in unique]]).fetchall()
            return {row[0] for row in rows}

        accepted_ids = retry_on_conflict(attempt)
        stored = self.get_many(tenant_id, [e.event_id for e in unique if e.event_id not in accepted_ids])
        stored.update({e.event_id: e for e in unique if e.event_id in accepted_ids})
        outcomes, claimed = [], set()
        for event in fresh:
            first_time = event.event_id in accepted_ids and event.event_id not in claimed
            claimed.add(event.event_id)
            outcomes.append(WriteOutcome(stored[event.event_id], first_time))
        return outcomes

    # -- reads -----------------------------------------------------------------------------
    def get(self, tenant_id: str, event_id: str) -> Event | None:
        return self.get_many(tenant_id, [event_id]).get(event_id)

    def get_many(self, tenant_id: str, event_ids: Sequence[str]) -> dict[str, Event]:
        if not event_ids:
            return {}
        rows = self.db.cursor().execute(
            f"SELECT {EVENT_COLUMNS} FROM tenant_events WHERE tenant_id = ? AND list_contains(?::VARCHAR[], event_id)",
            [tenant_id, list(event_ids)]).fetchall()
        return {row[0]: Event(*row) for row in rows}

    def fetch_bucket(self, tenant_id: str, stream: tuple[int, int], limit: int,
                     before: tuple[int, str] | None = None, *, cur=None) -> list[Event]:
        """Newest-first events of one (version, bucket), strictly older than ``before``."""
        cur = cur if cur is not None else self.db.cursor()
        version, bucket = stream
        sql = (f"SELECT {EVENT_COLUMNS} FROM tenant_events "
               "WHERE tenant_id = ? AND routing_version = ? AND bucket = ?")
        args: list[object] = [tenant_id, version, bucket]
        if before is not None:
            sql += " AND (occurred_at < ? OR (occurred_at = ? AND event_id < ?))"
            args += [before[0], before[0], before[1]]
        sql += " ORDER BY occurred_at DESC, event_id DESC LIMIT ?"
        rows = cur.execute(sql, args + [int(limit)]).fetchall()
        return [Event(*row) for row in rows]

    def all_events(self, tenant_id: str) -> list[Event]:
        rows = self.db.cursor().execute(
            f"SELECT {EVENT_COLUMNS} FROM tenant_events WHERE tenant_id = ? "
            "ORDER BY occurred_at DESC, event_id DESC", [tenant_id]).fetchall()
        return [Event(*row) for row in rows]

    def bucket_counts(self, tenant_id: str) -> dict[tuple[int, int], int]:
        """Events per (version, bucket), including empty buckets of every layout."""
        counts = {stream: 0 for stream in self.streams(tenant_id)}
        rows = self.db.cursor().execute(
            "SELECT routing_version, bucket, count(*) FROM tenant_events WHERE tenant_id = ? "
            "GROUP BY routing_version, bucket", [tenant_id]).fetchall()
        for version, bucket, count in rows:
            counts[(version, bucket)] = count
        return counts

    def count(self, tenant_id: str) -> int:
        return self.db.cursor().execute("SELECT count(*) FROM tenant_events WHERE tenant_id = ?",
                                        [tenant_id]).fetchone()[0]
