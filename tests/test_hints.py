"""Graded hints (issue 12): opening one before the lock-in costs its share of the mark, everywhere.

The store fixes the cost at the lock-in; the candidate's results, the board's SQL and the export all
take it off; the timeline shows when each hint was opened.
"""
from __future__ import annotations

import pytest

from drills import scoring
from drills.loader import check_file, load_catalogue
from drills.records import AttemptFinished, EventKind
from drills.reports import aggregates
from drills.reports.exports import export_answers
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.reports.timeline import timeline
from drills.schema import NumericQuestion
from drills.backends import open_store
from drills.store import AttemptStore
from tests.test_pages import _go, _lock_question, _start, _texts

CATALOGUE = load_catalogue()
ONE_TENANT = CATALOGUE.drills["one_tenant"]
HINTED = ONE_TENANT.drill.question("b1_backlog_growth")


@pytest.fixture(params=["duckdb", "postgres"])
def store(request, tmp_path):
    opened = (AttemptStore(tmp_path / "h.duckdb") if request.param == "duckdb"
              else open_store(request.getfixturevalue("pg_url")))
    yield opened
    opened.close()   # a PostgreSQL store's pool keeps threads and connections until closed


def test_shipped_drills_carry_hints_whose_costs_stay_below_the_mark():
    hinted = [q for loaded in CATALOGUE.drills.values() for q in loaded.drill.all_questions()
              if isinstance(q, NumericQuestion) and q.hints]
    assert len(hinted) >= 3
    assert all(0 < sum(h.cost for h in q.hints) < 1 for q in hinted)


def test_hints_that_cost_the_whole_mark_are_refused(tmp_path):
    text = open("drills/content/hot_tenant.yaml", encoding="utf-8").read()
    broken = tmp_path / "hot_tenant.yaml"
    broken.write_text(text.replace("            cost: 0.3\n", "            cost: 0.6\n          - {text: Again, cost: 0.5}\n", 1))
    _, errors = check_file(broken)
    assert any("hints' costs add up" in e.message for e in errors), errors


def test_a_hint_costs_only_when_opened_before_the_lock_in(store):
    attempt = store.start_attempt("one_tenant", "hana", "", 2700, seed=1)
    costs = tuple(h.cost for h in HINTED.hints)
    assert store.open_hint(attempt.id, HINTED.id, "break1", 0) is True
    assert store.open_hint(attempt.id, HINTED.id, "break1", 0) is False, "opening it again records nothing"
    assert store.hints_opened(attempt.id) == {HINTED.id: {0}}
    answer, created = store.lock_answer(attempt.id, HINTED.id, "break1", "numeric", value=3.0, hint_costs=costs)
    assert created and answer.hint_cost == pytest.approx(costs[0])
    assert store.answers(attempt.id)[HINTED.id].hint_cost == pytest.approx(costs[0]), "kept with the answer"
    assert store.open_hint(attempt.id, HINTED.id, "break1", 1) is False, "after the lock-in a hint is free"
    assert store.answers(attempt.id)[HINTED.id].hint_cost == pytest.approx(costs[0])
    other = next(q for q in ONE_TENANT.drill.part("break1").questions if q.kind == "numeric" and q.id != HINTED.id)
    plain, _ = store.lock_answer(attempt.id, other.id, "break1", "numeric", value=1.0)
    assert plain.hint_cost == 0.0
    store.finish(attempt.id)
    with pytest.raises(AttemptFinished):
        store.open_hint(attempt.id, "b3_hours_to_cap", "break3", 0)
    kinds = [e.kind for e in store.events(attempt.id)]
    assert kinds.count(EventKind.HINT_OPENED) == 1


def test_results_board_and_export_take_the_same_share_off(tmp_path):
    store = AttemptStore(tmp_path / "g.duckdb")
    attempt = store.start_attempt("one_tenant", "ivo", "", 2700, seed=2)
    truth = ONE_TENANT.values[HINTED.id]
    costs = tuple(h.cost for h in HINTED.hints)
    store.open_hint(attempt.id, HINTED.id, "break1", 0)
    store.open_hint(attempt.id, HINTED.id, "break1", 1)
    store.lock_answer(attempt.id, HINTED.id, "break1", "numeric", value=truth, hint_costs=costs)
    sims = {q.id: 1.0 for q in ONE_TENANT.drill.all_questions() if getattr(q, "sim", None)}
    results = scoring.grade_attempt(ONE_TENANT, store.answers(attempt.id), sim_values=sims)
    graded = next(r for r in results if r.question_id == HINTED.id)
    assert graded.score == pytest.approx(1 - sum(costs)), "a right answer keeps what the hints did not take"
    key = DrillKey.from_loaded(ONE_TENANT)
    summary = aggregates.attempt_summary(store, key, Filters("one_tenant")).set_index("attempt_id")
    assert summary.loc[attempt.id, "earned"] == pytest.approx(1 - sum(costs))
    export = export_answers(store, key, Filters("one_tenant")).set_index("question_id")
    assert export.loc[HINTED.id, "score"] == pytest.approx(1 - sum(costs))
    rows = timeline(ONE_TENANT, store.events(attempt.id), store.answers(attempt.id))
    prompt = ONE_TENANT.text(HINTED.prompt)   # the timeline names a question by its prompt, not its file id
    assert [r.what for r in rows if r.kind == EventKind.HINT_OPENED] == [f"hint 1 of {prompt}", f"hint 2 of {prompt}"]


def test_the_drill_page_opens_hints_one_at_a_time_and_charges_them(app_test, db_path):
    at = _start(app_test, handle="hugo")
    _go(at, "break1")
    questions = ONE_TENANT.drill.part("break1").questions
    for earlier in questions[:questions.index(HINTED)]:
        _lock_question(at, earlier, ONE_TENANT.values.get(earlier.id))
    buttons = [b for b in at.button if b.key and b.key.startswith(f"hint::{HINTED.id}")]
    assert len(buttons) == 1 and "25%" in buttons[0].label, "only the next hint is offered, with its price"
    buttons[0].click().run()
    assert not at.exception, at.exception
    assert "A queue grows by what arrives" in _texts(at)
    second = [b for b in at.button if b.key == f"hint::{HINTED.id}::1"]
    assert second and "on top of 25%" in second[0].label
    _lock_question(at, HINTED, ONE_TENANT.values[HINTED.id])
    store = AttemptStore(db_path)
    attempt = store.attempts(handle="hugo")[0]
    assert store.answers(attempt.id)[HINTED.id].hint_cost == pytest.approx(0.25)
    assert "cost 25% of this question's mark" in _texts(at)
    assert any("A queue grows by what arrives" in str(m.value) for e in at.expander for m in e.markdown), \
        "the hint stays readable after the lock-in"
    assert not [b for b in at.button if b.key and b.key.startswith(f"hint::{HINTED.id}")], "no hints after the lock"
