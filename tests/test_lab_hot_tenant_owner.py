"""Tests for the fenced ordered stream: leases, epochs, gap-free batches, racing owners.

Brief 004's acceptance: a stale owner cannot append. Raced here in threads and in processes.

Two races, two mechanisms. Threads share one connection (a cursor each), so a takeover and an
append can overlap inside DuckDB; the fence is the UPDATE on the stream's row, which DuckDB's
optimistic concurrency control lets only one of them win. Processes cannot share a DuckDB file
for writing (one read-write process per file), so the process race takes turns: each step opens
the file, runs one transaction and closes it; the stale process is refused because the epoch it
carries no longer matches the stored one when its turn comes.
"""
from __future__ import annotations

import multiprocessing
import sys
import threading
import time
import types
import duckdb
import pytest

from labs.hot_tenant import Database, LeaseHeld, OrderedStream, StaleOwner
from labs.hot_tenant.db import Turnstile
from labs.hot_tenant.owner import CLAIM_SEQUENCES, TAKE_OWNERSHIP
from labs.hot_tenant.race import race_two_owners

TENANT = "acme"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def assert_gap_free(stream: OrderedStream) -> list:
    events = stream.read(TENANT, limit=100_000)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert stream.head(TENANT).last_seq == len(events)
    return events


def test_batches_take_consecutive_numbers():
    stream = OrderedStream()
    lease = stream.acquire(TENANT, "A")
    assert lease.epoch == 1
    assert stream.append(lease, ["a"]) == [1]
    assert stream.append(lease, ["b", "c", "d", "e", "f"]) == [2, 3, 4, 5, 6]
    assert [e.payload for e in assert_gap_free(stream)] == list("abcdef")
    with pytest.raises(ValueError):
        stream.append(lease, [])


def test_live_lease_blocks_without_takeover_and_expiry_frees_it():
    clock = FakeClock()
    stream = OrderedStream(clock=clock)
    first = stream.acquire(TENANT, "A", ttl_s=5)
    assert stream.acquire(TENANT, "A", ttl_s=5).epoch == first.epoch  # renewal keeps the epoch
    with pytest.raises(LeaseHeld):
        stream.acquire(TENANT, "B")
    clock.now += 6
    second = stream.acquire(TENANT, "B")
    assert second.epoch == first.epoch + 1
    with pytest.raises(StaleOwner) as refused:
        stream.append(first, ["late"])
    assert refused.value.current_epoch == second.epoch and refused.value.current_owner == "B"
    assert stream.read(TENANT) == []


def test_stale_batch_prepared_before_a_takeover_is_refused_whole():
    stream = OrderedStream()
    old = stream.acquire(TENANT, "A")
    stream.append(old, ["a1", "a2"])
    new = stream.acquire(TENANT, "B", takeover=True)
    with pytest.raises(StaleOwner):
        stream.append(old, ["a3", "a4", "a5"])
    stream.append(new, ["b1"])
    events = assert_gap_free(stream)
    assert [(e.payload, e.owner_id, e.epoch) for e in events] == [("a1", "A", 1), ("a2", "A", 1), ("b1", "B", 2)]


@pytest.mark.parametrize("takeover_first", [True, False])
def test_append_and_takeover_overlapping_in_the_database_conflict(takeover_first):
    """The mechanism the fence relies on, step by step: two open transactions, one row."""
    stream = OrderedStream()
    old = stream.acquire(TENANT, "A")
    appender, taker = stream.db._con.cursor(), stream.db._con.cursor()
    appender.execute("BEGIN TRANSACTION")
    taker.execute("BEGIN TRANSACTION")
    assert appender.execute("SELECT epoch FROM stream_owner WHERE tenant_id = ?", [TENANT]).fetchone() == (1,)
    append_args = [1, TENANT, old.epoch, "A"]
    if takeover_first:  # the takeover commits while the append's snapshot still shows epoch 1
        taker.execute(TAKE_OWNERSHIP, ["B", 2, 0.0, TENANT, 1]).fetchall()
        taker.execute("COMMIT")
        with pytest.raises(duckdb.TransactionException):
            appender.execute(CLAIM_SEQUENCES, append_args).fetchall()
        appender.execute("ROLLBACK")
        assert stream.head(TENANT).epoch == 2 and stream.head(TENANT).last_seq == 0
    else:  # the append got there first; the takeover has to wait and try again
        assert appender.execute(CLAIM_SEQUENCES, append_args).fetchall() == [(1,)]
        with pytest.raises(duckdb.TransactionException):
            taker.execute(TAKE_OWNERSHIP, ["B", 2, 0.0, TENANT, 1]).fetchall()
        taker.execute("ROLLBACK")
        appender.execute("COMMIT")
        assert stream.head(TENANT).epoch == 1 and stream.head(TENANT).last_seq == 1


def test_turnstile_serves_a_waiting_writer_before_one_that_comes_straight_back():
    """Why a takeover cannot be starved by an owner appending back to back (the cause of a CI failure)."""
    gate = Turnstile()
    order: list[str] = []
    queued = threading.Event()

    def late_arrival() -> None:
        queued.set()
        with gate:
            order.append("B")

    with gate:
        order.append("A")
        waiter = threading.Thread(target=late_arrival)
        waiter.start()
        queued.wait()
        deadline = time.monotonic() + 10
        while gate._next_ticket < 2 and time.monotonic() < deadline:  # B has taken its ticket
            time.sleep(0.001)
    with gate:  # A comes straight back: it must queue behind B
        order.append("A again")
    waiter.join()
    assert order == ["A", "B", "A again"]


