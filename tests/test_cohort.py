"""Cohort reports: SQL grading agrees with drills.scoring, filters, levels, time, timelines, exports, checks."""
from __future__ import annotations

import io
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drills import instructor_actions as actions
from drills import scoring
from drills.answers import InputError
from drills.demo import populate
from drills.loader import load_catalogue
from drills.reports import aggregates
from drills.reports.exports import export_answers, export_attempts, to_csv_bytes, to_parquet_bytes
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.reports.timeline import timeline
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion
from drills.store import AttemptStore
from drills.variants import in_variant
from tests.clock import FakeClock

LOADED = load_catalogue().drills["one_tenant"]
DRILL = LOADED.drill
SIM_TRUTHS = {q.id: 100.0 for q in DRILL.all_questions() if isinstance(q, NumericQuestion) and q.sim}
KEY = DrillKey.from_loaded(LOADED, SIM_TRUTHS)
ALL = Filters("one_tenant")
NUMERIC = [q for q in DRILL.all_questions() if isinstance(q, NumericQuestion) and q.sim is None]
DAY = 86_400.0
T0 = 1_790_000_000.0



def _store(clock: FakeClock | None = None) -> AttemptStore:
    return AttemptStore(":memory:", clock=clock or FakeClock())


def _part_of(question_id: str) -> str:
    for part in DRILL.parts:
        ids = [q.id for q in part.questions] + ([q.id for q in part.followup.questions] if part.followup else [])
        if question_id in ids:
            return part.id
    raise KeyError(question_id)


def _lock_numeric(store, attempt_id, question, value, low=None, high=None):
    store.lock_answer(attempt_id, question.id, _part_of(question.id), "numeric", value=value, low=low, high=high)


@pytest.fixture(scope="module")
def demo_store():
    store = _store()
    populate(store, LOADED, candidates=8, cohorts=("north", "south"), seed=3, now=T0, sim_truths=SIM_TRUTHS)
    return store


@pytest.fixture(scope="module")
def demo_key(demo_store):
    """The key the board builds for the demo: every attempt draws its own numbers, each graded in its draw."""
    return DrillKey.from_loaded(LOADED, SIM_TRUTHS, variants=aggregates.variants_drawn(demo_store, "one_tenant"))


def test_sql_grading_matches_scoring_for_every_demo_attempt(demo_store, demo_key):
    summary = aggregates.attempt_summary(demo_store, demo_key, ALL)
    assert len(summary) >= 8
    for row in summary.itertuples():
        results = scoring.grade_attempt(in_variant(LOADED, row.variant), demo_store.answers(row.attempt_id),
                                        sim_values=SIM_TRUTHS,
                                        note_ratings=demo_store.note_ratings(row.attempt_id))
        totals, calib = scoring.totals(results), scoring.calibration(results)
        assert row.earned == pytest.approx(totals.earned)
        assert row.score_pct == pytest.approx(totals.percent)
        assert (row.ranges, row.hits) == (calib.ranges, calib.hits)
        levels = scoring.current_levels(demo_store.rubric_history(row.attempt_id))
        assert row.strong == sum(1 for r in levels.values() if r.level == "strong")


def test_leaderboard_has_one_row_per_candidate_from_their_best_attempt(demo_store, demo_key):
    board = aggregates.leaderboard(demo_store, demo_key, ALL)
    summary = aggregates.attempt_summary(demo_store, demo_key, ALL)
    assert len(board) == summary["candidate_id"].nunique() == 8
    best = summary.groupby("candidate_id")["score_pct"].max()
    for row in board.itertuples():
        assert row.score_pct == pytest.approx(best[row.candidate_id])
        mine = summary[summary["candidate_id"] == row.candidate_id]
        assert row.attempts == len(mine)
        assert (row.ranges, row.hits) == (mine["ranges"].sum(), mine["hits"].sum())
    assert list(board["score_pct"]) == sorted(board["score_pct"], reverse=True)


