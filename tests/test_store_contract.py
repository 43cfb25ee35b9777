"""One contract for both attempt stores: the embedded DuckDB file and PostgreSQL (embedded server).

Each test runs twice; the PostgreSQL-only ones cover what only several processes can break.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import psycopg
import pytest

from drills.store.accounts import AccessRefused, anonymous_learner, may_open
from drills.store.throttle import Client
from drills.backends import open_store
from drills.demo import populate
from drills.loader import load_catalogue
from drills.reports import aggregates
from drills.reports.exports import export_answers
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.reports.timeline import grant_history
from drills.schema import NumericQuestion
from drills.review import next_card
from drills.store import (MIGRATIONS, AnswerEntry, AttemptFinished, AttemptStore, RevealEntry, ReviewEntry,
                          is_postgres_target)
from tests.clock import FakeClock

ROOT = Path(__file__).resolve().parent.parent
ME = Client("cookie:me", "203.0.113.1")   # one browser for tries that only need to be counted somewhere


@pytest.fixture(params=["duckdb", "postgres"])
def target(request, tmp_path) -> str:
    """Where a store lives: a DuckDB file for this test, or a fresh database on the embedded server."""
    if request.param == "duckdb":
        return str(tmp_path / "contract.duckdb")
    return request.getfixturevalue("pg_url")


def _opening(target: str):
    """open_store on `target`, as often as a test likes; every store opened is closed afterwards."""
    stores = []

    def make(clock=None):
        store = open_store(target, clock=clock or FakeClock())
        stores.append(store)
        return store

    yield make
    for store in stores:
        store.close()


@pytest.fixture
def opened(target):
    yield from _opening(target)


@pytest.fixture
def pg_opened(pg_url):
    """For what only PostgreSQL allows: several processes (or pools) on one store."""
    yield from _opening(pg_url)


def _attempt(store, handle: str = "ada"):
    return store.start_attempt("one_tenant", handle, "c1", 45 * 60, seed=7)


def _raises_finished(write, attempt_id: int) -> None:
    with pytest.raises(AttemptFinished) as refused:
        write()
    assert refused.value.attempt_id == attempt_id


def test_the_factory_picks_the_backend_by_the_target(target, opened):
    store = opened()
    assert store.path == target
    assert isinstance(store, AttemptStore) != target.startswith("postgresql://")
    assert store.schema_version() == MIGRATIONS[-1][0]
    assert is_postgres_target("postgres://host/db") and is_postgres_target("postgresql://host/db")
    assert not is_postgres_target("data/postgresql.duckdb") and not is_postgres_target(":memory:")
    with pytest.raises(ValueError, match="open_store"):   # never a DuckDB file named after a URL
        AttemptStore("postgresql://host/db")


def test_locking_twice_returns_the_first_answer(opened):
    store = opened()
    attempt = _attempt(store)
    first, created = store.lock_answer(attempt.id, "q1", "board", "numeric", value=160, low=100, high=200)
    again, created_again = store.lock_answer(attempt.id, "q1", "board", "numeric", value=999)
    assert created and not created_again
    assert again == first and again.value == 160
    assert list(store.answers(attempt.id)) == ["q1"]
    assert [e.kind for e in store.events(attempt.id)].count("locked") == 1


def test_lock_answers_keeps_first_answers_and_logs_only_new_ones(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    store.lock_answer(attempt.id, "q1", "board", "numeric", value=7.0)
    got = store.lock_answers(attempt.id, [
        AnswerEntry("q1", "board", "numeric", value=8.0),
        AnswerEntry("q2", "board", "choice", choice="b", at=clock.t + 5),
        AnswerEntry("q2", "board", "choice", choice="c"),
        AnswerEntry("q3", "contain", "notes", notes='cap it, "then" page\nsomeone'),
        AnswerEntry("q4", "contain", "numeric", skipped=True),
    ])
    assert [(a.question_id, created) for a, created in got] == [
        ("q1", False), ("q2", True), ("q2", False), ("q3", True), ("q4", True)]
    assert got[0][0].value == 7.0 and got[2][0].choice == "b" and got[1][0].locked_at == clock.t + 5
    stored = store.answers(attempt.id)
    assert stored["q3"].notes == 'cap it, "then" page\nsomeone' and stored["q4"].skipped
    kinds = [e.kind for e in store.events(attempt.id)]
    assert kinds.count("locked") == 3 and kinds.count("skipped") == 1
    assert store.lock_answers(attempt.id, []) == []


def test_events_come_back_in_the_order_they_happened(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    steps = [("opened", "board"), ("opened", "break1"), ("opened", "board")]
    for kind, part in steps:
        clock.t += 1
        store.log_event(attempt.id, kind, part, {"from": "test"})
    store.lock_answer(attempt.id, "q1", "board", "numeric", value=1)   # same instant as the last 'opened'
    events = store.events(attempt.id)
    assert [(e.kind, e.part_id) for e in events] == [("started", None), *steps, ("locked", "board")]
    assert events[1].detail == {"from": "test"} and events[-1].detail == {"question": "q1"}
    assert store.last_opened_part(attempt.id) == "board"


def test_reveals_are_recorded_once_each(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    assert store.record_reveal(attempt.id, "board", "detect") is True
    clock.t += 10
    assert store.record_reveal(attempt.id, "board", "detect") is False
    assert store.record_reveals(attempt.id, [RevealEntry("board", "contain", clock.t + 1),
                                             RevealEntry("board", "detect", clock.t + 2),
                                             RevealEntry("board", "contain", clock.t + 3)]) == [True, False, False]
    assert store.reveals(attempt.id) == {("board", "detect"): clock.t - 10, ("board", "contain"): clock.t + 1}
    assert [e.kind for e in store.events(attempt.id)].count("revealed") == 2


def test_rubric_scores_and_note_ratings_are_append_only(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    for level in ("weak", "strong"):
        clock.t += 1
        store.add_rubric_score(attempt.id, "noisy_tenant", level, scorer="self", scorer_name="ada")
    store.add_rubric_score(attempt.id, "noisy_tenant", "ok", scorer="instructor", scorer_name="ines", reason="why")
    history = store.rubric_history(attempt.id)
    assert [(h.level, h.scorer) for h in history] == [("weak", "self"), ("strong", "self"), ("ok", "instructor")]
    assert history[-1].reason == "why"
    for rating in ("missed", "partial"):
        clock.t += 1
        store.rate_note(attempt.id, "b1_plan", rating)
    assert store.note_ratings(attempt.id) == {"b1_plan": "partial"}
    assert store.query("SELECT COUNT(*) FROM note_ratings").fetchone()[0] == 2


def test_grants_add_up_and_are_listed_oldest_first(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    store.grant_time(attempt.id, 600, granted_by="ines", reason="adjustment")
    clock.t += 5
    store.grant_time(attempt.id, 300, granted_by="omar")
    assert store.attempt_by_id(attempt.id).extra_s == 900
    assert [(g.granted_by, g.minutes, g.reason) for g in grant_history(store, attempt.id)] == [
        ("ines", 10, "adjustment"), ("omar", 5, "")]


def test_finish_is_recorded_once(opened):
    clock = FakeClock(100.0)
    store = opened(clock)
    attempt = _attempt(store)
    clock.t = 150.0
    store.finish(attempt.id)
    clock.t = 160.0
    store.finish(attempt.id)
    assert store.attempt_by_id(attempt.id).finished_at == 150.0
    assert [e.kind for e in store.events(attempt.id)].count("finished") == 1


def test_a_finished_attempt_refuses_lockins_self_scores_and_ratings(opened):
    store = opened()
    attempt = _attempt(store)
    store.lock_answer(attempt.id, "q1", "board", "numeric", value=160)
    store.add_rubric_score(attempt.id, "containment", "ok")
    store.finish(attempt.id)

    def everything():
        return (store.answers(attempt.id), store.rubric_history(attempt.id), store.note_ratings(attempt.id),
                len(store.events(attempt.id)))

    before = everything()
    for write in (lambda: store.lock_answer(attempt.id, "q2", "board", "numeric", value=1),
                  lambda: store.lock_answer(attempt.id, "q3", "board", "numeric", skipped=True),
                  lambda: store.lock_answers(attempt.id, [AnswerEntry("q4", "board", "choice", choice="a")]),
                  lambda: store.add_rubric_score(attempt.id, "containment", "strong"),
                  lambda: store.rate_note(attempt.id, "q5", "full")):
        _raises_finished(write, attempt.id)
    assert everything() == before
    store.add_rubric_score(attempt.id, "containment", "weak", scorer="instructor", scorer_name="ines", reason="x")
    assert store.rubric_history(attempt.id)[-1].scorer == "instructor"


def test_reopening_applies_no_migration_twice(opened):
    first = opened()
    attempt = _attempt(first)
    first.close()
    again = opened()
    assert again.schema_version() == MIGRATIONS[-1][0]
    assert again.query("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)
    assert again.attempt_by_token(attempt.token) == attempt


def test_tokens_are_unguessable_and_lookups_refuse_junk(opened):
    store = opened()
    tokens = {_attempt(store, f"c{i}").token for i in range(10)}
    assert len(tokens) == 10 and all(len(t) >= 24 for t in tokens)
    for junk in ("", "x" * 500, "' OR 1=1 --"):
        assert store.attempt_by_token(junk) is None


def _in_threads(count: int, work) -> None:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            barrier.wait()
            work(index)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_eight_threads_of_fifty_lockins_give_exactly_400_rows(opened):
    store = opened()
    attempts = [_attempt(store, f"cand{i}") for i in range(8)]

    def work(index: int) -> None:
        for n in range(50):
            # every thread also re-locks a question another thread owns: duplicates must be absorbed
            store.lock_answer(attempts[index].id, f"q{n}", "p", "numeric", value=n)
            store.lock_answer(attempts[(index + 1) % 8].id, f"q{n}", "p", "numeric", value=-1)

    _in_threads(8, work)
    total, distinct, events = store.query(
        "SELECT COUNT(*), COUNT(DISTINCT (attempt_id, question_id)), "
        "(SELECT COUNT(*) FROM attempt_events WHERE kind = 'locked') FROM answers").fetchone()
    assert total == distinct == events == 400


def test_a_lockin_racing_finish_lands_before_it_or_not_at_all(opened):
    store = opened()
    attempts = [_attempt(store, f"race{i}") for i in range(12)]
    refused = []

    def work(index: int) -> None:
        for attempt in attempts:
            if index == 0:
                store.finish(attempt.id)
            else:
                try:
                    store.lock_answer(attempt.id, f"q{index}", "p", "numeric", value=1)
                except AttemptFinished:
                    refused.append(attempt.id)

    _in_threads(4, work)
    for attempt in attempts:
        kinds = [e.kind for e in store.events(attempt.id)]   # one clock instant: in the order committed
        after_finish = kinds[kinds.index("finished") + 1:]
        assert "locked" not in after_finish
        assert len(store.answers(attempt.id)) + refused.count(attempt.id) == 3


OPENER = r"""
import sys
import drills.store.postgres
from drills.backends import open_store
print("ready", flush=True)
sys.stdin.readline()
store = open_store(sys.argv[1])
print(store.schema_version(), flush=True)
store.close()
"""


def _run_together(script: str, args_per_process: list[list[str]]) -> list[str]:
    """Start one process per argument list; once every one says "ready", release them all at once on stdin.

    Returns what each printed after that.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for args in args_per_process]
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        outputs.append(out)
    return outputs


