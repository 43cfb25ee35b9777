"""The instructor board stays quick with variants: answers meet the grading key already carrying their
attempt's variant, and the board's key runs the simulations of the variants attempts drew, no others.
"""
from __future__ import annotations

import json

import pytest

from bench.bench_instructor import build
from drills import scoring
from drills.loader import load_catalogue
from drills.reports import aggregates, source
from drills.reports.exports import export_answers
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.schema import NumericQuestion
from drills.store import AttemptStore
from drills.draws import sample_draws
from drills.variants import in_variant
from ui.instructor import board as board_ui
from ui.drill.attempt_view import sim_truths_of

ONE_TENANT = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 100.0 for q in ONE_TENANT.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
# A formula question whose truth variant 3 moves, to grade a retake without running a simulation for it.
NUMERIC_Q = next(q for q in ONE_TENANT.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim is None
                 and in_variant(ONE_TENANT, 3).values[q.id] != ONE_TENANT.values[q.id])


def _joins(plan) -> list[list[str]]:
    """The conditions of every join in a DuckDB JSON plan."""
    out = []
    for node in plan if isinstance(plan, list) else [plan]:
        conditions = node.get("extra_info", {}).get("Conditions")
        if conditions:
            out.append(conditions if isinstance(conditions, list) else [conditions])
        out.extend(_joins(node.get("children", [])))
    return out


def test_no_grading_report_joins_the_attempts_to_the_key_on_the_variant_alone(tmp_path, monkeypatch):
    # Joined on the variant alone, every attempt meets every key row of its variant (680k rows on the
    # million-answer board) before the answers come in: question_errors took twice as long.
    db = tmp_path / "board.duckdb"
    build(db, answers=3_000, candidates=20)
    store = AttemptStore(db)
    key = DrillKey.from_loaded(ONE_TENANT, SIM_TRUTHS)
    sent = []
    real_frame = source.frame
    monkeypatch.setattr(source, "frame", lambda s, sql, params=None: sent.append((sql, params)) or real_frame(
        s, sql, params))
    everyone = Filters("one_tenant")
    for report in (aggregates.question_errors, aggregates.question_sample, aggregates.calibration_by_skill,
                   export_answers):
        report(store, key, everyone)
    grading = [(sql, params) for sql, params in sent if "qkey" in sql]
    assert len(grading) == 4
    for sql, params in grading:
        joins = _joins(json.loads(store.query("EXPLAIN (FORMAT json) " + sql, params).fetchone()[1]))
        on_variant = [c for c in joins if any("variant" in part for part in c)]
        assert on_variant, "answers are graded against their attempt's variant"
        assert all(any("question_id" in part for part in c) for c in on_variant), on_variant
    store.close()


# -- the board's key runs the simulations of the variants attempts drew ---------------------------
def _moved_simulation(loaded) -> tuple[int, str]:
    """A seeded variant and a simulation question whose run it moves past the half-credit band."""
    written = sim_truths_of(loaded)
    for number in sample_draws(40):
        runs = sim_truths_of(in_variant(loaded, number))
        for qid, truth in runs.items():
            band = scoring.tolerance_band(written[qid], loaded.drill.question(qid).tolerance)
            if abs(truth - written[qid]) > 2 * band:
                return number, qid
    raise AssertionError(f"no variant of {loaded.drill.id} moves a simulation past its tolerance")


def test_the_board_runs_the_simulations_of_drawn_variants_only_and_grades_a_retake_on_its_own(tmp_path,
                                                                                             monkeypatch):
    loaded = ONE_TENANT
    retake, qid = _moved_simulation(loaded)
    truth = {0: sim_truths_of(loaded)[qid], retake: sim_truths_of(in_variant(loaded, retake))[qid]}
    part_id = scoring._part_of(loaded.drill)[qid]  # noqa: SLF001 - the drill's own question-to-part map
    store = AttemptStore(tmp_path / "board.duckdb")
    ids = {}
    for handle, variant in (("ada", 0), ("bob", retake)):
        attempt = store.start_attempt("one_tenant", handle, "north", 2700, seed=1, variant=variant)
        store.lock_answer(attempt.id, qid, part_id, "numeric", value=truth[variant])
        ids[attempt.id] = variant

    asked = []
    monkeypatch.setattr(board_ui, "sim_truths_of", lambda drill: asked.append(drill.variant) or sim_truths_of(drill))
    board = board_ui.Board(store, loaded, Filters("one_tenant"), "prof")
    key = board.key
    assert sorted(asked) == [0, retake], "the written numbers and the retake's variant, no other variant's runs"
    assert [v for v, _ in key.variant_grades] == [retake]

    # Each guess sits on its own variant's run and nowhere near the other's: full marks only if graded on it.
    exported = export_answers(store, key, board.filters).set_index("attempt_id")
    for attempt_id, variant in ids.items():
        assert exported.loc[attempt_id, "truth"] == pytest.approx(truth[variant])
        assert exported.loc[attempt_id, "score"] == 1.0
    summary = aggregates.attempt_summary(store, key, board.filters).set_index("attempt_id")
    assert list(summary.loc[list(ids), "earned"]) == [1.0, 1.0]
    errors = aggregates.question_errors(store, key, board.filters).set_index("question_id")
    assert errors.loc[qid, "in_tolerance"] == 1.0 and errors.loc[qid, "truth"] == pytest.approx(truth[0])

    # The same key as one built for every variant grades the same: only the unused variants' rows are missing.
    full = DrillKey.from_loaded(loaded, sim_truths_of, [retake, *sample_draws(3)])
    assert key.truths == full.truths and dict(key.variant_grades)[retake] == dict(full.variant_grades)[retake]
    store.close()


def test_a_retake_on_a_new_variant_gets_its_rows_on_the_next_run(tmp_path):
    loaded = ONE_TENANT
    store = AttemptStore(tmp_path / "board.duckdb")
    store.start_attempt("one_tenant", "ada", "", 2700, seed=1)
    before = board_ui.Board(store, loaded, Filters("one_tenant"), "prof")
    assert before.key.variant_grades == ()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700, seed=2, variant=3)
    after = board_ui.Board(store, loaded, Filters("one_tenant"), "prof")
    assert after.version != before.version, "the reports' caches see the retake"
    assert after.key.fingerprint != before.key.fingerprint and 3 in dict(after.key.variant_grades)
    store.lock_answer(attempt.id, NUMERIC_Q.id, scoring._part_of(loaded.drill)[NUMERIC_Q.id],  # noqa: SLF001
                      "numeric", value=in_variant(loaded, 3).values[NUMERIC_Q.id])
    summary = aggregates.attempt_summary(store, after.key, after.filters).set_index("attempt_id")
    assert summary.loc[attempt.id, "earned"] == 1.0
    store.close()
