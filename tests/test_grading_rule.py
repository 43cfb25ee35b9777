"""One grading rule: the SQL the reports grade with (drills/reports/grading_key.py) against the Python rule
(drills.scoring.grade_answer), cell by cell, over a generated table of cases.

The table covers every question kind (numeric with relative and absolute tolerances, a zero truth, a
negative truth; choice; notes by each rating; skips of each), every tolerance edge (on the edge, the
float either side of the scorer's slack, twice the band, beyond), every hint cost a lock-in can carry,
and 80% ranges on, inside and outside their edges. Both sides run over the same rows: the SQL through
the real grading key (ensure_key, stored_key_ctes, KEY_JOIN, SCORE, IN_RANGE), the Python through
grade_answer, the function ui/drill/lockin.py shows.
"""
from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import pytest

from drills import scoring
from drills.records import LockedAnswer
from drills.reports.grading_key import (IN_RANGE, KEY_JOIN, NOTE_SCORE_SQL, SCORE, DrillKey, ensure_key,
                                        stored_key_ctes)
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion, Option, Tolerance
from drills.store import AttemptStore

ROOT = Path(__file__).resolve().parent.parent

TOLERANCES = {"rel10": Tolerance(kind="relative", value=0.1), "rel25": Tolerance(kind="relative", value=0.25),
              "abs5": Tolerance(kind="absolute", value=5.0), "abs_tiny": Tolerance(kind="absolute", value=1e-6)}
TRUTHS = (160.0, -160.0, 0.0, 80.0, 7.5e6, 0.03)
HINT_COSTS = (0.0, 0.1, 0.25, 1 / 3, 0.5, 0.75, 0.9)


def _numeric(qid: str, tolerance: Tolerance) -> NumericQuestion:
    return NumericQuestion(id=qid, prompt="How many?", kind="numeric", unit="jobs", answer="1", tolerance=tolerance)


CHOICE = ChoiceQuestion(id="pick", prompt="Which?", kind="choice", answer="b",
                        options=(Option(id="a", text="A"), Option(id="b", text="B"), Option(id="c", text="C")))
NOTES = NotesQuestion(id="write", prompt="Why?", kind="notes", strong_answer="Because.")


def _guesses(truth: float, band: float) -> list[float]:
    """Every edge the rule has, both sides of each, on both sides of the truth."""
    out = [truth]
    for sign in (1, -1):
        for edge in (band, band * (1 + 1e-9), 2 * band, 2 * band * (1 + 1e-9)):
            at = truth + sign * edge
            out += [at, math.nextafter(at, math.inf), math.nextafter(at, -math.inf)]
        out += [truth + sign * band / 2, truth + sign * 1.5 * band, truth + sign * 3 * band]
    return out


def _ranges(truth: float, band: float) -> list[tuple[float | None, float | None]]:
    return [(None, None), (truth, truth), (truth - band, truth + band), (math.nextafter(truth, math.inf), truth + band),
            (truth - band, math.nextafter(truth, -math.inf)), (truth - 3 * band, truth - band)]


def _cases():
    """(question, truth, answer) rows: one numeric question per (tolerance, truth), a choice, a note."""
    questions, truths, cases = [], {}, []
    for (name, tolerance), truth in itertools.product(TOLERANCES.items(), TRUTHS):
        question = _numeric(f"n_{name}_{len(questions)}", tolerance)
        questions.append(question)
        truths[question.id] = truth
        band = scoring.tolerance_band(truth, tolerance)
        for guess, cost in itertools.product(_guesses(truth, band), HINT_COSTS):
            cases.append((question, _answer(question, value=guess, hint_cost=cost)))
        for (low, high), cost in itertools.product(_ranges(truth, band), (0.0, 0.5)):
            cases.append((question, _answer(question, value=truth + band, low=low, high=high, hint_cost=cost)))
        cases.append((question, _answer(question, skipped=True)))
        cases.append((question, _answer(question, skipped=True, hint_cost=0.5)))
    questions += [CHOICE, NOTES]
    cases += [(CHOICE, _answer(CHOICE, choice=o.id)) for o in CHOICE.options]
    cases += [(CHOICE, _answer(CHOICE, skipped=True)), (NOTES, _answer(NOTES, notes="some lines")),
              (NOTES, _answer(NOTES, skipped=True))]
    return questions, truths, cases


def _answer(question, *, value=None, low=None, high=None, choice=None, notes=None, skipped=False,
            hint_cost=0.0) -> LockedAnswer:
    return LockedAnswer(1, question.id, "p", question.kind, value, low, high, choice, notes, skipped, 0.0, hint_cost)


QUESTIONS, TRUTH_OF, CASES = _cases()