def test_a_failed_takeover_stops_the_race_and_is_reported(monkeypatch):
    stream = OrderedStream()
    real_acquire = stream.acquire

    def acquire(tenant_id, owner_id, **kw):
        if owner_id == "B":
            raise RuntimeError("provider of leases is down")
        return real_acquire(tenant_id, owner_id, **kw)

    monkeypatch.setattr(stream, "acquire", acquire)
    with pytest.raises(RuntimeError, match="owner B failed") as failed:
        race_two_owners(stream, TENANT, takeover_after=1)
    assert "leases is down" in str(failed.value.__cause__)
    assert stream.head(TENANT).last_seq < 20_000  # A stopped instead of appending to its cap


@pytest.mark.parametrize("round_", range(8))
def test_two_owners_racing_in_threads(round_):
    stream = OrderedStream()
    report = race_two_owners(stream, TENANT, takeover_after=1 + round_ % 4)
    assert len(report.refusals) == 1 and f"epoch {report.b_epoch}" in report.refusals[0]
    events = assert_gap_free(stream)
    # what each owner was told it wrote is exactly what the stream holds, and nothing else
    assert sorted(report.a_told + report.b_told) == [(e.seq, e.payload) for e in events]
    last_a = max(seq for seq, _ in report.a_told)
    first_b = min(seq for seq, _ in report.b_told)
    assert last_a < first_b
    assert all(e.owner_id == "B" and e.epoch == report.b_epoch for e in events if e.seq >= first_b)
    assert all(e.owner_id == "A" and e.epoch == 1 for e in events if e.seq <= last_a)


def _process_owner(path: str, owner: str, takeover: bool, a_going, b_done, results) -> None:
    """One owner in its own process, opening the shared file once per step."""
    def step(work):
        with Database.open_when_free(path) as db:
            return work(OrderedStream(db=db))

    if takeover:
        a_going.wait(timeout=120)
    lease = step(lambda s: s.acquire(TENANT, owner, takeover=takeover))
    if takeover:
        b_done.set()
    told, refused = [], None
    for n in range(5 if takeover else 5_000):  # A is refused long before its cap, or the test fails
        batch = [f"{owner}-{n}-{k}" for k in range(1 + n % 3)]
        try:
            seqs = step(lambda s: s.append(lease, batch))
        except StaleOwner as exc:
            refused = str(exc)
            break
        told += list(zip(seqs, batch))
        if not takeover and n == 2:
            a_going.set()
        if not takeover and a_going.is_set():
            # DuckDB lets one process hold the file; without a gap between A's steps a loaded
            # machine can starve B's open for longer than open_when_free waits.
            time.sleep(0.02)
    results.put((owner, told, refused, b_done.is_set()))


def _process_owner_reporting(path, owner, takeover, a_going, b_done, results) -> None:
    """Report a crash as a result, so the test fails with the reason instead of a queue time-out."""
    try:
        _process_owner(path, owner, takeover, a_going, b_done, results)
    except BaseException as exc:  # pragma: no cover - only on failure
        results.put((owner, [], f"crashed: {exc!r}", False))
        raise


def test_two_owners_racing_in_processes(tmp_path, monkeypatch):
    # A spawned child re-runs the parent's __main__ file. After an AppTest run that is a Streamlit page
    # (pages/instructor.py, say), which would open the app's store in the child; give it a bare main.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    path = str(tmp_path / "stream.duckdb")
    with Database(path) as db:
        OrderedStream(db=db)  # create the schema before the race
    ctx = multiprocessing.get_context("spawn")
    a_going, b_done, results = ctx.Event(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_process_owner_reporting, args=(path, owner, owner == "B", a_going, b_done, results))
             for owner in ("A", "B")]
    for p in procs:
        p.start()
    outcome = {}
    try:
        for _ in procs:
            owner, told, refused, _seen = results.get(timeout=180)
            outcome[owner] = (told, refused)
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
    finally:
        for p in procs:  # never leave an owner running past a failed test
            if p.is_alive():
                p.kill()
    a_told, a_refused = outcome["A"]
    b_told, b_refused = outcome["B"]
    assert a_refused and "epoch 2" in a_refused and b_refused is None
    with Database(path) as db:
        stream = OrderedStream(db=db)
        events = assert_gap_free(stream)
        assert sorted(a_told + b_told) == [(e.seq, e.payload) for e in events]
        assert max(s for s, _ in a_told) < min(s for s, _ in b_told)
        assert {e.owner_id for e in events if e.epoch == 2} == {"B"}


def test_an_owner_that_retakes_the_stream_cannot_append_with_its_old_lease():
    stream = OrderedStream()
    old = stream.acquire(TENANT, "A")
    stream.append(old, ["a1"])
    other = stream.acquire(TENANT, "B", takeover=True)
    stream.append(other, ["b1"])
    again = stream.acquire(TENANT, "A", takeover=True)
    assert again.epoch == old.epoch + 2, "retaking is a new ownership, not a renewal of the old one"
    with pytest.raises(StaleOwner):
        stream.append(old, ["stale"])        # same owner id, but an epoch two takeovers old
    with pytest.raises(StaleOwner):
        stream.append(other, ["stale"])
    assert stream.append(again, ["a2"]) == [3]
    assert [e.payload for e in assert_gap_free(stream)] == ["a1", "b1", "a2"]
