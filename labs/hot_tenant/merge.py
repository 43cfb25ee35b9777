"""Latest-N across every bucket of every layout: a bounded k-way heap merge with a continuation cursor.

Reports its own cost (candidates read, fetches, peak concurrent fetches) beside the naive read.
"""
from __future__ import annotations

import base64
import heapq
import json
import math
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from labs.hot_tenant.store import Event, EventStore

DEFAULT_MAX_CONCURRENT = 4
CURSOR_FORMAT = 1


@dataclass(frozen=True)
class Page:
    """One page of newest-first events and what it cost to produce."""

    events: tuple[Event, ...]
    next_cursor: str | None       # None once nothing older remains
    candidates_read: int          # rows fetched from buckets, returned or not
    fetches: int                  # bucket queries issued
    empty_fetches: int            # queries that found nothing
    streams: int                  # (version, bucket) pairs covered
    peak_concurrent_fetches: int


# The cursor is the order key of the last event returned. Every bucket is sorted by the same
# total order (occurred_at, event_id), so "strictly older than this key" is exactly where each
# bucket resumes: no per-bucket offsets to drift when layouts change or writes land between pages.
def encode_cursor(key: tuple[int, str]) -> str:
    raw = json.dumps({"f": CURSOR_FORMAT, "before": [key[0], key[1]]}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        occurred_at, event_id = data["before"]
        if data.get("f") != CURSOR_FORMAT or not isinstance(occurred_at, int) or not isinstance(event_id, str):
            raise ValueError
    except (ValueError, TypeError, KeyError, UnicodeError):
        raise ValueError("not a cursor this reader issued") from None
    return occurred_at, event_id


class _Newest:
    """Heap entry that puts the newest event on top of Python's min-heap."""

    __slots__ = ("event", "slot")

    def __init__(self, event: Event, slot: int):
        self.event, self.slot = event, slot

    def __lt__(self, other: "_Newest") -> bool:
        return self.event.order_key > other.event.order_key


class _FetchCounter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = self.peak = self.fetches = self.empty = self.rows = 0

    def __enter__(self) -> "_FetchCounter":
        with self._lock:
            self.in_flight += 1
            self.fetches += 1
            self.peak = max(self.peak, self.in_flight)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.in_flight -= 1

    def record(self, rows: list[Event]) -> list[Event]:
        with self._lock:
            self.rows += len(rows)
            self.empty += not rows
        return rows


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ValueError(f"limit must be a whole number from 1 to 10000, got {limit!r}")


def latest(store: EventStore, tenant_id: str, limit: int = 10, cursor: str | None = None, *,
           max_concurrent: int = DEFAULT_MAX_CONCURRENT, page_per_bucket: int | None = None) -> Page:
    """Return the ``limit`` newest events older than ``cursor``, reading as few rows as it can.

    Each bucket is first asked for a small share (``ceil(limit / buckets)`` by default), at most
    ``max_concurrent`` queries at a time. The heap then pops the newest head; a bucket whose
    buffer runs dry is asked for more only if the merge still needs it.
    """
    _check_limit(limit)
    if not 1 <= max_concurrent <= 64:
        raise ValueError(f"max_concurrent must be from 1 to 64, got {max_concurrent}")
    before = decode_cursor(cursor) if cursor else None
    streams = store.streams(tenant_id)
    share = page_per_bucket or max(1, math.ceil(limit / max(1, len(streams))))
    counter = _FetchCounter()

    def fetch(stream: tuple[int, int], after: tuple[int, str] | None, size: int) -> list[Event]:
        with counter:
            return counter.record(store.fetch_bucket(tenant_id, stream, size, after))

    with ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="bucket-fetch") as pool:
        buffers = list(pool.map(lambda s: fetch(s, before, share), streams))
    positions = [0] * len(streams)
    sizes = [share] * len(streams)
    exhausted = [len(buf) < share for buf in buffers]
    heap = [_Newest(buf[0], slot) for slot, buf in enumerate(buffers) if buf]
    heapq.heapify(heap)

    out: list[Event] = []
    while heap and len(out) < limit:
        top = heapq.heappop(heap)
        out.append(top.event)
        slot = top.slot
        positions[slot] += 1
        if positions[slot] == len(buffers[slot]) and not exhausted[slot] and len(out) < limit:
            # Refill one bucket at a time: its next row may be the newest left anywhere. A bucket
            # that keeps running dry is running hot, so its next share doubles (fewer round trips),
            # never past what the page still needs.
            sizes[slot] = min(2 * sizes[slot], limit - len(out))
            more = fetch(streams[slot], top.event.order_key, sizes[slot])
            buffers[slot], positions[slot] = more, 0
            exhausted[slot] = len(more) < sizes[slot]
        if positions[slot] < len(buffers[slot]):
            heapq.heappush(heap, _Newest(buffers[slot][positions[slot]], slot))

    more_left = bool(heap) or not all(exhausted)
    next_cursor = encode_cursor(out[-1].order_key) if out and more_left else None
    return Page(tuple(out), next_cursor, counter.rows, counter.fetches, counter.empty,
                len(streams), counter.peak)


def latest_naive(store: EventStore, tenant_id: str, limit: int = 10, cursor: str | None = None) -> Page:
    """The reference read: ``limit`` rows from every bucket at once, sort, keep ``limit``."""
    _check_limit(limit)
    before = decode_cursor(cursor) if cursor else None
    streams = store.streams(tenant_id)
    counter = _FetchCounter()
    candidates: list[Event] = []
    for stream in streams:
        with counter:
            candidates += counter.record(store.fetch_bucket(tenant_id, stream, limit, before))
    candidates.sort(key=lambda e: e.order_key, reverse=True)
    out = candidates[:limit]
    next_cursor = encode_cursor(out[-1].order_key) if len(candidates) > limit else None
    return Page(tuple(out), next_cursor, counter.rows, counter.fetches, counter.empty,
                len(streams), counter.peak)