def _key() -> DrillKey:
    truths = [TRUTH_OF.get(q.id) for q in QUESTIONS]
    bands = [scoring.tolerance_band(t, q.tolerance) if t is not None else None for q, t in zip(QUESTIONS, truths)]
    return DrillKey("grading_cases", tuple(q.id for q in QUESTIONS), ("p",) * len(QUESTIONS),
                    tuple(q.kind for q in QUESTIONS), tuple(truths), tuple(bands),
                    tuple(q.answer if isinstance(q, ChoiceQuestion) else None for q in QUESTIONS),
                    (), (), (), (("p", "Part", 5.0),))


def _sql_grades(store: AttemptStore) -> dict[int, tuple]:
    """(score, in_range) of every case as the reports' SQL grades it."""
    key = _key()
    ensure_key(store, key)
    ctes, params = stored_key_ctes(key)
    rows = ", ".join(["(?::BIGINT, ?::VARCHAR, 0, 0, ?::BOOLEAN, ?::DOUBLE, ?::DOUBLE, ?::DOUBLE, ?::DOUBLE, "
                      "?::VARCHAR)"] * len(CASES))
    for i, (_, a) in enumerate(CASES):
        params += [i, a.question_id, a.skipped, a.hint_cost, a.value, a.low, a.high, a.choice]
    sql = (f"WITH {ctes}, cases AS (SELECT * FROM (VALUES {rows}) AS v(case_id, question_id, variant, graded_seed, "
           f"skipped, hint_cost, value, low, high, choice)) "
           f"SELECT an.case_id, {SCORE} AS score, {IN_RANGE} AS in_range FROM cases an {KEY_JOIN}")
    return {case_id: (score, in_range) for case_id, score, in_range in store.query(sql, params).fetchall()}


def test_the_case_table_reaches_every_kind_edge_and_hint_cost():
    kinds = {q.kind for q, _ in CASES}
    grades = {scoring.grade_answer(q, a, TRUTH_OF.get(q.id)).accuracy for q, a in CASES if q.kind == "numeric"}
    assert kinds == {"numeric", "choice", "notes"} and grades == {0.0, 0.5, 1.0}
    assert {a.hint_cost for _, a in CASES} >= set(HINT_COSTS)
    assert {scoring.grade_answer(q, a, TRUTH_OF.get(q.id)).in_range for q, a in CASES} == {None, True, False}
    assert len(CASES) > 3000


def test_sql_grades_every_case_as_the_python_rule_does(tmp_path):
    store = AttemptStore(tmp_path / "grading.duckdb")
    try:
        sql = _sql_grades(store)
    finally:
        store.close()
    assert len(sql) == len(CASES), "every case meets its key row"
    differ = []
    for i, (question, answer) in enumerate(CASES):
        grade = scoring.grade_answer(question, answer, TRUTH_OF.get(question.id))
        # Notes are NULL in SCORE: the SQL grades them by their latest rating, checked below.
        expected = (None if question.kind == "notes" and not answer.skipped else grade.score, grade.in_range)
        if sql[i] != expected:
            differ.append((question.id, answer.value, answer.low, answer.high, answer.hint_cost, sql[i], expected))
    assert differ == []


@pytest.mark.parametrize("rating", [*scoring.NOTE_SCORES, None])
def test_sql_scores_a_note_rating_as_the_python_rule_does(tmp_path, rating):
    store = AttemptStore(tmp_path / "notes.duckdb")
    try:
        [(sql_score,)] = store.query(f"SELECT CASE ?::VARCHAR {NOTE_SCORE_SQL} END", [rating]).fetchall()
    finally:
        store.close()
    assert sql_score == scoring.grade_answer(NOTES, _answer(NOTES, notes="lines"), None, rating).score


def test_the_lock_in_page_shows_the_grading_module_s_grade_and_grades_nothing_itself():
    """ui/drill/lockin.py once re-graded (grade_numeric), re-applied the hint share and re-checked the range."""
    tree = ast.parse((ROOT / "ui" / "drill" / "lockin.py").read_text(encoding="utf-8"))
    from_scoring = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "drills.scoring" for alias in node.names}
    assert from_scoring <= {"NOTE_SCORES", "AnswerGrade", "grade_answer"}
    source = ast.unparse(tree)
    assert "1 - answer.hint_cost" not in source and "answer.low <= truth" not in source


def test_the_badge_reads_the_grade_with_its_hint_share():
    from ui.drill.lockin import score_badge

    question = _numeric("n", TOLERANCES["rel10"])
    half = scoring.grade_answer(question, _answer(question, value=180.0, hint_cost=0.25), 160.0)
    assert (half.accuracy, half.score) == (0.5, 0.375)
    assert score_badge(half, 0.25) == (":orange-badge[:material/contrast: half marks], less 25% for hints: "
                                        "0.38 of 1")
    assert score_badge(scoring.grade_answer(question, _answer(question, value=160.0), 160.0)) == \
        ":green-badge[:material/check_circle: full marks]"