def test_counts_and_filters(demo_store, demo_key):
    everyone = aggregates.counts(demo_store, ALL)
    north = aggregates.counts(demo_store, Filters("one_tenant", cohort="north"))
    south = aggregates.counts(demo_store, Filters("one_tenant", cohort="south"))
    assert everyone.candidates == north.candidates + south.candidates == 8
    assert everyone.started == north.started + south.started
    assert everyone.finished <= everyone.started
    assert aggregates.cohorts(demo_store, "one_tenant") == ["north", "south"]
    first, last = aggregates.date_bounds(demo_store, "one_tenant")
    early = aggregates.counts(demo_store, Filters("one_tenant", until=(first + last) / 2))
    late = aggregates.counts(demo_store, Filters("one_tenant", since=(first + last) / 2))
    assert early.started + late.started == everyone.started
    assert aggregates.counts(demo_store, Filters("other_drill")).started == 0


def test_a_hostile_cohort_filter_is_only_ever_a_value(demo_store, demo_key):
    for text in ("' OR 1=1 --", "north'; DROP TABLE answers; --", "<script>alert(1)</script>"):
        assert aggregates.counts(demo_store, Filters("one_tenant", cohort=text)).started == 0
    assert aggregates.counts(demo_store, ALL).started > 0


def test_skill_levels_latest_instructor_score_wins_and_is_marked():
    clock = FakeClock()
    store = _store(clock)
    attempt = store.start_attempt("one_tenant", "ada", "c1", 2700, seed=1)
    skill = DRILL.rubric[0].id
    store.add_rubric_score(attempt.id, skill, "strong", scorer="self", scorer_name="ada")
    clock.t += 10
    store.add_rubric_score(attempt.id, skill, "weak", scorer="instructor", scorer_name="prof", reason="first")
    clock.t += 10
    store.add_rubric_score(attempt.id, skill, "ok", scorer="instructor", scorer_name="prof", reason="second look")
    clock.t += 10
    store.add_rubric_score(attempt.id, skill, "strong", scorer="self", scorer_name="ada")  # later self: no effect
    levels = aggregates.skill_levels(store, KEY, ALL)
    row = levels[levels["skill_id"] == skill].iloc[0]
    assert (row.level, bool(row.overridden), row.reason) == ("ok", True, "second look")
    expected = scoring.current_levels(store.rubric_history(attempt.id))[skill]
    assert expected.level == row.level
    shares = aggregates.skill_shares(store, KEY, ALL).set_index("skill_id")
    assert (shares.loc[skill, "ok"], shares.loc[skill, "overridden"]) == (1, 1)


def test_skill_levels_come_from_each_candidates_latest_attempt():
    clock = FakeClock()
    store = _store(clock)
    skill = DRILL.rubric[0].id
    old = store.start_attempt("one_tenant", "ada", "", 2700)
    store.add_rubric_score(old.id, skill, "weak", scorer="self", scorer_name="ada")
    clock.t += DAY
    new = store.start_attempt("one_tenant", "ada", "", 2700)
    store.add_rubric_score(new.id, skill, "strong", scorer="self", scorer_name="ada")
    levels = aggregates.skill_levels(store, KEY, ALL)
    assert list(levels["attempt_id"]) == [new.id] and list(levels["level"]) == ["strong"]


def test_skill_levels_keep_the_finished_attempt_when_a_retake_is_open():
    """A retake just started (no scores, or only some) does not blank or replace the finished attempt's skills."""
    clock = FakeClock()
    store = _store(clock)
    first, second = DRILL.rubric[0].id, DRILL.rubric[1].id
    done = store.start_attempt("one_tenant", "ada", "", 2700)
    store.add_rubric_score(done.id, first, "strong", scorer="self", scorer_name="ada")
    store.add_rubric_score(done.id, second, "ok", scorer="self", scorer_name="ada")
    store.finish(done.id)
    clock.t += DAY
    store.start_attempt("one_tenant", "ada", "", 2700)               # opened, nothing scored
    clock.t += DAY
    partial = store.start_attempt("one_tenant", "bob", "", 2700)      # bob: a finished attempt, then a retake
    store.add_rubric_score(partial.id, first, "weak", scorer="self", scorer_name="bob")
    store.finish(partial.id)
    clock.t += DAY
    retake = store.start_attempt("one_tenant", "bob", "", 2700)
    store.add_rubric_score(retake.id, first, "strong", scorer="self", scorer_name="bob")   # scoring half-way
    levels = aggregates.skill_levels(store, KEY, ALL)
    ada = levels[levels["handle"] == "ada"]
    assert set(ada["attempt_id"]) == {done.id}
    assert dict(zip(ada["skill_id"], ada["level"])) == {first: "strong", second: "ok"}
    bob = levels[levels["handle"] == "bob"]
    assert list(bob["attempt_id"]) == [partial.id] and list(bob["level"]) == ["weak"]
    shares = aggregates.skill_shares(store, KEY, ALL).set_index("skill_id")
    assert (shares.loc[first, "strong"], shares.loc[first, "weak"], shares.loc[second, "ok"]) == (1, 1, 1)


