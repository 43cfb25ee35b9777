"""Issue 38's lighter page run, on both stores: an attempt's view is one statement, and a lock-in returns the view
its own write transaction leaves, reading nothing after it commits."""
from __future__ import annotations

import pytest

from drills.backends import open_store
from drills.store import AttemptFinished, AttemptRecords, AttemptStore
from tests.clock import FakeClock
from tests.store_counter import counting


@pytest.fixture(params=["duckdb", "postgres"])
def store(request, tmp_path):
    target = str(tmp_path / "reads.duckdb") if request.param == "duckdb" else request.getfixturevalue("pg_url")
    opened = open_store(target, clock=FakeClock())
    yield opened
    opened.close()


def _counted(monkeypatch, store):
    return counting(monkeypatch, type(store))


def _worked_attempt(store):
    """An attempt with a bit of everything the view shows: answers, a reveal, two ratings, a hint, two parts
    opened, extra time."""
    attempt = store.start_attempt("one_tenant", "ada", "c1", 45 * 60, seed=7)
    for question, kind, fields in (("q_late", "numeric", {"value": 3.0, "low": 1.0, "high": 5.0}),
                                   ("q_notes", "notes", {"notes": "cap the tenant"}),
                                   ("q_skip", "choice", {"skipped": True})):
        store.clock.t += 1   # locked one after another, so their order is the clock's
        store.lock_answer(attempt.id, question, "board", kind, **fields)
    store.record_reveal(attempt.id, "board", "detect")
    store.rate_note(attempt.id, "q_notes", "full")
    store.rate_note(attempt.id, "q_notes", "partial")
    store.open_hint(attempt.id, "q_hinted", "board", 0)
    store.open_hint(attempt.id, "q_hinted", "board", 1)
    store.log_event(attempt.id, "opened", "intro")
    store.log_event(attempt.id, "opened", "board")
    store.grant_time(attempt.id, 120, granted_by="prof")
    return attempt


def test_an_attempts_view_is_one_statement_and_says_what_each_separate_read_says(store, monkeypatch):
    attempt = _worked_attempt(store)
    seen = _counted(monkeypatch, store)

    records = store.attempt_records(attempt.id)

    assert seen.round_trips == 1 and len(seen.reads) == 1, seen.sql
    seen.clear()
    assert records.answers == store.answers(attempt.id)
    assert list(records.answers) == ["q_late", "q_notes", "q_skip"]   # in the order they were locked
    assert records.answers["q_skip"].skipped and records.answers["q_late"].low == 1.0
    assert records.reveals == store.reveals(attempt.id)
    assert records.note_ratings == store.note_ratings(attempt.id) == {"q_notes": "partial"}
    assert records.hints == {"q_hinted": frozenset({0, 1})}
    assert (records.last_opened, records.extra_s, records.finished_at) == ("board", 120, None)

    store.finish(attempt.id)
    assert store.attempt_records(attempt.id).finished_at == store.attempt_by_id(attempt.id).finished_at is not None


def test_a_fresh_attempts_view_is_empty_and_another_attempts_rows_stay_out(store):
    mine = store.start_attempt("one_tenant", "ada", "c1", 45 * 60, seed=7)
    _worked_attempt(store)   # ada again, a second attempt with rows of every kind
    assert store.attempt_records(mine.id) == AttemptRecords({}, {}, {}, {}, None, 0.0, None)


def test_a_lock_in_returns_the_view_its_transaction_left_and_reads_nothing_after(store, monkeypatch):
    attempt = _worked_attempt(store)
    seen = _counted(monkeypatch, store)

    answer, created, records = store.lock_in(attempt.id, "q_hinted", "board", "numeric", value=7.0,
                                             hint_costs=(0.25, 0.5))

    # One write transaction and not one read outside it: hold the attempt, the view (also the finished and the
    # live-seat check), the answer and its event (DuckDB, with no attempt lock to take, looks before inserting).
    assert seen.transactions == 1 and seen.reads == [], seen.sql
    assert len(seen.writes) <= 4, seen.writes
    assert created and answer.value == 7.0 and answer.hint_cost == 0.75
    seen.clear()
    assert records == store.attempt_records(attempt.id)
    assert records.answers["q_hinted"] == answer and records.note_ratings == {"q_notes": "partial"}


def test_a_second_lock_in_returns_the_first_answer_and_a_finished_attempt_stores_none(store):
    attempt = _worked_attempt(store)
    first, created, _ = store.lock_in(attempt.id, "q_new", "board", "numeric", value=1.0)
    again, created_again, records = store.lock_in(attempt.id, "q_new", "board", "numeric", value=2.0)
    assert created and not created_again and again == first and records.answers["q_new"].value == 1.0
    assert store.lock_answer(attempt.id, "q_new", "board", "numeric", value=3.0) == (first, False)

    store.finish(attempt.id)
    with pytest.raises(AttemptFinished):
        store.lock_in(attempt.id, "q_after", "board", "numeric", value=1.0)
    assert "q_after" not in store.attempt_records(attempt.id).answers


def test_the_counter_sees_every_statement_of_the_separate_reads_it_replaces(tmp_path, monkeypatch):
    """The counter itself: the four reads a view took before issue 38 are four statements to it."""
    store = AttemptStore(tmp_path / "old.duckdb", clock=FakeClock())
    attempt = _worked_attempt(store)
    seen = counting(monkeypatch, AttemptStore)
    store.answers(attempt.id), store.reveals(attempt.id), store.hints_opened(attempt.id)
    store.note_ratings(attempt.id)
    assert seen.round_trips == 4 and len(seen.reads) == 4
    store.close()


def test_a_live_seats_view_says_it_is_one_and_a_solo_attempts_says_it_is_not(store):
    """A lock-in checks the room only for a seat, on the view's word (tests/test_live.py refuses a late one)."""
    session = store.start_live_session("c1", "one_tenant", "prof")
    seat = store.live_join(session.id, store.ensure_candidate("s0", "c1"), 600)
    solo = store.start_attempt("one_tenant", "s1", "c1", 600)
    assert store.attempt_records(seat.attempt_id).live_seat
    assert not store.attempt_records(solo.id).live_seat


def test_logging_an_event_is_one_statement_and_a_finished_attempt_gains_none(store, monkeypatch):
    attempt = store.start_attempt("one_tenant", "ada", "c1", 600)
    seen = _counted(monkeypatch, store)
    assert store.log_event(attempt.id, "opened", "board") is True
    assert len(seen.sql) == 1 and seen.transactions == 1, seen.sql   # the finished check rides in the insert
    store.finish(attempt.id)
    assert store.log_event(attempt.id, "opened", "intro") is False
    assert [(e.kind, e.part_id) for e in store.events(attempt.id)] == [("started", None), ("opened", "board"),
                                                                       ("finished", None)]