LOCKER = r"""
import sys
from drills.backends import open_store
store = open_store(sys.argv[1])
attempt_id, value = int(sys.argv[2]), float(sys.argv[3])
store.attempt_by_id(attempt_id)   # connected and warm before the start signal
print("ready", flush=True)
sys.stdin.readline()
won = [q for q in range(int(sys.argv[4])) if store.lock_answer(attempt_id, f"q{q}", "p", "numeric", value=value)[1]]
print(" ".join(map(str, won)), flush=True)
store.close()
"""


def test_two_processes_locking_the_same_questions_each_question_has_one_winner(pg_url, pg_opened):
    store = pg_opened()
    attempt = _attempt(store)
    questions = 150
    outputs = _run_together(LOCKER, [[pg_url, str(attempt.id), str(value), str(questions)] for value in (1.0, 2.0)])
    won = [{int(q) for q in out.split()} for out in outputs]
    assert won[0].isdisjoint(won[1]) and won[0] | won[1] == set(range(questions))
    stored = store.answers(attempt.id)
    assert len(stored) == questions
    for value, questions_won in zip((1.0, 2.0), won):
        assert all(stored[f"q{q}"].value == value for q in questions_won)
    assert [e.kind for e in store.events(attempt.id)].count("locked") == questions


def test_processes_starting_together_on_a_new_database_migrate_it_once(pg_url, pg_opened):
    versions = _run_together(OPENER, [[pg_url]] * 3)
    assert [v.strip() for v in versions] == [str(MIGRATIONS[-1][0])] * 3
    store = pg_opened()
    assert store.query("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_reports_see_writes_from_another_process_and_pull_once_per_change(pg_opened):
    reader, writer = pg_opened(), pg_opened()   # two stores, two pools: as two app processes would be
    attempt = _attempt(writer)
    count = "SELECT COUNT(*) FROM answers"
    assert reader.query(count).fetchone()[0] == 0
    pulls = reader._reports.pulls
    for _ in range(3):
        assert reader.query(count).fetchone()[0] == 0
    assert reader._reports.pulls == pulls          # nothing written: the copy is reused
    writer.lock_answer(attempt.id, "q1", "p", "numeric", value=3)
    assert reader.query(count).fetchone()[0] == 1  # committed before the call: seen
    rowids = reader.query("SELECT id FROM attempt_events ORDER BY rowid").fetchall()
    assert rowids == sorted(rowids)                # rows are loaded in the order they were added


# What a test compares between the report copy and PostgreSQL itself: every row, duplicates included.
COMPARED = {"candidates": "id, handle", "attempts": "id, token", "answers": "attempt_id, question_id, value",
            "attempt_events": "id, attempt_id, kind, part_id"}


def _copied(store) -> dict[str, list]:
    return {table: sorted(store.query(f"SELECT {columns} FROM {table}").fetchall()) for table, columns in COMPARED.items()}


def _in_postgres(url: str) -> dict[str, list]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {table: sorted(conn.execute(f"SELECT {columns} FROM {table}").fetchall())
                for table, columns in COMPARED.items()}


def _add_late_rows(conn, attempt_id: int, question_id: str) -> int:
    """An event and an answer in `conn`'s open transaction; returns the event's id (taken now, committed later)."""
    conn.execute("INSERT INTO answers (attempt_id, question_id, part_id, kind, value, skipped, locked_at) "
                 "VALUES (%s, %s, 'p', 'numeric', 1.0, false, 1)", [attempt_id, question_id])
    return conn.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) "
                        "VALUES (%s, 1, 'opened', %s, '{}') RETURNING id", [attempt_id, question_id]).fetchone()[0]