def test_question_errors_share_in_tolerance_and_ranking():
    store = _store()
    easy, hard = NUMERIC[0], NUMERIC[1]
    truths = {q.id: LOADED.values[q.id] for q in (easy, hard)}
    for i, (easy_ratio, hard_ratio) in enumerate([(1.0, 3.0), (1.0, 0.2), (1.02, 2.0), (1.5, 1.0)]):
        attempt = store.start_attempt("one_tenant", f"c{i}", "", 2700)
        _lock_numeric(store, attempt.id, easy, truths[easy.id] * easy_ratio,
                      truths[easy.id] * easy_ratio * 0.9, truths[easy.id] * easy_ratio * 1.44)
        _lock_numeric(store, attempt.id, hard, truths[hard.id] * hard_ratio)
    errors = aggregates.question_errors(store, KEY, ALL).set_index("question_id")
    assert list(errors.index[:2]) == [hard.id, easy.id]  # worst first
    inside = sum(scoring.grade_numeric(truths[easy.id] * r, truths[easy.id], easy.tolerance) == 1.0
                 for r in (1.0, 1.0, 1.02, 1.5))
    assert errors.loc[easy.id, "in_tolerance"] == pytest.approx(inside / 4)
    assert errors.loc[easy.id, "guesses"] == 4
    assert errors.loc[easy.id, "p50"] == pytest.approx(101.0)
    assert errors.loc[easy.id, "range_hit_rate"] == pytest.approx(0.75)  # 1.0, 1.0, 1.02 in range; 1.5 not
    assert math.isnan(errors.loc[hard.id, "range_hit_rate"])
    sample = aggregates.question_sample(store, KEY, ALL, attempts=2)
    assert sample.groupby("question_id").size().to_dict() == {easy.id: 2, hard.id: 2}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(min_value=-3.0, max_value=3.0, allow_nan=False), min_size=1, max_size=12),
       st.sampled_from(NUMERIC))
def test_sql_numeric_grading_equals_grade_numeric(log_ratios, question):
    store = _store()
    truth = LOADED.values[question.id]
    expected = []
    for i, r in enumerate(log_ratios):
        value = truth * math.exp(r) if truth else r
        attempt = store.start_attempt("one_tenant", f"c{i}", "", 2700)
        _lock_numeric(store, attempt.id, question, value)
        expected.append((attempt.id, scoring.grade_numeric(value, truth, question.tolerance)))
    summary = aggregates.attempt_summary(store, KEY, ALL).set_index("attempt_id")
    for attempt_id, score in expected:
        assert summary.loc[attempt_id, "earned"] == score


def test_choice_and_rated_notes_are_graded_like_scoring():
    store = _store()
    choice = next(q for q in DRILL.all_questions() if isinstance(q, ChoiceQuestion))
    notes = next(q for q in DRILL.all_questions() if isinstance(q, NotesQuestion))
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    store.lock_answer(attempt.id, choice.id, _part_of(choice.id), "choice", choice=choice.answer)
    store.lock_answer(attempt.id, notes.id, _part_of(notes.id), "notes", notes="cap the tenant")
    store.rate_note(attempt.id, notes.id, "missed")
    store.rate_note(attempt.id, notes.id, "partial")  # the latest rating counts
    row = aggregates.attempt_summary(store, KEY, ALL).iloc[0]
    assert row.earned == 1.5


