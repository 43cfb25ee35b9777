"""A session-sized hot-tenant lab for the page: the store, the ordered stream and the client's memory.

The client side (which events it sent, under which routing version) lives here so retries are real.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from labs.hot_tenant.db import Database
from labs.hot_tenant.merge import Page, latest, latest_naive
from labs.hot_tenant.owner import Lease, LeaseHeld, OrderedStream, StaleOwner, StreamEvent
from labs.hot_tenant.race import RaceReport, race_two_owners
from labs.hot_tenant.router import RoutingVersion
from labs.hot_tenant.store import EventStore

TENANT = "acme"
MAX_BURST = 500
MAX_EVENTS = 20_000          # per session, so one reader cannot grow the in-memory database forever
OWNERS = ("A", "B")


@dataclass(frozen=True)
class SentEvent:
    """What the client remembers about an event it sent: enough to retry it faithfully."""

    event_id: str
    occurred_at: int
    routing_version: int


@dataclass(frozen=True)
class WriteReport:
    attempted: int
    accepted: int
    recognised: int                          # already stored: the retry found the first copy
    by_version: dict[int, int]               # stored copies touched, by their routing version


@dataclass(frozen=True)
class OwnerAttempt:
    owner_id: str
    action: str                              # "acquire", "takeover" or "append"
    ok: bool
    epoch: int
    detail: str
    seqs: tuple[int, ...] = ()
    head_seq: int = 0                        # the stream's last sequence number just after the attempt


@dataclass
class Playground:
    """One reader's lab; ``path`` defaults to a private in-memory DuckDB."""

    path: str = ":memory:"
    buckets: int = 4
    sent: list[SentEvent] = field(default_factory=list)
    owner_log: list[OwnerAttempt] = field(default_factory=list)
    races: int = 0

    def __post_init__(self) -> None:
        self.db = Database(self.path)
        self.store = EventStore(db=self.db)
        self.stream = OrderedStream(db=self.db)
        self.store.create_tenant(TENANT, self.buckets)
        self.leases: dict[str, Lease] = {}

    # -- independent events ------------------------------------------------------------------
    @property
    def version(self) -> RoutingVersion:
        return self.store.current_version(TENANT)

    def write_burst(self, n: int) -> WriteReport:
        if not 1 <= n <= MAX_BURST:
            raise ValueError(f"a burst is 1 to {MAX_BURST} events")
        if len(self.sent) + n > MAX_EVENTS:
            raise ValueError(f"this lab holds at most {MAX_EVENTS:,} events; start it again to write more")
        version = self.version.version
        start = len(self.sent)
        fresh = [SentEvent(f"evt-{start + k:05d}", start + k, version) for k in range(n)]
        self.sent += fresh
        return self._send(fresh, keep_route=True)

    def change_buckets(self, buckets: int) -> RoutingVersion:
        return self.store.change_buckets(TENANT, buckets)

    def retry_oldest(self, n: int, *, keep_route: bool) -> WriteReport:
        """Send the ``n`` oldest events again, with their first route or under today's version."""
        if n < 1:
            raise ValueError("retry at least one event")
        return self._send(self.sent[:n], keep_route=keep_route)

    def _send(self, events: list[SentEvent], *, keep_route: bool) -> WriteReport:
        accepted = recognised = 0
        by_version: dict[int, int] = {}
        groups: dict[int | None, list[SentEvent]] = {}
        for event in events:
            groups.setdefault(event.routing_version if keep_route else None, []).append(event)
        for version, group in groups.items():
            outcomes = self.store.write_burst(
                TENANT, [(e.event_id, e.occurred_at, f"payload of {e.event_id}") for e in group],
                routing_version=version)
            for outcome in outcomes:
                accepted += outcome.accepted
                recognised += not outcome.accepted
                v = outcome.event.routing_version
                by_version[v] = by_version.get(v, 0) + 1
        return WriteReport(len(events), accepted, recognised, dict(sorted(by_version.items())))

    def bucket_counts(self) -> dict[tuple[int, int], int]:
        return self.store.bucket_counts(TENANT)

    def stored_count(self) -> int:
        return self.store.count(TENANT)

    def read_latest(self, limit: int, cursor: str | None = None, *, max_concurrent: int = 4) -> tuple[Page, Page]:
        """The bounded merge and, for comparison, the naive read of the same page."""
        return (latest(self.store, TENANT, limit, cursor, max_concurrent=max_concurrent),
                latest_naive(self.store, TENANT, limit, cursor))

    # -- the ordered stream ------------------------------------------------------------------
    def acquire(self, owner_id: str, *, takeover: bool) -> OwnerAttempt:
        action = "takeover" if takeover else "acquire"
        try:
            lease = self.stream.acquire(TENANT, owner_id, takeover=takeover, ttl_s=3_600)
        except LeaseHeld as exc:
            return self._log(OwnerAttempt(owner_id, action, False, self.stream.head(TENANT).epoch, str(exc)))
        self.leases[owner_id] = lease
        return self._log(OwnerAttempt(owner_id, action, True, lease.epoch, f"{owner_id} holds epoch {lease.epoch}"))

    def append(self, owner_id: str, n: int) -> OwnerAttempt:
        lease = self.leases.get(owner_id)
        if lease is None:
            return self._log(OwnerAttempt(owner_id, "append", False, 0, f"{owner_id} has never held the lease"))
        payloads = [f"{owner_id}-e{lease.epoch}-{len(self.owner_log)}-{k}" for k in range(n)]
        try:
            seqs = self.stream.append(lease, payloads)
        except StaleOwner as exc:
            return self._log(OwnerAttempt(owner_id, "append", False, lease.epoch, str(exc)))
        return self._log(OwnerAttempt(owner_id, "append", True, lease.epoch,
                                      f"seq {seqs[0]}–{seqs[-1]}" if n > 1 else f"seq {seqs[0]}", tuple(seqs)))

    def _log(self, attempt: OwnerAttempt) -> OwnerAttempt:
        attempt = replace(attempt, head_seq=self.stream.head(TENANT).last_seq)
        self.owner_log.append(attempt)
        return attempt

    def stream_events(self) -> list[StreamEvent]:
        return self.stream.read(TENANT, limit=100_000)

    def race(self) -> tuple[str, RaceReport, list[StreamEvent]]:
        """Two threads race on a fresh stream of their own; returns its name, report and events."""
        self.races += 1
        tenant = f"{TENANT}-race-{self.races}"
        report = race_two_owners(self.stream, tenant)
        return tenant, report, self.stream.read(tenant, limit=100_000)

    def close(self) -> None:
        self.db.close()