def test_a_row_that_commits_after_a_higher_id_was_copied_still_reaches_the_reports(pg_url, pg_opened):
    store = pg_opened()
    attempt = _attempt(store)
    events = "SELECT id FROM attempt_events"
    store.query(events)
    with psycopg.connect(pg_url) as late:
        late_id = _add_late_rows(late, attempt.id, "late")
        store.log_event(attempt.id, "opened", "p2")            # a higher id, committed first
        copied = [row[0] for row in store.query(events).fetchall()]
        assert late_id not in copied and max(copied) > late_id
        late.commit()
    copied = [row[0] for row in store.query(events).fetchall()]
    assert copied.count(late_id) == 1                          # "ids past the last one copied" would miss it
    assert _copied(store) == _in_postgres(pg_url)
    assert store._reports.full_pulls == 1 and store._reports.pulls == 3


def test_pulled_rows_match_postgresql_whatever_order_transactions_commit_or_abort_in(pg_url, pg_opened):
    import random

    rng = random.Random(20)
    store = pg_opened()
    attempt = _attempt(store)
    others = [psycopg.connect(pg_url) for _ in range(4)]
    busy: list[psycopg.Connection] = []
    checks = 0
    try:
        for step in range(80):
            roll = rng.random()
            if roll < 0.3 and len(busy) < len(others):
                conn = rng.choice([c for c in others if c not in busy])
                _add_late_rows(conn, attempt.id, f"q{step}")
                busy.append(conn)
            elif roll < 0.5 and busy:
                busy.pop(rng.randrange(len(busy))).commit()
            elif roll < 0.6 and busy:
                busy.pop(rng.randrange(len(busy))).rollback()
            elif roll < 0.75:
                store.lock_answer(attempt.id, f"s{step}", "p", "numeric", value=float(step))
            else:
                assert _copied(store) == _in_postgres(pg_url), f"step {step}"
                checks += 1
        for conn in busy:
            conn.commit()
        assert _copied(store) == _in_postgres(pg_url)
    finally:
        for conn in others:
            conn.close()
    assert checks >= 10 and store._reports.full_pulls == 1


