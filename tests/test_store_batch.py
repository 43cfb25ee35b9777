"""Batch writes: lock_answers and record_reveals store exactly what the one-by-one calls store.

Both backends: DuckDB in memory, and PostgreSQL on the embedded server.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from drills.backends import open_store
from drills.store import AnswerEntry, AttemptStore, RevealEntry
from tests.clock import FakeClock

T0 = 1_790_000_000.0



# A numeric guess with a range, a choice, notes, two skips locked at the same instant (ties keep the
# order given), a second try at q1 that must lose, and a negative value.
ENTRIES = [
    AnswerEntry("q1", "board", "numeric", value=160.0, low=100.0, high=200.0, at=T0 + 10),
    AnswerEntry("q2", "board", "choice", choice="b", at=T0 + 20),
    AnswerEntry("q3", "contain", "notes", notes="cap the tenant; alert on queue age", at=T0 + 30),
    AnswerEntry("q4", "contain", "numeric", skipped=True, at=T0 + 40),
    AnswerEntry("q5", "contain", "numeric", skipped=True, at=T0 + 40),
    AnswerEntry("q1", "board", "numeric", value=999.0, at=T0 + 50),
    AnswerEntry("q6", "recover", "numeric", value=-3.5, at=T0 + 60),
]


def _one_by_one(store: AttemptStore, clock: FakeClock, attempt_id: int, entries) -> list:
    out = []
    for e in entries:
        clock.t = e.at
        out.append(store.lock_answer(attempt_id, e.question_id, e.part_id, e.kind, value=e.value, low=e.low,
                                     high=e.high, choice=e.choice, notes=e.notes, skipped=e.skipped))
    return out


def _stored(store: AttemptStore, attempt_id: int):
    answers = store.query("SELECT * FROM answers WHERE attempt_id = ? ORDER BY question_id", [attempt_id]).fetchall()
    events = [(e.at, e.kind, e.part_id, dict(e.detail)) for e in store.events(attempt_id)]
    return answers, events


@pytest.fixture(params=["duckdb", "postgres"])
def pair(request):
    """Two stores, each with a clock and an attempt: one written call by call, the other in batches.

    DuckDB: two separate in-memory databases. PostgreSQL: two stores on one fresh database.
    """
    target = ":memory:" if request.param == "duckdb" else request.getfixturevalue("pg_url")
    stores = []
    for _ in range(2):
        clock = FakeClock()
        store = open_store(target, clock=clock)
        stores.append((store, clock, store.start_attempt("one_tenant", "ada", "c1", 2700, seed=1)))
    yield stores
    for store, _, _ in stores:
        store.close()


def test_lock_answers_stores_the_same_rows_and_events_as_lock_answer_calls(pair):
    (one, one_clock, a1), (batch, _, a2) = pair
    expected = _one_by_one(one, one_clock, a1.id, ENTRIES)
    got = batch.lock_answers(a2.id, ENTRIES)
    assert [created for _, created in got] == [created for _, created in expected] == [
        True, True, True, True, True, False, True]
    # the attempt ids differ by store; everything else must match
    assert [replace(a, attempt_id=0) for a, _ in got] == [replace(a, attempt_id=0) for a, _ in expected]
    assert got[5][0].value == 160.0                      # the second try at q1 got the first answer back
    answers_one, events_one = _stored(one, a1.id)
    answers_batch, events_batch = _stored(batch, a2.id)
    assert [r[1:] for r in answers_batch] == [r[1:] for r in answers_one]
    assert events_batch == events_one
    kinds = [k for _, k, _, _ in events_batch]
    assert kinds.count("locked") == 4 and kinds.count("skipped") == 2
    ids = [r[0] for r in batch.query("SELECT id FROM attempt_events WHERE attempt_id = ? AND kind IN "
                                     "('locked', 'skipped') ORDER BY happened_at, id", [a2.id]).fetchall()]
    assert ids == sorted(ids)                               # ids follow the order of the lock-ins


def test_lock_answers_refuses_what_is_already_stored_and_logs_nothing_for_it(pair):
    (store, clock, attempt), _ = pair
    store.lock_answer(attempt.id, "q1", "board", "numeric", value=7.0)
    before = len(store.events(attempt.id))
    again = store.lock_answers(attempt.id, [AnswerEntry("q1", "board", "numeric", value=8.0, at=T0 + 5),
                                            AnswerEntry("q1", "board", "numeric", value=9.0, at=T0 + 6)])
    assert [(a.value, created) for a, created in again] == [(7.0, False), (7.0, False)]
    assert len(store.events(attempt.id)) == before
    assert store.query("SELECT COUNT(*) FROM answers").fetchone()[0] == 1
    mixed = store.lock_answers(attempt.id, [AnswerEntry("q1", "board", "numeric", value=1.0),
                                            AnswerEntry("q2", "board", "numeric", value=2.0)])
    assert [created for _, created in mixed] == [False, True]
    assert mixed[1][0].locked_at == clock()                 # no `at`: the store's clock
    assert [e.kind for e in store.events(attempt.id)].count("locked") == 2
    assert store.lock_answers(attempt.id, []) == []


def test_a_batch_bigger_than_one_statement_is_stored_whole(pair):
    (store, _, attempt), _ = pair
    entries = [AnswerEntry(f"q{i}", "p", "numeric", value=float(i), at=T0 + i) for i in range(1203)]
    assert all(created for _, created in store.lock_answers(attempt.id, entries))
    assert len(store.answers(attempt.id)) == 1203
    assert [e.kind for e in store.events(attempt.id)].count("locked") == 1203


def test_record_reveals_matches_record_reveal_calls(pair):
    (one, one_clock, a1), (batch, _, a2) = pair
    reveals = [RevealEntry("board", "detect", T0 + 1), RevealEntry("board", "contain", T0 + 2),
               RevealEntry("board", "detect", T0 + 3), RevealEntry("recover", "followup", T0 + 4)]
    expected = []
    for r in reveals:
        one_clock.t = r.at
        expected.append(one.record_reveal(a1.id, r.part_id, r.section))
    assert batch.record_reveals(a2.id, reveals) == expected == [True, True, False, True]
    assert batch.reveals(a2.id) == one.reveals(a1.id)
    assert _stored(batch, a2.id)[1] == _stored(one, a1.id)[1]
    assert batch.record_reveals(a2.id, reveals[:1]) == [False]