def test_time_per_part_follows_opened_events_and_stops_at_the_finish():
    clock = FakeClock()
    store = _store(clock)
    first, second = DRILL.parts[0].id, DRILL.parts[1].id
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    store.log_event(attempt.id, "opened", first)
    clock.t += 120
    store.log_event(attempt.id, "opened", second)
    clock.t += 300
    store.log_event(attempt.id, "opened", first)   # went back for a minute
    clock.t += 60
    store.finish(attempt.id)
    clock.t += 5000                                 # later activity after finishing does not count
    spent = aggregates.time_per_part(store, KEY, ALL).set_index("part_id")
    assert spent.loc[first, "median_min"] == pytest.approx(3.0)
    assert spent.loc[second, "median_min"] == pytest.approx(5.0)
    assert spent.loc[first, "suggested_min"] == DRILL.parts[0].minutes
    assert spent["attempts"].sum() == 2


def test_time_used_runs_to_the_finish_and_the_box_includes_grants():
    clock = FakeClock()
    store = _store(clock)
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    clock.t += 600
    store.grant_time(attempt.id, 300, granted_by="prof")
    clock.t += 600
    store.finish(attempt.id)
    row = aggregates.attempt_summary(store, KEY, ALL).iloc[0]
    assert (row.used_s, row.limit_s, row.extra_s) == (1200, 3000, 300)


def test_timeline_flags_a_reveal_before_its_questions_were_locked():
    clock = FakeClock()
    store = _store(clock)
    part = next(p for p in DRILL.parts if p.questions and p.reveal)
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    store.log_event(attempt.id, "opened", part.id)
    clock.t += 5
    store.lock_answer(attempt.id, part.questions[0].id, part.id, part.questions[0].kind, skipped=True)
    clock.t += 5
    store.record_reveal(attempt.id, part.id, part.reveal[0].stage)    # the other questions are still open
    clock.t += 5
    for q in part.questions[1:]:
        store.lock_answer(attempt.id, q.id, part.id, q.kind, skipped=True)
    if len(part.reveal) > 1:
        clock.t += 5
        store.record_reveal(attempt.id, part.id, part.reveal[1].stage)
    rows = timeline(LOADED, store.events(attempt.id), store.answers(attempt.id))
    assert [r.at for r in rows] == sorted(r.at for r in rows)
    reveals = [r for r in rows if r.kind == "revealed"]
    assert reveals[0].early is (len(part.questions) > 1)
    assert all(not r.early for r in reveals[1:])
    assert [r.kind for r in rows][:2] == ["started", "opened"]


def test_exports_hold_the_filtered_rows_and_round_trip(demo_store, demo_key):
    answers = export_answers(demo_store, demo_key, Filters("one_tenant", cohort="north"))
    north_ids = set(aggregates.attempt_summary(demo_store, demo_key, Filters("one_tenant", cohort="north"))["attempt_id"])
    stored = sum(len(demo_store.answers(a)) for a in north_ids)
    assert len(answers) == stored and set(answers["cohort"]) == {"north"}
    back = pd.read_parquet(io.BytesIO(to_parquet_bytes(answers)))
    assert len(back) == len(answers) and list(back.columns) == list(answers.columns)
    csv = pd.read_csv(io.BytesIO(to_csv_bytes(answers)))
    assert len(csv) == len(answers)
    attempts = export_attempts(demo_store, demo_key, ALL)
    assert len(attempts) == aggregates.counts(demo_store, ALL).started


def test_csv_neutralises_spreadsheet_formulas():
    frame = pd.DataFrame({"notes": ["=HYPERLINK(\"http://x\")", "+1", "plain", None], "value": [-1.0, 2.0, 3.0, 4.0]})
    text = to_csv_bytes(frame).decode()
    back = pd.read_csv(io.StringIO(text))
    assert back["notes"].tolist()[:3] == ["'=HYPERLINK(\"http://x\")", "'+1", "plain"]
    assert pd.read_csv(io.StringIO(text))["value"].tolist() == [-1.0, 2.0, 3.0, 4.0]


