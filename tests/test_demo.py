"""The demo cohort: realistic attempts written through the store, and a CLI that checks its input."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from drills import answers as checks
from drills.demo import main, populate
from drills.loader import load_catalogue
from drills.reports import aggregates
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.reports.timeline import timeline
from drills.schema import NumericQuestion
from drills.store import AttemptStore

ROOT = Path(__file__).resolve().parent.parent
LOADED = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 50.0 for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
NOW = 1_790_000_000.0


@pytest.fixture(scope="module")
def demo():
    store = AttemptStore(":memory:")
    written = populate(store, LOADED, candidates=12, cohorts=("north", "south"), seed=11, now=NOW,
                       sim_truths=SIM_TRUTHS)
    return store, written


def test_every_candidate_has_an_attempt_in_the_past(demo):
    store, written = demo
    attempts = store.attempts(drill_id="one_tenant")
    assert written["candidates"] == 12 and len(attempts) == written["attempts"] >= 12
    assert len({a.candidate_id for a in attempts}) == 12
    assert {a.cohort for a in attempts} == {"north", "south"}
    assert all(a.started_at < NOW and a.time_box_s == LOADED.drill.time_box_min * 60 for a in attempts)
    assert store.clock() != NOW  # the store's own clock is given back afterwards


def test_answers_pass_the_candidate_checks_and_events_are_in_order(demo):
    store, _ = demo
    questions = {q.id: q for q in LOADED.drill.all_questions()}
    attempts = store.attempts(drill_id="one_tenant")
    flagged = 0
    for attempt in attempts:
        events = store.events(attempt.id)
        assert events[0].kind == "started"
        assert [e.at for e in events] == sorted(e.at for e in events)
        for answer in store.answers(attempt.id).values():
            assert answer.question_id in questions and answer.kind == questions[answer.question_id].kind
            if answer.kind == "numeric" and not answer.skipped:
                checks.numeric_entry(answer.value, answer.low, answer.high)
        rows = timeline(LOADED, events, store.answers(attempt.id))
        flagged += any(r.early for r in rows)
    assert flagged <= len(attempts) // 3, "a few demo candidates peek before locking in (issue 22), not most"


def test_finished_attempts_are_fully_self_scored_and_the_cohort_is_varied(demo):
    store, _ = demo
    key = DrillKey.from_loaded(LOADED, SIM_TRUTHS, aggregates.variants_drawn(store, "one_tenant"))
    summary = aggregates.attempt_summary(store, key, Filters("one_tenant"))
    finished = summary[summary["finished_at"].notna()]
    assert len(finished) >= len(summary) * 0.6
    skills = {s.id for s in LOADED.drill.rubric}
    for attempt_id in finished["attempt_id"]:
        assert {r.skill_id for r in store.rubric_history(int(attempt_id)) if r.scorer == "self"} == skills
    assert summary["score_pct"].std() > 3          # not everyone scores the same
    assert 0 < summary["hits"].sum() < summary["ranges"].sum()  # some ranges miss, as in life


def test_cli_writes_to_the_database_named_by_the_environment(tmp_path, monkeypatch):
    target = tmp_path / "demo.duckdb"
    monkeypatch.setenv("FAULTLINES_DB", str(target))
    monkeypatch.setattr("drills.demo.reference_sim_truths", lambda loaded: SIM_TRUTHS)
    assert main(["--candidates", "2", "--cohort", "spring-26"]) == 0
    store = AttemptStore(target)
    assert {a.cohort for a in store.attempts()} == {"spring-26"}
    store.close()


@pytest.mark.parametrize("args, message", [(["--cohort", "<b>x</b>"], "letters, digits"),
                                           (["--candidates", "0"], "between 1 and 2000"),
                                           (["--candidates", "1000000"], "between 1 and 2000"),
                                           (["--drill", "nope"], "no drill")])
def test_cli_refuses_bad_input_and_writes_nothing(tmp_path, args, message):
    target = tmp_path / "demo.duckdb"
    done = subprocess.run([sys.executable, "-m", "drills.demo", *args], cwd=ROOT, capture_output=True, text=True,
                          env={"FAULTLINES_DB": str(target), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 2
    assert message in done.stderr
    if target.exists():
        assert duckdb.connect(str(target)).execute("SELECT COUNT(*) FROM attempts").fetchone()[0] == 0
