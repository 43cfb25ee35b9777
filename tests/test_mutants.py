"""Tests written to kill the mutants that survived the hand-made mutation run (issue 23: 88 mutants, 26 lived).

Each test below names the mutant it kills; each was checked by applying the mutant by hand, running
this file (the test fails), and reverting it:

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

from types import SimpleNamespace

import pytest
import streamlit as st

from drills import scoring
from drills.disclosure import disclosed, open_questions_answered_by, option_order
from drills.loader import load_catalogue
from drills.records import AnswerEntry, EventKind, LockedAnswer
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion, Option
from drills.store import AttemptStore
from sims import hot_shard
from tests.clock import FakeClock
from ui import keys
from ui.drill import lockin

CATALOGUE = load_catalogue()
ONE = CATALOGUE.drills["one_tenant"]
DRILL = ONE.drill


def _question(qid: str):
    return DRILL.question(qid)


def _part_of(qid: str) -> str:
    return next(p.id for p in DRILL.parts
                if qid in [q.id for q in p.questions] + [q.id for q in (p.followup.questions if p.followup else ())])


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