def test_data_version_moves_with_every_kind_of_write():
    store = _store()
    before = aggregates.data_version(store)
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    after_start = aggregates.data_version(store)
    notes = next(q for q in DRILL.all_questions() if isinstance(q, NotesQuestion))
    store.rate_note(attempt.id, notes.id, "full")
    after_rating = aggregates.data_version(store)
    assert before < after_start < after_rating


# -- instructor writes ------------------------------------------------------------------------
@pytest.mark.parametrize("comment, message", [("", "required"), ("   ", "required"),
                                              ("x" * 10_000, "under 1,000")])
def test_override_needs_a_sensible_comment_and_stores_nothing_otherwise(comment, message):
    store = _store()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    with pytest.raises(InputError, match=message):
        actions.override_skill(store, attempt, LOADED, DRILL.rubric[0].id, "weak", comment, "prof")
    assert store.rubric_history(attempt.id) == []


def test_override_rejects_unknown_skills_levels_and_names():
    store = _store()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    skill = DRILL.rubric[0].id
    for args in (("nope", "weak", "prof"), (skill, "excellent", "prof"), (skill, "weak", ""),
                 (skill, "weak", "<b>prof</b>")):
        with pytest.raises(InputError):
            actions.override_skill(store, attempt, LOADED, args[0], args[1], "a reason", args[2])
    assert store.rubric_history(attempt.id) == []
    actions.override_skill(store, attempt, LOADED, skill, "weak", "  <b>not bold</b>  ", "prof")
    (row,) = store.rubric_history(attempt.id)
    assert (row.scorer, row.scorer_name, row.reason, row.level) == ("instructor", "prof", "<b>not bold</b>", "weak")


@pytest.mark.parametrize("minutes", [-5, 0, 0.5, 241, 1e9, float("nan"), float("inf"), "", "ten", None])
def test_extra_time_must_be_between_one_and_240_minutes(minutes):
    store = _store()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    with pytest.raises(InputError):
        actions.grant_extra_time(store, attempt, minutes, "prof")
    assert store.attempt_by_id(attempt.id).extra_s == 0


def test_extra_time_is_refused_once_the_attempt_has_finished_even_from_a_stale_copy():
    store = _store()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)   # the board loaded it while open
    store.finish(attempt.id)                                          # then the candidate finished
    with pytest.raises(InputError, match="already finished"):
        actions.grant_extra_time(store, attempt, 15, "prof")
    assert store.attempt_by_id(attempt.id).extra_s == 0


def test_extra_time_is_added_to_the_attempts_box():
    store = _store()
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    assert actions.grant_extra_time(store, attempt, 15, "prof", "fire alarm") == 15
    assert store.attempt_by_id(attempt.id).extra_s == 900


# -- the per-attempt tallies behind attempt_summary --------------------------------------------
def _expected_row(store, attempt_id):
    results = scoring.grade_attempt(LOADED, store.answers(attempt_id), sim_values=SIM_TRUTHS,
                                    note_ratings=store.note_ratings(attempt_id))
    totals, calib = scoring.totals(results), scoring.calibration(results)
    levels = scoring.current_levels(store.rubric_history(attempt_id))
    return (totals.earned, calib.ranges, calib.hits, sum(1 for r in levels.values() if r.level == "strong"),
            sum(1 for r in levels.values() if r.scorer == "instructor"))


def _summary_row(store, attempt_id, key=KEY):
    row = aggregates.attempt_summary(store, key, ALL).set_index("attempt_id").loc[attempt_id]
    return (row.earned, row.ranges, row.hits, row.strong, row.overridden)


