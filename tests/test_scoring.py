"""Grading rules, calibration, rubric precedence and the verdict."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drills import scoring
from drills.loader import load_catalogue
from drills.schema import Tolerance
from drills.store import AttemptStore, RubricScore

REL10 = Tolerance(kind="relative", value=0.1)
ABS5 = Tolerance(kind="absolute", value=5)


@pytest.mark.parametrize("guess, expected", [(160, 1.0), (176, 1.0), (144, 1.0), (177, 0.5), (192, 0.5),
                                             (193, 0.0), (16, 0.0)])
def test_relative_tolerance_gives_full_then_half_marks(guess, expected):
    assert scoring.grade_numeric(guess, 160, REL10) == expected


@pytest.mark.parametrize("guess, expected", [(80, 1.0), (85, 1.0), (90, 0.5), (70, 0.5), (69.9, 0.0)])
def test_absolute_tolerance(guess, expected):
    assert scoring.grade_numeric(guess, 80, ABS5) == expected


@given(truth=st.floats(-1e6, 1e6, allow_nan=False), miss=st.floats(0, 1e6, allow_nan=False))
def test_score_never_rises_as_the_guess_moves_away(truth, miss):
    near = scoring.grade_numeric(truth + miss / 2, truth, REL10)
    far = scoring.grade_numeric(truth + miss, truth, REL10)
    assert far <= near


@pytest.fixture
def loaded():
    return load_catalogue().drills["one_tenant"]


def test_an_attempt_is_graded_question_by_question(tmp_path, loaded):
    store = AttemptStore(tmp_path / "g.duckdb")
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    store.lock_answer(attempt.id, "jobs_in_flight", "board", "numeric", value=150, low=100, high=200)
    store.lock_answer(attempt.id, "job_capacity", "board", "numeric", value=10, low=8, high=12)
    store.lock_answer(attempt.id, "b1_safeguard", "break1", "choice", choice="credit_check")
    store.lock_answer(attempt.id, "b1_arrivals", "break1", "numeric", skipped=True)
    store.lock_answer(attempt.id, "b1_plan", "break1", "notes", notes="<b>rate limit</b> per tenant")
    store.rate_note(attempt.id, "b1_plan", "partial")
    from sims import presets

    sim_values = scoring.sim_truths(loaded, attempt.seed, presets.evaluate)
    results = {r.question_id: r for r in scoring.grade_attempt(
        loaded, store.answers(attempt.id), sim_values=sim_values, note_ratings=store.note_ratings(attempt.id))}
    assert results["jobs_in_flight"].truth == 160 and results["jobs_in_flight"].score == 1.0
    assert results["jobs_in_flight"].in_range is True
    assert results["job_capacity"].score == 0.0 and results["job_capacity"].in_range is False
    assert results["b1_safeguard"].score == 1.0
    assert results["b1_arrivals"].score == 0.0  # skipped counts as zero
    assert results["b1_plan"].score == 0.5
    assert results["utilisation"].answer is None and results["utilisation"].score is None
    calibration = scoring.calibration(list(results.values()))
    assert (calibration.ranges, calibration.hits, calibration.hit_rate) == (2, 1, 0.5)
    totals = scoring.totals(list(results.values()))
    assert totals.earned == 2.5 and totals.answered == 5 and totals.possible == len(results)


def _score(skill, level, scorer="self", at=0.0):
    return RubricScore(skill, level, scorer, "x", "", at)


def test_latest_instructor_score_wins_over_self_scores():
    history = [_score("a", "weak", "instructor", 1), _score("a", "strong", "self", 2),
               _score("a", "ok", "instructor", 3), _score("b", "ok", "self", 4), _score("b", "strong", "self", 5)]
    levels = scoring.current_levels(history)
    assert levels["a"].level == "ok" and levels["a"].scorer == "instructor"
    assert levels["b"].level == "strong"


def test_verdict_needs_five_strong_and_warns_on_watched_weak_skills(loaded):
    drill = loaded.drill
    ids = [s.id for s in drill.rubric]
    levels = {sid: _score(sid, "strong") for sid in ids[:5]} | {sid: _score(sid, "weak") for sid in ids[5:]}
    outcome = scoring.verdict(drill, levels)
    assert outcome.passed and outcome.strong == 5 and outcome.complete
    levels["noisy_tenant"] = _score("noisy_tenant", "weak")
    outcome = scoring.verdict(drill, levels)
    assert not outcome.passed
    assert any("noisy tenant" in w.lower() for w in outcome.warnings)
    assert not scoring.verdict(drill, {}).complete


def _calibration_of(ranges: int, hits: int) -> scoring.Calibration:
    return scoring.Calibration(ranges=ranges, hits=hits)


def test_calibration_is_not_judged_from_fewer_than_the_minimum_ranges():
    few = scoring.MIN_RANGES_TO_JUDGE - 1
    for hits in range(few + 1):        # all missed, all held: still no verdict
        outcome = _calibration_of(few, hits)
        assert not outcome.judgeable
        assert outcome.verdict.startswith("Too few ranges to judge")
        assert f"{few} ranges were given" in outcome.verdict and f"at least {scoring.MIN_RANGES_TO_JUDGE}" in outcome.verdict
    assert "1 range was given" in _calibration_of(1, 0).verdict
    assert "too narrow" not in _calibration_of(1, 0).verdict


def test_calibration_keeps_its_verdicts_from_the_minimum_on():
    n = scoring.MIN_RANGES_TO_JUDGE
    assert n == 5
    assert _calibration_of(n, 0).judgeable
    assert "too narrow" in _calibration_of(n, 0).verdict                      # 0%
    assert "too narrow" in _calibration_of(n, 3).verdict                      # 60%
    assert "Well calibrated" in _calibration_of(n, 4).verdict                  # 80%
    assert "wider than they need to be" in _calibration_of(n, 5).verdict       # 100%
    assert _calibration_of(0, 0).verdict.startswith("No ranges given")


def test_verdict_names_levels_in_the_drills_own_words():
    drill = load_catalogue().drills["hot_tenant"].drill
    assert drill.level_label("strong") == "Staff"
    levels = {s.id: _score(s.id, "weak") for s in drill.rubric}
    levels[drill.rubric[0].id] = _score(drill.rubric[0].id, "strong")
    outcome = scoring.verdict(drill, levels)
    assert outcome.tally == f"Staff on 1 skill; {drill.verdict.strong_needed} needed."
    assert "strong" not in outcome.tally.lower()
    assert outcome.warnings and all("(Junior)" in w for w in outcome.warnings)


def test_verdict_tally_uses_default_names_when_the_drill_has_none(loaded):
    ids = [s.id for s in loaded.drill.rubric]
    outcome = scoring.verdict(loaded.drill, {sid: _score(sid, "strong") for sid in ids})
    assert outcome.tally == f"Strong on {len(ids)} skills; 5 needed."


# -- tolerance around negative and zero truths ---------------------------------------------------
@pytest.mark.parametrize("tolerance", [REL10, ABS5], ids=["relative", "absolute"])
@pytest.mark.parametrize("truth, guess", [(-160, -176), (-160, -144), (-160, -177), (-160, -192), (-160, -193),
                                          (-160, 160), (-0.5, -0.56), (-80, -70), (-80, -69.9)])
def test_a_negative_truth_is_graded_like_its_mirror_image(truth, guess, tolerance):
    assert scoring.grade_numeric(guess, truth, tolerance) == scoring.grade_numeric(-guess, -truth, tolerance)


def test_a_negative_truth_gets_full_half_and_no_marks_by_distance():
    assert [scoring.grade_numeric(g, -160, REL10) for g in (-160, -176, -144, -177, -192, -193, 160)] == \
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.0, 0.0]
    assert scoring.tolerance_band(-160, REL10) == pytest.approx(16)


@given(truth=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
       guess=st.floats(-1e6, 1e6, allow_nan=False))
def test_grading_does_not_depend_on_the_sign_of_the_quantity(truth, guess):
    for tolerance in (REL10, ABS5):
        assert scoring.grade_numeric(guess, truth, tolerance) == scoring.grade_numeric(-guess, -truth, tolerance)
        assert scoring.tolerance_band(truth, tolerance) > 0


def test_a_zero_truth_with_a_relative_tolerance_reads_the_fraction_in_the_unit():
    # Relative to zero is undefined, so the fraction stands as an absolute band: 0.1 units either side.
    assert [scoring.grade_numeric(g, 0, REL10) for g in (0, 0.1, -0.1, 0.2, -0.2, 0.21, 5)] == \
        [1.0, 1.0, 1.0, 0.5, 0.5, 0.0, 0.0]
    assert scoring.relative_error(3, 0) is None
    assert scoring.relative_error(-90, -100) == pytest.approx(0.1), "above a negative truth reads as over"


# -- the calibration verdict at its edges --------------------------------------------------------
def _expected_verdict(hits: int, ranges: int) -> str:
    """What the verdict texts claim, in exact fractions: within 15 points of the claimed 80% either side
    (both edges included) is calibrated, further below is too narrow, further above too wide."""
    from fractions import Fraction

    rate = Fraction(hits, ranges)
    if rate < Fraction(65, 100):
        return "too narrow"
    if rate > Fraction(95, 100):
        return "wider than they need to be"
    return "Well calibrated"


@pytest.mark.parametrize("ranges, hits", [(20, 19), (40, 38), (100, 95), (20, 13), (100, 65), (100, 96),
                                          (100, 64), (60, 57), (200, 191), (200, 129)])
def test_calibration_edges_are_read_the_same_way_on_both_sides(ranges, hits):
    assert _expected_verdict(hits, ranges) in scoring.Calibration(ranges, hits).verdict


def test_calibration_verdict_matches_its_text_for_every_count_up_to_two_hundred():
    wrong = [(n, h) for n in range(scoring.MIN_RANGES_TO_JUDGE, 201) for h in range(n + 1)
             if _expected_verdict(h, n) not in scoring.Calibration(n, h).verdict]
    assert not wrong, f"{len(wrong)} counts read differently from the text, e.g. {wrong[:5]}"
