"""Two owners racing for one ordered stream: A appends until fenced, B takes over part-way.

Used by the owner tests and by the page; threads share one database, each with its own cursor.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

from labs.hot_tenant.owner import OrderedStream, StaleOwner

Told = tuple[tuple[int, str], ...]   # (seq, payload) pairs an owner was told it appended


@dataclass(frozen=True)
class RaceReport:
    a_told: Told
    b_told: Told
    refusals: tuple[str, ...]        # StaleOwner messages A received (the race stops at the first)
    a_batches: int                   # batches A had accepted before it was fenced
    b_epoch: int


def race_two_owners(stream: OrderedStream, tenant_id: str, *, takeover_after: int = 3,
                    b_batches: int = 5, max_a_batches: int = 20_000) -> RaceReport:
    """A appends batches of 1..5 until refused; after A's ``takeover_after``-th batch B takes over.

    If B fails, A stops too and B's error is raised here, rather than A appending on to its cap.
    """
    lease_a = stream.acquire(tenant_id, "A")
    a_going = threading.Event()
    b_failed: list[BaseException] = []
    a_told: list[tuple[int, str]] = []
    b_told: list[tuple[int, str]] = []
    refusals: list[str] = []
    a_batches = [0]
    b_epoch = [0]

    def owner_a() -> None:
        try:
            for n in range(max_a_batches):
                if b_failed:
                    return
                batch = [f"A-{n}-{k}" for k in range(1 + n % 5)]
                try:
                    a_told.extend(zip(stream.append(lease_a, batch), batch))
                except StaleOwner as exc:
                    refusals.append(str(exc))
                    return
                a_batches[0] += 1
                if n + 1 == takeover_after:
                    a_going.set()
        finally:
            a_going.set()  # never leave B waiting, even if A stops early

    def owner_b() -> None:
        a_going.wait()
        try:
            lease_b = stream.acquire(tenant_id, "B", takeover=True)
            b_epoch[0] = lease_b.epoch
            for n in range(b_batches):
                batch = [f"B-{n}-{k}" for k in range(3)]
                b_told.extend(zip(stream.append(lease_b, batch), batch))
        except BaseException as exc:  # handed to the caller after both threads stop
            b_failed.append(exc)

    threads = [threading.Thread(target=owner_a, name="owner-A"), threading.Thread(target=owner_b, name="owner-B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if b_failed:
        raise RuntimeError("owner B failed during the race") from b_failed[0]
    return RaceReport(tuple(a_told), tuple(b_told), tuple(refusals), a_batches[0], b_epoch[0])