def test_attempt_summary_follows_every_new_answer_score_and_rating():
    clock = FakeClock()
    store = _store(clock)
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    other = store.start_attempt("one_tenant", "bob", "", 2700)
    assert _summary_row(store, attempt.id) == _expected_row(store, attempt.id) == (0, 0, 0, 0, 0)
    easy, hard = NUMERIC[0], NUMERIC[1]
    truth = LOADED.values[easy.id]
    steps = [
        lambda: _lock_numeric(store, attempt.id, easy, truth, truth * 0.5, truth * 2),
        lambda: _lock_numeric(store, other.id, easy, truth * 3),
        lambda: _lock_numeric(store, attempt.id, hard, LOADED.values[hard.id] * 1.9),
        lambda: store.add_rubric_score(attempt.id, DRILL.rubric[0].id, "strong", scorer="self", scorer_name="ada"),
        lambda: store.add_rubric_score(attempt.id, DRILL.rubric[0].id, "weak", scorer="instructor",
                                       scorer_name="prof", reason="not yet"),
    ]
    notes = next(q for q in DRILL.all_questions() if isinstance(q, NotesQuestion))
    steps += [lambda: store.lock_answer(attempt.id, notes.id, _part_of(notes.id), "notes", notes="cap it"),
              lambda: store.rate_note(attempt.id, notes.id, "full"),
              lambda: store.rate_note(attempt.id, notes.id, "missed")]
    for step in steps:
        clock.t += 30
        step()
        for a in (attempt, other):
            assert _summary_row(store, a.id) == pytest.approx(_expected_row(store, a.id))
    assert _summary_row(store, attempt.id)[3:] == (0, 1)     # the override took the Strong away


def test_attempt_summary_keeps_separate_tallies_for_a_different_key():
    store = _store()
    sim_question = next(q for q in DRILL.all_questions() if isinstance(q, NumericQuestion) and q.sim)
    attempt = store.start_attempt("one_tenant", "ada", "", 2700)
    store.lock_answer(attempt.id, sim_question.id, _part_of(sim_question.id), "numeric", value=100.0)
    no_sims = DrillKey.from_loaded(LOADED, {})
    assert no_sims.fingerprint != KEY.fingerprint
    assert _summary_row(store, attempt.id) == pytest.approx(_expected_row(store, attempt.id)) and \
        _summary_row(store, attempt.id)[0] == 1.0            # graded against the reference run of 100
    assert _summary_row(store, attempt.id, no_sims) == (0, 0, 0, 0, 0)   # ungraded without a reference run
    assert _summary_row(store, attempt.id)[0] == 1.0


def test_tallies_kept_up_by_rows_added_since_match_a_rebuild_even_after_a_rollback():
    from drills.store import AnswerEntry

    clock = FakeClock()
    store = _store(clock)
    populate(store, LOADED, candidates=4, cohorts=("north",), seed=9, now=T0, sim_truths=SIM_TRUTHS)
    aggregates.attempt_summary(store, KEY, ALL)                     # tallies built
    attempt = store.start_attempt("one_tenant", "late", "north", 2700)
    # A batch that fails half-way: its first 500 answers were appended, then rolled back.
    broken = [AnswerEntry(f"pad{i}", "p", "numeric", value=1.0) for i in range(500)] + \
             [AnswerEntry("bad", "p", None, value=1.0)]
    with pytest.raises(Exception):
        store.lock_answers(attempt.id, broken)
    assert store.answers(attempt.id) == {}
    _lock_numeric(store, attempt.id, NUMERIC[0], LOADED.values[NUMERIC[0].id])
    store.add_rubric_score(attempt.id, DRILL.rubric[0].id, "strong", scorer="self", scorer_name="late")
    old = aggregates.attempt_summary(store, KEY, ALL)["attempt_id"].iloc[0]
    store.add_rubric_score(int(old), DRILL.rubric[1].id, "weak", scorer="instructor", scorer_name="p", reason="r")
    kept = aggregates.attempt_summary(store, KEY, ALL)
    store.refresh_derived(lambda cur: cur.execute("DELETE FROM tally_marks"))
    rebuilt = aggregates.attempt_summary(store, KEY, ALL)
    pd.testing.assert_frame_equal(kept, rebuilt)
    row = kept.set_index("attempt_id").loc[attempt.id]
    assert (row.earned, row.answered, row.strong) == (1.0, 1, 1)
