"""Tests written to kill the mutants that survived the hand-made mutation runs (issue 23: 88 mutants, 26 lived;
issue 35: the content rules, identity, the live room, the boundaries and the models' figures).

Every mutant is listed beside the code it mutates (drills/mutants.yaml, sims/mutants.yaml, ui/mutants.yaml) and
`python -m bench.mutants` applies each to a copy of the tree and runs its tests; the first test below checks that
every list still applies (its text found once, its tests present). The mutants of issue 23, first checked by hand:

M1  ui/drill/lockin.py, _entry_fields: numeric_entry(...) without unit=question.unit, so "62.5%" in a % field
    and "$7,500" in a $/day field are refused.
M2  ui/drill/lockin.py, _entry_fields: the choice stored as typed, without choice_entry (an empty choice is stored).
M3  ui/drill/lockin.py, _entry_fields: the notes stored as typed, without notes_entry (an empty note is locked).
M4  sims/hot_shard.py, choose_shard: max() for min(), so a shuffle-sharded request joins the longest queue.
M5  drills/disclosure.py, option_order: the shuffle seeded by the attempt's seed alone, so two questions of
    one attempt share one permutation.
M6  drills/disclosure.py, disclosed: a part with no worked answer settled by any() of its lock-ins instead
    of all(), or never settled (the `answer_opened is None` branch dropped).
M7  drills/disclosure.py, open_questions_answered_by: the `q.id not in answers` filter dropped; the old page
    test passed anyway because the session's de-duplication hid the second sim_opened event.
M8  drills/store/core.py, note_ratings: the first rating kept instead of the latest (ORDER BY ... DESC), with no
    test that rates one note twice through the Python grading path.
M9  drills/store/core.py, lock_answer / lock_answers: a skip logged as a "locked" event instead of "skipped".
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import streamlit as st

from bench.mutants import load_mutants, mutant_lists
from drills import answers, lint, scoring
from drills.store.accounts import Account, is_instructor_account
from drills.draws import draw_for_seed, given_uses
from drills.store.live import CLOSE, CLOSED, NEXT, OPEN, LiveRefused, plan_move
from drills.timebox import Clock, clock_for
from drills.variants import pick_variant
from drills.disclosure import disclosed, open_questions_answered_by, option_order
from drills.loader import load_catalogue
from drills.records import AnswerEntry, EventKind, LockedAnswer
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion, Option
from drills.store import AttemptStore
from sims import concurrency_pool, hot_shard, partitions
from tests.clock import FakeClock
from tests.test_live_pages import klass  # noqa: F401 (the fixture: a class with its instructor and two candidates)
from ui import identity, keys
from ui.drill import lockin

CATALOGUE = load_catalogue()
ONE = CATALOGUE.drills["one_tenant"]
DRILL = ONE.drill


def _question(qid: str):
    return DRILL.question(qid)


def _part_of(qid: str) -> str:
    return next(p.id for p in DRILL.parts
                if qid in [q.id for q in p.questions] + [q.id for q in (p.followup.questions if p.followup else ())])


# ---- every mutant list applies to the tree as it is ------------------------------------------------------

def test_every_listed_mutant_applies_once_and_names_its_tests():
    mutants = load_mutants()   # raises naming each mutant whose text moved, whose id repeats, or whose tests are gone
    assert {p.parent.name for p in mutant_lists()} >= {"drills", "sims", "ui"}
    assert len(mutants) >= 40 and all(m.breaks and m.tests for m in mutants)


@pytest.fixture
def store():
    opened = AttemptStore(":memory:", clock=FakeClock())
    yield opened
    opened.close()


@pytest.fixture
def attempt(store):
    return store.start_attempt("one_tenant", "ada", "", 45 * 60, seed=3)


# ---- M1, M2, M3: the lock-in form checks what it stores ---------------------------------------------

def _press_lock_in(store, attempt, question, **typed) -> tuple:
    """What the Lock in button's callback does with the form's fields (bare Streamlit session state)."""
    for field, value in typed.items():
        st.session_state[lockin.lock_field(question.id, field)] = value
    view = SimpleNamespace(store=store, attempt=attempt)
    lockin._on_lock(view, question, _part_of(question.id))
    return st.session_state.pop(keys.lock_outcome(question.id))


@pytest.mark.parametrize("qid, typed, stored", [("utilisation", "62.5%", 62.5), ("daily_spend", "$7,500", 7500.0)])
def test_m1_a_number_typed_with_its_field_s_unit_is_locked(store, attempt, qid, typed, stored):
    question = _question(qid)
    assert _press_lock_in(store, attempt, question, value=typed, low="", high="") == (lockin.STORED, "")
    assert store.answers(attempt.id)[qid].value == stored


@pytest.mark.parametrize("choice", [None, "", "not_an_option"])
def test_m2_an_empty_or_unknown_choice_is_refused_and_nothing_is_stored(store, attempt, choice):
    question = next(q for q in DRILL.all_questions() if isinstance(q, ChoiceQuestion))
    outcome, message = _press_lock_in(store, attempt, question, choice=choice)
    assert (outcome, message) == (lockin.PROBLEM, "Pick one of the options.")
    assert store.answers(attempt.id) == {}


@pytest.mark.parametrize("notes", [None, "", "   \n  "])
def test_m3_empty_notes_are_refused_and_nothing_is_locked(store, attempt, notes):
    question = next(q for q in DRILL.all_questions() if isinstance(q, NotesQuestion))
    outcome, message = _press_lock_in(store, attempt, question, notes=notes)
    assert outcome == lockin.PROBLEM and message.startswith("Write something before locking in")
    assert store.answers(attempt.id) == {}


# ---- M4: a shuffle-sharded request joins the shortest of its key's queues ----------------------------

def test_m4_each_request_joins_the_shortest_queue_of_its_shards():
    params = hot_shard.Params(shards=8, groups_per_key=2, duration_s=60.0)
    result = hot_shard.run(params, 5)
    assert not result.down_shards
    in_system: list[list[float]] = [[] for _ in range(params.shards)]   # end times of each shard's requests
    chose_between = 0
    for key, shard, arrived, _start, end in result.jobs:
        counts = {g: sum(1 for e in in_system[g] if e > arrived) for g in result.placement[key]}
        assert (counts[shard], shard) == min((n, g) for g, n in counts.items()), (key, arrived, counts, shard)
        chose_between += len(set(counts.values())) > 1
        in_system[shard].append(end)
    assert chose_between > 100, "the run must give the pick real choices to make"


# ---- M5: two questions of one attempt never share one option shuffle --------------------------------

def test_m5_two_questions_with_the_same_options_are_shuffled_apart():
    options = tuple(Option(id=f"o{i}", text=f"Option {i}") for i in range(5))
    first, second = (ChoiceQuestion(id=qid, prompt="Which?", kind="choice", options=options, answer="o0")
                     for qid in ("first", "second"))
    same = [[o.id for o in option_order(first, seed)] == [o.id for o in option_order(second, seed)]
            for seed in range(40)]
    assert sum(same) < 10, "1 in 120 by chance for five options"


# ---- M6: a part with no worked answer shows its truths once every question is locked ----------------

def _answer(qid: str, *, skipped: bool = False) -> LockedAnswer:
    return LockedAnswer(1, qid, "p", "numeric", None if skipped else 1.0, None, None, None, None, skipped, 0.0)


def test_m6_a_part_without_a_worked_answer_discloses_only_when_all_its_questions_are_locked():
    board = DRILL.part("board")
    bare = board.model_copy(update={"reveal": ()})
    drill = DRILL.model_copy(update={"parts": tuple(bare if p.id == "board" else p for p in DRILL.parts)})
    ids = [q.id for q in bare.questions]
    assert len(ids) >= 2
    some = {qid: _answer(qid) for qid in ids[:-1]}
    assert disclosed(drill, some, (), False) & set(ids) == set()
    every = {**some, ids[-1]: _answer(ids[-1])}
    assert disclosed(drill, every, (), False) & set(ids) == set(ids)
    # the same part with its worked answer waits for that instead
    assert disclosed(DRILL, every, (), False) & set(ids) == set()
    assert disclosed(DRILL, every, (("board", board.reveal[0].stage),), False) & set(ids) == set(ids)


# ---- M7: the sim-visit filter, without the session's de-duplication in the way ----------------------

def test_m7_a_sim_page_flags_only_the_open_questions_it_answers():
    sims = [q for q in DRILL.all_questions() if isinstance(q, NumericQuestion) and q.sim]
    models = {q.sim: q.sim.split(".")[0] for q in sims}
    model = models[sims[0].sim]
    answering = [q.id for q in sims if models[q.sim] == model]
    assert open_questions_answered_by(DRILL, {model}, {}, models) == answering
    locked = {answering[0]: _answer(answering[0])}
    assert open_questions_answered_by(DRILL, {model}, locked, models) == answering[1:]
    assert open_questions_answered_by(DRILL, {"no_such_model"}, {}, models) == []


# ---- M8: notes are graded by their latest rating -----------------------------------------------------

@pytest.mark.parametrize("step_s", [60.0, 0.0])   # later in time, and in the same instant (the later row)
def test_m8_a_note_rated_twice_is_graded_by_the_second_rating(step_s):
    clock = FakeClock()
    store = AttemptStore(":memory:", clock=clock)
    try:
        notes = next(q for q in DRILL.all_questions() if isinstance(q, NotesQuestion))
        attempt = store.start_attempt("one_tenant", "ada", "", 45 * 60)
        store.lock_answer(attempt.id, notes.id, _part_of(notes.id), "notes", notes="cap the tenant")
        store.rate_note(attempt.id, notes.id, "full")
        clock.t += step_s
        store.rate_note(attempt.id, notes.id, "missed")
        ratings = store.note_ratings(attempt.id)
        assert ratings == {notes.id: "missed"}
        sim_values = {q.id: 1.0 for q in DRILL.all_questions() if isinstance(q, NumericQuestion) and q.sim}
        [graded] = [r for r in scoring.grade_attempt(ONE, store.answers(attempt.id), sim_values=sim_values,
                                                     note_ratings=ratings) if r.question_id == notes.id]
        assert graded.score == 0.0
    finally:
        store.close()


# ---- M9: a skip is logged as a skip -------------------------------------------------------------------

def test_m9_a_skip_is_logged_as_skipped_and_a_lock_in_as_locked(store, attempt):
    skipped, locked = "job_duration", "jobs_in_flight"
    store.lock_answer(attempt.id, skipped, "board", "numeric", skipped=True)
    store.lock_answer(attempt.id, locked, "board", "numeric", value=3.0)
    other = store.start_attempt("one_tenant", "bea", "", 45 * 60, seed=3)
    store.lock_answers(other.id, [AnswerEntry(skipped, "board", "numeric", skipped=True),
                                  AnswerEntry(locked, "board", "numeric", value=3.0)])
    for attempt_id in (attempt.id, other.id):
        kinds = [e.kind for e in store.events(attempt_id) if e.kind in (EventKind.LOCKED, EventKind.SKIPPED)]
        assert kinds == [EventKind.SKIPPED, EventKind.LOCKED]


# ---- issue 35: the content rules -------------------------------------------------------------------------

def test_the_right_option_being_the_longest_in_most_questions_is_reported():
    assert lint.OptionLengths("q", 30, 20).right_is_longest
    assert not lint.OptionLengths("q", 20, 20).right_is_longest and not lint.OptionLengths("q", 10, 20).right_is_longest
    lengths = [lint.OptionLengths(f"q{i}", 30, 20, ("q", i)) for i in range(3)] + [lint.OptionLengths("q3", 10, 20)]
    assert any("the right option is the longest in 3 of 4" in f.message for f in lint.length_findings(lengths))


def _draw_where(question_id: str, value_of):
    written, _ = lint.compute_values(DRILL)
    drawn = dict(written)
    drawn[question_id] = value_of(written)
    return written, [("draw 7", drawn, [])]


def test_a_draw_that_makes_an_answer_negative_is_reported():
    written, drawn = _draw_where("spare_capacity", lambda w: -1.25)
    messages = [f.message for f in lint.rule_variants(DRILL, written, drawn)]
    assert "in draw 7, spare_capacity gives -1.25, below zero" in messages


def test_a_draw_whose_answer_equals_a_given_it_uses_is_reported():
    uses = given_uses(DRILL)
    assert "peak_rate" in uses(_question("spare_capacity").answer)
    written, drawn = _draw_where("spare_capacity", lambda w: w["peak_rate"])
    messages = [f.message for f in lint.rule_variants(DRILL, written, drawn)]
    assert any(m.startswith("in draw 7, spare_capacity equals the given") for m in messages), messages


# ---- issue 35: who is an instructor, and whose account a session holds -------------------------------------

@pytest.mark.parametrize("roles", [["staff", "instructor"], ("instructor",)])
def test_a_list_claim_holding_the_role_names_an_instructor(roles):
    assert is_instructor_account("", {"roles": roles}, (), "roles=instructor")
    assert not is_instructor_account("", {"roles": ["staff"]}, (), "roles=instructor")


def test_the_cached_account_is_used_only_for_the_same_issuer_and_subject(monkeypatch):
    monkeypatch.setattr(identity, "sign_in_configured", lambda: True)
    monkeypatch.setattr(identity, "_claims", lambda: {"iss": "https://b.example", "sub": "42"})
    st.session_state[identity.ACCOUNT] = Account(1, "https://a.example", "42", "a@example.org", "A")
    fresh = Account(2, "https://b.example", "42", "b@example.org", "B")
    asked = []
    store = SimpleNamespace(account_for=lambda *args: asked.append(args) or fresh)
    try:
        assert identity.signed_in_account(store) is fresh, "another issuer's subject 42 is another person"
        assert asked == [("https://b.example", "42", "", "")]
        assert identity.signed_in_account(store) is fresh and len(asked) == 1, "the same one is kept"
    finally:
        st.session_state.pop(identity.ACCOUNT, None)


def test_the_environments_instructor_list_wins_over_the_secrets_file(monkeypatch):
    monkeypatch.setenv(identity.INSTRUCTORS_ENV, "env@school.edu")
    monkeypatch.setattr(identity, "_secret", lambda name: "file@school.edu" if name == "instructors" else None)
    assert identity.instructor_settings()[0] == ("env@school.edu",)
    monkeypatch.delenv(identity.INSTRUCTORS_ENV)
    assert identity.instructor_settings()[0] == ("file@school.edu",)


# ---- issue 35: draws, the time box, the answer checks ----------------------------------------------------

def test_a_candidates_retake_never_repeats_a_draw_they_had():
    seed = 11
    first = draw_for_seed(seed)
    assert pick_variant(DRILL, seed, had=[]) in (first, 0)   # the first attempt: its own draw, or as written
    again = pick_variant(DRILL, seed, had=[first])
    assert again != first
    third = pick_variant(DRILL, seed, had=[first, again])
    assert third not in (first, again)
    many = [draw_for_seed(seed, attempt) for attempt in range(10)]   # every draw the seed would weigh first
    assert pick_variant(DRILL, seed, had=many) not in many


def test_an_attempt_is_over_only_once_its_time_is_past():
    assert not Clock(limit_s=60.0, elapsed_s=60.0, remaining_s=0.0, finished=False).over
    assert Clock(limit_s=60.0, elapsed_s=60.5, remaining_s=-0.5, finished=False).over


def test_a_clock_behind_the_start_shows_no_more_than_the_box():
    attempt = SimpleNamespace(started_at=1_000.0, finished_at=None, time_box_s=2_700.0, extra_s=300.0)
    clock = clock_for(attempt, now=990.0)   # another host's clock, ten seconds behind the one that started it
    assert clock.elapsed_s == 0.0 and clock.remaining_s == 3_000.0


@pytest.mark.parametrize("value, low, high", [("5", "5", "5"), ("5", "5", "9"), ("9", "5", "9"), ("0", "0", "3")])
def test_a_guess_on_an_end_of_its_range_or_a_sure_range_is_accepted(value, low, high):
    entry = answers.numeric_entry(value, low, high)
    assert (entry.value, entry.low, entry.high) == (float(value), float(low), float(high))


def test_zero_is_a_quantity_and_the_largest_number_the_form_takes_is_a_trillion():
    assert answers.numeric_entry("0").value == 0.0
    assert answers.numeric_entry("1000000000000").value == 1e12
    with pytest.raises(answers.InputError, match="too large"):
        answers.numeric_entry("1000000000001")


def test_notes_of_4000_characters_and_a_handle_of_40_are_accepted_one_more_is_not():
    assert answers.notes_entry("n" * 4000) == "n" * 4000
    with pytest.raises(answers.InputError):
        answers.notes_entry("n" * 4001)
    assert answers.handle_entry("h" * 40) == "h" * 40
    with pytest.raises(answers.InputError):
        answers.handle_entry("h" * 41)


# ---- issue 35: the live room ----------------------------------------------------------------------------

def test_next_opens_the_last_question_and_refuses_past_it():
    room = SimpleNamespace(state=CLOSED, step_no=6, scenario=None)
    assert (plan_move(room, NEXT, 8).state, plan_move(room, NEXT, 8).step_no) == (OPEN, 7)
    with pytest.raises(LiveRefused, match="last question"):
        plan_move(SimpleNamespace(state=CLOSED, step_no=7, scenario=None), NEXT, 8)
    assert plan_move(SimpleNamespace(state=OPEN, step_no=7, scenario=None), CLOSE, 8).state == CLOSED


def test_a_seats_page_sends_its_heartbeat(app_test, db_path, klass, monkeypatch):
    from tests.test_live_pages import _as, _button, _started
    from ui.live import seat

    beats = []
    original = AttemptStore.live_heartbeat
    monkeypatch.setattr(AttemptStore, "live_heartbeat",
                        lambda self, session_id, candidate_id: beats.append(candidate_id)
                        or original(self, session_id, candidate_id))
    prof = _started(app_test)
    ana = _as(app_test, "ana@school.edu")
    prof.run()
    _button(prof, "Open the first question").click().run()
    ana.run()
    ana.session_state[seat.LIVE_BEAT] = float("-inf")   # its last beat long ago (no waiting on the wall clock)
    ana.run()
    assert not ana.exception, ana.exception
    assert beats, "the seat's page beat, so the room counts it present"


# ---- issue 35: the models' figures ----------------------------------------------------------------------

def test_the_hot_keys_floor_is_its_rate_over_its_shard_group_on_one_shards_capacity():
    # 32 req/s with 30 % on the hot key, 10 req/s a shard: 9.6 req/s on one shard, or 4.8 on each of two
    assert hot_shard.hot_key_floor_pct(hot_shard.Params()) == pytest.approx(96.0)
    assert hot_shard.hot_key_floor_pct(hot_shard.Params(groups_per_key=2)) == pytest.approx(48.0)


def test_the_fleets_utilisation_is_the_mean_of_its_shards_loads():
    result = hot_shard.run(hot_shard.Params(), 0)
    loads = hot_shard.shard_load_pct(result)
    assert max(loads) > min(loads), "a skewed fleet, so the mean and the busiest differ"
    assert hot_shard.fleet_utilisation_pct(result) == pytest.approx(sum(loads) / len(loads))
    assert hot_shard.fleet_utilisation_pct(result) == pytest.approx(80.0)   # 32 req/s on 4 x 10


def test_the_partitions_figures_of_the_brief():
    one = partitions.run(partitions.Params(), 0)   # 250 units/s into one bucket, on 4 partitions of 100
    assert partitions.hottest_partition_load_pct(one) == pytest.approx(250.0)
    assert partitions.fleet_utilisation_pct(one) == pytest.approx(62.5)
    assert partitions.replay_drain_floor_s(partitions.Params()) == pytest.approx(60.0)   # 9,000 over 400 - 250
    two = partitions.run(partitions.Params(buckets=2), 0)   # two partitions each take 125 and serve 100
    assert partitions.backlog_growth_per_s(two) == pytest.approx(50.0)
    assert partitions.hottest_partition_load_pct(two) == pytest.approx(125.0)


def test_the_pools_peak_in_service_is_its_size_and_the_fanouts_the_providers_limit():
    result = concurrency_pool.run(concurrency_pool.Params(), 0)   # 30 calls, a provider limit of 5, a pool of 5
    figures = concurrency_pool.summary(result)
    assert figures["pool"]["peak_in_service"] == 5 and figures["fanout"]["peak_in_service"] == 5
    assert figures["pool"]["rejected"] == 0 and figures["fanout"]["rejected"] > 0
    assert not math.isclose(figures["pool"]["makespan_s"], figures["fanout"]["makespan_s"])
