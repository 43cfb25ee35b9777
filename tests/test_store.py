"""The attempt store: first lock wins, concurrent lock-ins, crash safety, migrations."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from drills.store import MIGRATIONS, AttemptStore

ROOT = Path(__file__).resolve().parent.parent


def _attempt(store: AttemptStore, handle: str = "ada"):
    return store.start_attempt("one_tenant", handle, "c1", 45 * 60, seed=7)


def test_locking_twice_returns_the_first_answer(tmp_path):
    store = AttemptStore(tmp_path / "s.duckdb")
    attempt = _attempt(store)
    first, created = store.lock_answer(attempt.id, "q1", "board", "numeric", value=160, low=100, high=200)
    again, created_again = store.lock_answer(attempt.id, "q1", "board", "numeric", value=999)
    assert created and not created_again
    assert again == first and again.value == 160
    assert len(store.answers(attempt.id)) == 1
    kinds = [e.kind for e in store.events(attempt.id)]
    assert kinds.count("locked") == 1


def test_eight_threads_of_250_lockins_give_exactly_2000_rows(tmp_path):
    store = AttemptStore(tmp_path / "s.duckdb")
    attempts = [_attempt(store, f"cand{i}") for i in range(8)]
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def worker(index: int) -> None:
        try:
            barrier.wait()
            for n in range(250):
                # every thread also re-locks a question another thread owns: duplicates must be absorbed
                store.lock_answer(attempts[index].id, f"q{n}", "p", "numeric", value=n)
                store.lock_answer(attempts[(index + 1) % 8].id, f"q{n}", "p", "numeric", value=-1)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    total, distinct = store.query(
        "SELECT COUNT(*), COUNT(DISTINCT (attempt_id, question_id)) FROM answers").fetchone()
    assert total == distinct == 2000


WRITER = r"""
import sys
from drills.store import AttemptStore
store = AttemptStore(sys.argv[1])
attempt = store.start_attempt("one_tenant", "crash", "", 2700, seed=1)
print("attempt", attempt.id, flush=True)
n = 0
while True:
    store.lock_answer(attempt.id, f"q{n}", "p", "numeric", value=n)
    print("ack", n, flush=True)
    n += 1
"""


def test_sigkill_mid_stream_loses_no_acknowledged_lockin(tmp_path):
    db = tmp_path / "crash.duckdb"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    attempt_id = int(proc.stdout.readline().split()[1])
    acked = -1
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 300:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reopened = AttemptStore(db)
    stored = reopened.answers(attempt_id)
    assert all(f"q{n}" in stored for n in range(acked + 1))
    assert reopened.schema_version() == MIGRATIONS[-1][0]


def test_reopening_applies_no_migration_twice(tmp_path):
    path = tmp_path / "m.duckdb"
    AttemptStore(path).close()
    store = AttemptStore(path)
    assert store.query("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)


def test_tokens_are_unguessable_and_lookups_refuse_junk(tmp_path):
    store = AttemptStore(tmp_path / "s.duckdb")
    tokens = {_attempt(store, f"c{i}").token for i in range(20)}
    assert len(tokens) == 20 and all(len(t) >= 24 for t in tokens)
    assert store.attempt_by_token("") is None
    assert store.attempt_by_token("x" * 500) is None
    assert store.attempt_by_token("' OR 1=1 --") is None


def test_rubric_scores_and_note_ratings_are_append_only(tmp_path):
    store = AttemptStore(tmp_path / "s.duckdb")
    attempt = _attempt(store)
    store.add_rubric_score(attempt.id, "noisy_tenant", "weak", scorer="self", scorer_name="ada")
    store.add_rubric_score(attempt.id, "noisy_tenant", "strong", scorer="self", scorer_name="ada")
    history = store.rubric_history(attempt.id)
    assert [h.level for h in history] == ["weak", "strong"]
    store.rate_note(attempt.id, "b1_plan", "missed")
    store.rate_note(attempt.id, "b1_plan", "partial")
    assert store.note_ratings(attempt.id) == {"b1_plan": "partial"}
    assert store.query("SELECT COUNT(*) FROM note_ratings").fetchone()[0] == 2


def test_finish_is_recorded_once(tmp_path):
    now = [100.0]
    store = AttemptStore(tmp_path / "s.duckdb", clock=lambda: now[0])
    attempt = _attempt(store)
    now[0] = 150.0
    store.finish(attempt.id)
    now[0] = 160.0
    store.finish(attempt.id)
    assert store.attempt_by_id(attempt.id).finished_at == 150.0
    assert [e.kind for e in store.events(attempt.id)].count("finished") == 1


def test_a_finished_attempt_refuses_lockins_self_scores_and_ratings(tmp_path):
    from drills.store import AnswerEntry, AttemptFinished

    store = AttemptStore(tmp_path / "s.duckdb")
    attempt = _attempt(store)
    store.lock_answer(attempt.id, "q1", "board", "numeric", value=160)
    store.add_rubric_score(attempt.id, "containment", "ok")
    store.finish(attempt.id)
    before = (store.answers(attempt.id), store.rubric_history(attempt.id), store.note_ratings(attempt.id),
              len(store.events(attempt.id)))
    refused = [
        lambda: store.lock_answer(attempt.id, "q2", "board", "numeric", value=1),
        lambda: store.lock_answer(attempt.id, "q3", "board", "numeric", skipped=True),
        lambda: store.lock_answers(attempt.id, [AnswerEntry("q4", "board", "choice", choice="a")]),
        lambda: store.add_rubric_score(attempt.id, "containment", "strong"),
        lambda: store.rate_note(attempt.id, "q5", "full"),
    ]
    for write in refused:
        try:
            write()
        except AttemptFinished as exc:
            assert exc.attempt_id == attempt.id
        else:
            raise AssertionError("a finished attempt accepted a write")
    after = (store.answers(attempt.id), store.rubric_history(attempt.id), store.note_ratings(attempt.id),
             len(store.events(attempt.id)))
    assert after == before
    # The instructor's override is still taken, and recorded as such.
    store.add_rubric_score(attempt.id, "containment", "weak", scorer="instructor", scorer_name="ines", reason="x")
    assert store.rubric_history(attempt.id)[-1].scorer == "instructor"