def test_a_database_made_again_under_the_same_name_is_copied_whole(pg_server_url, pg_url, pg_opened):
    from psycopg import sql

    from labs.postgres.server import create_database

    store = pg_opened()
    _attempt(store, "ada")
    assert store.query("SELECT handle FROM candidates").fetchall() == [("ada",)]
    name = psycopg.conninfo.conninfo_to_dict(pg_url)["dbname"]
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
    create_database(pg_server_url, name)
    _attempt(pg_opened(), "bea")
    # Its transactions come after the last copy's snapshot, but so would a dropped table's rows: copy it all.
    assert store.query("SELECT handle FROM candidates").fetchall() == [("bea",)]
    assert store._reports.full_pulls == 2


def _spend_transaction_ids(url: str, count: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(count):
            conn.execute("SELECT pg_current_xact_id()")


def test_rows_restored_with_ids_the_server_has_not_reached_are_never_copied_twice(pg_url, pg_opened):
    writer, reader = pg_opened(), pg_opened()
    attempt = _attempt(writer)
    writer.lock_answer(attempt.id, "q1", "p", "numeric", value=1.0)
    # As pg_dump and a restore on a younger server leave them: the ids of transactions still to come.
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE answers SET added_by_xact = (pg_snapshot_xmax(pg_current_snapshot())::text::bigint "
                     "+ 100)::text::xid8")
    assert _copied(reader) == _in_postgres(pg_url)
    writer.lock_answer(attempt.id, "q2", "p", "numeric", value=2.0)
    assert _copied(reader) == _in_postgres(pg_url)
    assert reader._reports.full_pulls == 2             # both pulls copied every row

    pg_opened()                                        # a store's start-up restamps them
    writer.lock_answer(attempt.id, "q3", "p", "numeric", value=3.0)
    assert _copied(reader) == _in_postgres(pg_url)     # a full copy that finds the stamps sound
    _spend_transaction_ids(pg_url, 150)                # past the restored ids: they no longer matter
    writer.lock_answer(attempt.id, "q4", "p", "numeric", value=4.0)
    assert _copied(reader) == _in_postgres(pg_url)
    assert reader._reports.full_pulls == 3             # the last pull only added rows


def test_a_database_from_before_the_added_by_column_gains_it_at_start_up(pg_url, pg_opened):
    from drills.store.postgres import APPENDED_TABLES

    store = pg_opened()
    attempt = _attempt(store)
    store.lock_answer(attempt.id, "q1", "p", "numeric", value=1.0)
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in APPENDED_TABLES:
            conn.execute(f"ALTER TABLE {table} DROP COLUMN added_by_xact")
    reopened = pg_opened()
    assert _copied(reopened) == _in_postgres(pg_url)
    reopened.lock_answer(attempt.id, "q2", "p", "numeric", value=2.0)
    assert _copied(reopened) == _in_postgres(pg_url) and reopened._reports.full_pulls == 1


LOADED = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 50.0 for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
NOW = 1_790_000_000.0


KEY = DrillKey.from_loaded(LOADED, SIM_TRUTHS)


def _board(store) -> pd.DataFrame:
    return aggregates.leaderboard(store, KEY, Filters("one_tenant")).drop(columns=["candidate_id", "attempt_id"])


def _overridden(store) -> pd.Series:
    return aggregates.attempt_summary(store, KEY, Filters("one_tenant")).set_index("started_at")["overridden"]


def test_instructor_reports_on_postgresql_match_duckdb(pg_opened):
    pg = pg_opened()
    duck = AttemptStore(":memory:")
    for store in (pg, duck):
        populate(store, LOADED, candidates=10, cohorts=("north", "south"), seed=5, now=NOW, sim_truths=SIM_TRUTHS)
    pd.testing.assert_frame_equal(_board(pg), _board(duck), check_dtype=False)
    before = _overridden(pg)
    pd.testing.assert_series_equal(before, _overridden(duck), check_dtype=False)
    # The same late override on both, on an attempt nobody reviewed yet: each report picks it up (the
    # PostgreSQL copy is pulled again and its tallies recounted).
    started = before[before == 0].index[0]
    tallied = pg.query("SELECT COUNT(*) FROM attempt_tallies").fetchone()[0]
    for store in (pg, duck):
        target = next(a for a in store.attempts(drill_id="one_tenant") if a.started_at == started)
        store.add_rubric_score(target.id, LOADED.drill.rubric[0].id, "strong", scorer="instructor",
                               scorer_name="ines", reason="late review")
    # A report that reads between the new copy and cohort's recount sees the last counts, not none.
    assert pg.query("SELECT COUNT(*) FROM attempt_tallies").fetchone()[0] == tallied > 0
    after = _overridden(pg)
    assert after[started] == 1 and after.sum() == before.sum() + 1
    pd.testing.assert_series_equal(after, _overridden(duck), check_dtype=False)
    pd.testing.assert_frame_equal(_board(pg), _board(duck), check_dtype=False)
    assert pg._reports.full_pulls == 1, "the override was appended to the copy, past the tally marks"
    everyone = Filters("one_tenant")
    assert aggregates.counts(pg, everyone) == aggregates.counts(duck, everyone)
    # Every demo attempt draws its own numbers: the board's key grades each in its draw.
    key = DrillKey.from_loaded(LOADED, SIM_TRUTHS, variants=aggregates.variants_drawn(duck, "one_tenant"))
    for report in (aggregates.question_errors, aggregates.time_per_part, aggregates.calibration_by_skill, aggregates.skill_shares,
                   aggregates.skill_levels, export_answers):
        ours, theirs = (report(store, key, everyone).drop(columns=["candidate_id", "attempt_id"], errors="ignore")
                        for store in (pg, duck))
        assert len(ours) > 0, report.__name__
        pd.testing.assert_frame_equal(ours, theirs, check_dtype=False)
    duck.close()


def test_a_resume_code_is_issued_once_per_handle_and_cohort_and_checked_loosely(opened):
    store = opened()
    code = store.claim_handle("ada", "")
    assert code is not None and len(code) == 9
    assert store.claim_handle("ada", "") is None, "a handle's code is issued once and never replaced"
    assert store.check_resume_code("ada", code, client=ME)
    assert store.check_resume_code("ada", f"  {code.lower().replace('-', ' ')} ", client=ME)
    assert not store.check_resume_code("ada", code[:-1] + ("A" if code[-1] != "A" else "B"), client=ME)
    assert not store.check_resume_code("bea", code, client=ME), "a code opens only its own handle"
    assert not store.check_resume_code("ada", code, "north", client=ME), "nor the same handle in another cohort"
    other = store.claim_handle("bea", "")
    assert other is not None and other != code
    first = store.start_attempt("one_tenant", "ada", "north", 2700)
    second = store.start_attempt("one_tenant~break2", "ada", "", 2700)
    store.start_attempt("one_tenant", "bea", "north", 2700)
    assert [a.id for a in store.attempts(handle="ada")] == [first.id, second.id]
    assert store.claim_handle("ada", "north") is None, "a handle that has attempts is never issued a code"
    assert store.handle_status("ada", "north") == "closed" and store.handle_status("ada", "") == "coded"
    assert store.handle_status("cy", "") == "free"
    ada = anonymous_learner("ada", "")
    assert [a.id for a in store.learner_attempts(ada)] == [second.id], "history is per handle and cohort"


def test_an_account_works_under_one_candidate_per_class_and_a_unique_name(opened):
    store = opened()
    ana = store.account_for("https://id.example", "sub-1", "Ana@School.edu", "Ana")
    assert store.account_for("https://id.example", "sub-1", "changed@school.edu") == ana, "(issuer, subject) names it"
    bo = store.account_for("https://id.example", "sub-2", "bo@school.edu", "Bo")
    info, join = store.create_class("SRE cohort 7", "prof@school.edu")
    assert store.class_by_join_code(join, Client("account:1", "")).cohort == info.cohort
    assert store.class_by_join_code("wrong", Client("account:1", "")) is None
    mine = store.account_candidate(ana, info.cohort, "Ana")
    assert store.account_candidate(ana, info.cohort, "ignored later") == mine
    with pytest.raises(AccessRefused):
        store.account_candidate(bo, info.cohort, "Ana")
    attempt = store.start_attempt_for(mine, "one_tenant", 2700)
    assert attempt.account_id == ana.id and attempt.cohort == info.cohort
    assert not may_open(attempt.account_id, bo) and not may_open(attempt.account_id, None)
    assert may_open(attempt.account_id, ana)
    assert store.handle_status("Ana", info.cohort) == "account"
    assert [c.cohort for c in store.classes_for("prof@school.edu")] == [info.cohort]
    assert store.classes_for("bo@school.edu") == []
    renewed = store.renew_join_code(info.cohort)
    assert store.class_by_join_code(join, Client("account:2", "")) is None, "a renewed link retires the old one"
    assert store.class_by_join_code(renewed, Client("account:2", "")).cohort == info.cohort


def test_a_finished_attempt_gains_no_candidate_events(opened):
    store = opened()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    assert store.log_event(attempt.id, "opened", "prompt")
    store.finish(attempt.id)
    assert not store.log_event(attempt.id, "opened", "break1")
    assert not store.record_reveal(attempt.id, "break1", "detect")
    assert store.record_reveals(attempt.id, [RevealEntry("break1", "contain")]) == [False]
    assert [e.kind for e in store.events(attempt.id)] == ["started", "opened", "finished"]
    assert store.reveals(attempt.id) == {}
    store.grant_time(attempt.id, 60, granted_by="prof")          # instructor actions still land
    store.add_rubric_score(attempt.id, "sk", "ok", scorer="instructor", scorer_name="prof")
    assert [e.kind for e in store.events(attempt.id)][-2:] == ["extra_time", "scored"]


def _reviews(clock):
    """What an attempt of ada's puts up for review: one question missed (Again) 30 s ago, one skipped (Hard)."""
    return [ReviewEntry("one_tenant", "job_duration", 2, 1, 320.0, "missed", clock.t - 30),
            ReviewEntry("one_tenant", "utilisation", 2, 2, None, "skipped")]


def test_an_attempts_review_items_are_scheduled_once_and_fall_due_by_the_clock(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    store.finish(attempt.id)
    entries = _reviews(clock)
    assert store.schedule_reviews(attempt.id, "ada", entries, next_card) == 2
    assert store.schedule_reviews(attempt.id, "ada", entries, next_card) == 0, "finishing twice adds nothing"
    assert opened(clock).schedule_reviews(attempt.id, "ada", entries, next_card) == 0, "nor does a reopened store"
    items = store.review_items("ada")
    assert [(i.question_id, i.rating, i.reviews, i.attempt_id, i.variant) for i in items] == [
        ("job_duration", 1, 1, attempt.id, 2), ("utilisation", 2, 1, attempt.id, 2)]
    missed, skipped = items
    assert (missed.reviewed_at, missed.due_at, missed.guess) == (clock.t - 30, clock.t + 30, 320.0)
    assert (skipped.reviewed_at, skipped.due_at, skipped.guess, skipped.reason) == (clock.t, clock.t + 330, None,
                                                                                     "skipped")
    assert store.count_due("ada") == 0 and store.due_reviews("ada") == []
    clock.t += 30
    assert [i.question_id for i in store.due_reviews("ada")] == ["job_duration"] and store.count_due("ada") == 1
    assert store.count_due("ada", at=clock.t + 300) == 2
    assert store.review_items("bea") == [] and store.count_due("bea") == 0, "a schedule is per handle"

    again = store.start_attempt("one_tenant~break1", "ada", "", 2700)
    store.schedule_reviews(again.id, "ada", entries[:1], next_card)
    [latest] = [i for i in store.review_items("ada") if i.question_id == "job_duration"]
    assert (latest.reviews, latest.attempt_id) == (2, again.id), "a later attempt reviews the same item again"


def test_a_review_appends_a_row_and_a_stale_one_stores_nothing(opened):
    clock = FakeClock()
    store = opened(clock)
    attempt = _attempt(store)
    store.schedule_reviews(attempt.id, "ada", _reviews(clock)[:1], next_card)
    [shown] = store.review_items("ada")
    clock.t += 120
    after = store.record_review("ada", "one_tenant", "job_duration", based_on=shown.id, variant=5, guess=32.0,
                                rating=3, advance=next_card)
    assert after is not None and after.id != shown.id
    assert (after.reviews, after.variant, after.guess, after.rating, after.attempt_id) == (2, 5, 32.0, 3, None)
    assert (after.reviewed_at, after.due_at) == (clock.t, clock.t + 600)
    assert store.review_items("ada") == [after] and store.count_due("ada") == 0
    stale = store.record_review("ada", "one_tenant", "job_duration", based_on=shown.id, variant=7, guess=1.0,
                                rating=1, advance=next_card)
    assert stale is None, "another tab reviewed it first"
    assert store.review_items("ada") == [after]
    assert store.record_review("ada", "one_tenant", "no_such_question", based_on=after.id, variant=0, guess=1.0,
                               rating=1, advance=next_card) is None


def test_claiming_a_candidate_gives_the_row_ensure_candidate_reads_and_a_code_that_opens_it(opened):
    store = opened()
    candidate, code = store.claim_candidate("Ada", "north")
    assert candidate == store.ensure_candidate("Ada", "north") and (candidate.handle, candidate.cohort) == ("Ada", "north")
    assert store.check_resume_code("Ada", code, "north", client=ME)
    assert store.claim_candidate("ada", "north") is None, "a look-alike of a claimed handle is not claimed again"
    store.start_attempt_for(store.ensure_candidate("bea", "north"), "one_tenant", 2700)
    assert store.claim_candidate("bea", "north") is None, "nor a handle that has attempts"
