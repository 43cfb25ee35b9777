"""Live sessions: the room's moves in the store (both backends), and what the room is shown, worked by hand.

The hand-worked room is one_tenant's break 2: four seats, the board's jobs-in-flight question (truth 160 jobs,
tolerance 10%: within 16 full marks, within 32 half) and the breaker choice (right: closed_blind).
"""
from __future__ import annotations

import pytest

from drills import live
from drills.store.live import (
    ALL_LOCKED,
    CLOSE,
    END,
    NEXT,
    REVEAL,
    LiveRefused,
    LiveStep,
    Seat,
)
from drills.loader import load_catalogue
from drills.records import LockedAnswer
from drills.scope import ScopedDrills
from drills.store import AttemptFinished
from tests.clock import FakeClock
from tests.test_store_contract import opened, pg_opened, target  # noqa: F401 - the two-backend fixtures

DRILL = "one_tenant~break2"


@pytest.fixture(scope="module")
def loaded():
    return ScopedDrills(load_catalogue().drills)[DRILL]


def _numeric(attempt, value, low=None, high=None, at=10.0):
    return LockedAnswer(attempt, "jobs_in_flight", "board", "numeric", value, low, high, None, None, False, at, 0.0)


def _choice(attempt, choice, at=10.0):
    return LockedAnswer(attempt, "b2_breaker_at_30s", "break2", "choice", None, None, None, choice, None, False, at, 0.0)


SEATS = [Seat(1, "ada", 101, 0.0), Seat(2, "bo", 102, 0.0), Seat(3, "cy", 103, 0.0), Seat(4, "di", 104, 0.0)]
ANSWERS = {
    101: {"jobs_in_flight": _numeric(101, 150, 140, 170), "b2_breaker_at_30s": _choice(101, "closed_blind")},
    102: {"jobs_in_flight": _numeric(102, 200, 180, 220), "b2_breaker_at_30s": _choice(102, "closed_blind")},
    103: {"jobs_in_flight": _numeric(103, 170), "b2_breaker_at_30s": _choice(103, "open")},
    # di locked the number only after the close (a stale form): the room leaves it out
    104: {"jobs_in_flight": _numeric(104, 160, 150, 170, at=99.0)},
}
STEPS = [LiveStep("waiting", -1, None, "", 0.0), LiveStep("open", 0, "jobs_in_flight", "", 1.0),
         LiveStep("closed", 0, "jobs_in_flight", "", 20.0), LiveStep("revealed", 0, "jobs_in_flight", "", 21.0),
         LiveStep("open", 2, "b2_breaker_at_30s", "", 22.0), LiveStep("closed", 2, "b2_breaker_at_30s", "", 30.0)]


def _graders(loaded):
    return {seat.attempt_id: live.Grader(loaded, {}) for seat in SEATS}


def test_a_closed_numeric_question_shows_every_guess_its_range_and_the_truth(loaded):
    room = live.numeric_room(loaded.drill.question("jobs_in_flight"), "board", SEATS, _graders(loaded), ANSWERS,
                             own_attempt=102, until=20.0)
    assert [(g.value, g.low, g.high) for g in room.guesses] == [(150, 140, 170), (170, None, None), (200, 180, 220)]
    assert room.truths == (160.0,)
    assert [g.score for g in room.guesses] == [1.0, 1.0, 0.0]
    assert [g.in_range for g in room.guesses] == [True, None, False]
    assert [g.own for g in room.guesses] == [False, False, True]
    assert room.ranges_held == (1, 2) and room.seats == 4


def test_a_choice_question_shows_the_share_choosing_each_option(loaded):
    room = live.choice_room(loaded.drill.question("b2_breaker_at_30s"), SEATS, ANSWERS, own_attempt=103, until=30.0)
    assert [(o.option_id, o.count, round(o.share, 3), o.right, o.own) for o in room.options] == [
        ("closed_blind", 2, 0.667, True, False), ("open", 1, 0.333, False, True), ("half_open", 0, 0.0, False, False)]
    assert room.answered == 3 and room.seats == 4


def test_the_scoreboard_ranks_numbers_by_their_ranges_proper_score_and_choices_by_their_grade(loaded):
    board = live.scoreboard(loaded, STEPS, SEATS, _graders(loaded), ANSWERS)
    # ada's range 140-170 holds 160: width 30 of 160 = 0.1875 of the widest 10 off 1 point, and the right option;
    # bo's 180-220 missed by 20: (40 + 10 x 20) / 160 = 1.5 -> 0.85, the right option; cy gave no range and the
    # wrong option; di locked nothing in time
    assert [(s.rank, s.handle, s.ranges, s.hits) for s in board] == [
        (1, "ada", 1, 1), (2, "bo", 1, 0), (3, "cy", 0, 0), (3, "di", 0, 0)]
    assert [s.points for s in board] == pytest.approx([1.98125, 1.85, 0.0, 0.0])
    assert board[0].share == pytest.approx(0.990625) and board[1].held == 0.0 and board[2].held is None


def _room_of(answers: dict[str, list]) -> tuple[list, dict]:
    """Seats named by `answers`, each with (question id, value, low, high) lock-ins before the closes."""
    seats = [Seat(n, handle, 200 + n, 0.0) for n, handle in enumerate(answers)]
    locked = {200 + n: {q: LockedAnswer(200 + n, q, "board", "numeric", v, lo, hi, None, None, False, 10.0, 0.0)
                        for q, v, lo, hi in answers[handle]} for n, handle in enumerate(answers)}
    return seats, locked


# both numbers of the board closed in turn: jobs in flight (truth 160 jobs) and utilisation (truth 80 %)
BOARD_STEPS = [LiveStep("open", 0, "jobs_in_flight", "", 1.0), LiveStep("closed", 0, "jobs_in_flight", "", 20.0),
               LiveStep("open", 1, "utilisation", "", 22.0), LiveStep("closed", 1, "utilisation", "", 30.0)]


def test_a_tight_range_that_holds_beats_ten_seats_guessing_the_truth_with_huge_ranges(loaded):
    huge = {f"wide{n}": [("jobs_in_flight", 160, 1, 100_000 * (n + 1))] for n in range(10)}
    seats, answers = _room_of({**huge, "tight": [("jobs_in_flight", 160, 158.4, 161.6)]})
    board = live.scoreboard(loaded, BOARD_STEPS[:2], seats, _graders_for(loaded, seats), answers)
    assert [(s.rank, s.handle) for s in board][:2] == [(1, "tight"), (2, "wide0")]
    assert {s.rank for s in board if s.handle != "tight"} == {2}, "each huge range scores as no range at all"
    # +-1% of 160 is 3.2 wide: 0.02 of the truth, 0.002 of the widest
    assert board[0].points == pytest.approx(0.998) and board[1].points == 0.0
    assert all(s.hits == 1 for s in board), "every range held: holding is not what ranks them"


def test_a_tight_range_that_missed_once_beats_absurd_ranges_that_always_held(loaded):
    seats, answers = _room_of({
        "absurd": [("jobs_in_flight", 160, 0, 10_000), ("utilisation", 80, 0, 5_000)],
        "wide": [("jobs_in_flight", 160, 80, 320), ("utilisation", 80, 40, 160)],
        "no_range": [("jobs_in_flight", 160, None, None), ("utilisation", 80, None, None)],
        "tight": [("jobs_in_flight", 160, 158, 162), ("utilisation", 86, 85, 87)],   # 80 is 5 below 85: missed
    })
    board = live.scoreboard(loaded, BOARD_STEPS, seats, _graders_for(loaded, seats), answers)
    assert [(s.rank, s.handle, s.hits) for s in board] == [
        (1, "tight", 1), (2, "wide", 2), (3, "absurd", 2), (3, "no_range", 0)]
    # tight: 4/160 = 0.025 -> 0.9975; (2 + 10 x 5)/80 = 0.65 -> 0.935. wide: 240/160 and 120/80 = 1.5 -> 0.85 each
    assert [s.points for s in board] == pytest.approx([1.9325, 1.7, 0.0, 0.0])


def test_the_scoreboard_says_what_its_score_is_with_the_numbers_it_ranks_by():
    rule = live.score_rule()
    assert "80% range" in rule and "10 times any miss" in rule and "10 times the truth wide" in rule
    assert "time to answer never counts" in rule


def _graders_for(loaded, seats):
    return {seat.attempt_id: live.Grader(loaded, {}) for seat in seats}


def test_the_scoreboard_never_looks_at_time_to_answer(loaded):
    fast = {k: {q: a.__class__(**{**a.__dict__, "locked_at": 2.0}) for q, a in v.items() if a.locked_at < 50}
            for k, v in ANSWERS.items()}
    slow = {k: {q: a.__class__(**{**a.__dict__, "locked_at": 19.0 if q == "jobs_in_flight" else 29.0})
                for q, a in v.items() if a.locked_at < 50} for k, v in ANSWERS.items()}
    fast[101], slow[101] = slow[101], fast[101]   # the best seat answers last
    assert ([(s.handle, s.rank) for s in live.scoreboard(loaded, STEPS, SEATS, _graders(loaded), fast)]
            == [(s.handle, s.rank) for s in live.scoreboard(loaded, STEPS, SEATS, _graders(loaded), slow)])


def test_questions_follow_the_drill_and_closes_count_from_the_first(loaded):
    order = live.questions_in_order(loaded)
    assert order[0] == ("jobs_in_flight", "board") and ("b2_breaker_at_30s", "break2") in order
    assert live.closed_at(STEPS + [LiveStep("closed", 0, "jobs_in_flight", "", 50.0)])["jobs_in_flight"] == 20.0


# -- the store, on DuckDB and PostgreSQL -------------------------------------------------------------------


def _room(store, loaded, n=2):
    session = store.start_live_session("c1", DRILL, "prof")
    seats = [store.live_join(session.id, store.ensure_candidate(f"s{i}", "c1"), 600) for i in range(n)]
    return session, seats


def test_joining_makes_one_live_attempt_of_the_class_per_candidate(opened, loaded):
    store = opened()
    session, seats = _room(store, loaded)
    again = store.live_join(session.id, store.ensure_candidate("s0", "c1"), 600)
    assert again == seats[0], "joining twice keeps the first seat"
    attempt = store.attempt_by_id(seats[0].attempt_id)
    assert (attempt.drill_id, attempt.cohort, attempt.handle) == (DRILL, "c1", "s0")
    assert [e.detail for e in store.events(attempt.id) if e.kind == "live"] == [{"session": session.id}]
    assert [a.id for a in store.attempts(cohort="c1")] == [s.attempt_id for s in seats], "ordinary class attempts"
    assert store.live_session(session.id).state == "waiting" and store.live_version(session.id)[1] == 2


def test_the_instructor_paces_the_room_and_a_stale_press_is_refused(opened, loaded):
    clock = FakeClock()
    store = opened(clock)
    questions = live.questions_in_order(loaded)
    session, _ = _room(store, loaded)
    with pytest.raises(LiveRefused):
        store.live_move(session.id, CLOSE, seen_version=session.version, questions=questions, actor="prof")
    opened_q = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    assert (opened_q.state, opened_q.question_id, opened_q.part_id) == ("open", "jobs_in_flight", "board")
    with pytest.raises(LiveRefused, match="moved on"):   # a second tab pressing Next on the waiting room
        store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    clock.t += 30
    closed = store.live_move(session.id, CLOSE, seen_version=opened_q.version, questions=questions, actor="prof")
    revealed = store.live_move(session.id, REVEAL, seen_version=closed.version, questions=questions, actor="prof")
    nxt = store.live_move(session.id, NEXT, seen_version=revealed.version, questions=questions, actor="prof")
    assert (nxt.state, nxt.step_no, nxt.question_id) == ("open", 1, "utilisation")
    assert [s.state for s in store.live_steps(session.id)] == ["waiting", "open", "closed", "revealed", "open"]
    assert store.live_steps(session.id)[2].at == opened_q.since + 30
    assert [s.id for s in store.live_sessions("c1")] == [session.id]


def test_a_press_drawn_before_a_move_on_the_same_question_is_taken_and_one_drawn_before_the_next_is_not(
        opened, loaded):
    store = opened()
    questions = live.questions_in_order(loaded)
    session, _ = _room(store, loaded)
    opened_q = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    closed = store.live_move(session.id, CLOSE, seen_version=opened_q.version, questions=questions, actor="prof")
    # Reveal, then Next pressed at once on the console as it was drawn when the question closed.
    store.live_move(session.id, REVEAL, seen_version=closed.version, questions=questions, actor="prof")
    nxt = store.live_move(session.id, NEXT, seen_version=closed.version, questions=questions, actor="prof")
    assert (nxt.state, nxt.step_no) == ("open", 1)
    with pytest.raises(LiveRefused, match="moved on"):   # the same stale draw's Next again: a double click
        store.live_move(session.id, NEXT, seen_version=closed.version, questions=questions, actor="prof")
    with pytest.raises(LiveRefused, match="Close the question"):   # legal on its question no more
        store.live_move(session.id, REVEAL, seen_version=nxt.version, questions=questions, actor="prof")
    assert [s.state for s in store.live_steps(session.id)] == ["waiting", "open", "closed", "revealed", "open"]


def test_the_question_closes_itself_once_every_seat_has_locked_in(opened, loaded):
    store = opened()
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded)
    now = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    store.lock_answer(seats[0].attempt_id, "jobs_in_flight", "board", "numeric", value=150, low=140, high=170)
    assert not store.live_locked(session.id)
    assert store.live_version(session.id) == (now.version, 2, 1)
    store.lock_answer(seats[1].attempt_id, "jobs_in_flight", "board", "numeric", value=200)
    assert store.live_locked(session.id)
    assert not store.live_locked(session.id), "closed once"
    after = store.live_session(session.id)
    assert (after.state, after.reason, after.question_id) == ("closed", ALL_LOCKED, "jobs_in_flight")
    answers = store.live_answers(session.id)
    assert answers[seats[0].attempt_id]["jobs_in_flight"].value == 150
    room = live.numeric_room(loaded.drill.question("jobs_in_flight"), "board", store.live_seats(session.id),
                             {s.attempt_id: live.Grader(loaded, {}) for s in seats}, answers,
                             own_attempt=seats[0].attempt_id, until=live.closed_at(store.live_steps(session.id))[
                                 "jobs_in_flight"])
    assert [(g.value, g.own) for g in room.guesses] == [(150, True), (200, False)]


def test_ending_the_session_finishes_every_seats_attempt(opened, loaded):
    store = opened()
    session, seats = _room(store, loaded)
    ended = store.live_move(session.id, END, seen_version=session.version, questions=[], actor="prof")
    assert ended.state == "ended" and store.live_sessions("c1") == []
    assert all(store.attempt_by_id(seat.attempt_id).finished_at is not None for seat in seats)
    for seat in seats:   # finished, not merely closed: LiveClosed is no AttemptFinished, so this tells them apart
        with pytest.raises(AttemptFinished):
            store.lock_answer(seat.attempt_id, "jobs_in_flight", "board", "numeric", value=1)
    with pytest.raises(LiveRefused):
        store.live_move(session.id, NEXT, seen_version=ended.version, questions=[("q", "p")], actor="prof")


def test_a_process_listening_on_postgresql_is_told_of_every_move(pg_opened, loaded):
    from drills.live_watch import NotifyWatch, PollingWatch, watch_for

    store = pg_opened()
    other = pg_opened()   # another process's store
    watch = watch_for(other)
    try:
        assert isinstance(watch, NotifyWatch) and watch.listening.wait(10)
        session = store.start_live_session("c1", DRILL, "prof")
        store.live_join(session.id, store.ensure_candidate("s0", "c1"), 600)
        store.live_move(session.id, NEXT, seen_version=store.live_session(session.id).version,
                        questions=live.questions_in_order(loaded), actor="prof")
        # Three moves (start, join, next), three notifications. Each is delivered at its commit and read by
        # the thread when it gets there: counted from nothing, so a late first one is not mistaken for a third.
        for _ in range(200):   # an event budget, not a deadline
            if watch.version(session.id)[1] >= 3:
                break
            watch._stop.wait(0.05)
        assert watch.version(session.id)[1] == 3
    finally:
        watch.close()
    assert isinstance(watch_for(type("S", (), {"path": "x.duckdb"})()), PollingWatch)


def test_present_means_seen_within_the_window_and_the_auto_close_waits_only_for_those(opened, loaded):
    from drills.store.live import HEARTBEAT_S, PRESENT_S

    clock = FakeClock()
    store = opened(clock)
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded, n=3)
    now = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    assert store.live_version(session.id) == (now.version, 3, 0), "joining is being seen"
    clock.t += PRESENT_S - 1
    store.live_heartbeat(session.id, seats[0].candidate_id)
    store.live_heartbeat(session.id, seats[1].candidate_id)   # s2 closed the tab: no beat
    clock.t += HEARTBEAT_S - 2   # s2 is now PRESENT_S + 2 s unseen
    assert [s.present(clock()) for s in store.live_seats(session.id)] == [True, True, False]
    assert store.live_version(session.id) == (now.version, 2, 0), "the console counts s2 away"
    store.lock_answer(seats[0].attempt_id, "jobs_in_flight", "board", "numeric", value=150)
    assert not store.live_locked(session.id)
    store.lock_answer(seats[1].attempt_id, "jobs_in_flight", "board", "numeric", value=170)
    assert store.live_locked(session.id), "everyone present locked in: the absent seat is not waited for"
    assert store.live_session(session.id).reason == ALL_LOCKED


def test_a_seat_stays_present_for_15_seconds_after_its_last_beat_and_no_longer(opened, loaded):
    """The window the console's "present means seen in the last 15 s" promises, written as the number it is."""
    clock = FakeClock()
    store = opened(clock)
    session, seats = _room(store, loaded, n=2)
    store.live_heartbeat(session.id, seats[0].candidate_id)
    seen = clock()
    clock.t = seen + 15.0   # the window's last instant: still present
    assert [s.present(clock()) for s in store.live_seats(session.id) if s.candidate_id == seats[0].candidate_id] \
        == [True]
    assert store.live_version(session.id)[1] == 2
    clock.t = seen + 15.5   # half a second past it: away, for the console and the auto-close alike
    assert [s.present(clock()) for s in store.live_seats(session.id)] == [False, False]
    assert store.live_version(session.id)[1] == 0
    store.live_heartbeat(session.id, seats[1].candidate_id)
    assert [s.present(clock()) for s in store.live_seats(session.id)] == [False, True], "a beat brings it back"


def test_one_statement_beats_the_seats_a_process_serves_and_no_other(opened, loaded):
    """What a process beats for its pages (live_heartbeats): the seats named are seen now, the rest are not."""
    clock = FakeClock()
    store = opened(clock)
    session, seats = _room(store, loaded, n=3)
    clock.t += 15.5   # everyone's join is now past the window
    store.live_heartbeats(session.id, [seats[0].candidate_id, seats[2].candidate_id, seats[0].candidate_id])
    assert [s.present(clock()) for s in store.live_seats(session.id)] == [True, False, True]
    store.live_heartbeats(session.id, [])   # nobody to beat: nothing written
    assert [s.present(clock()) for s in store.live_seats(session.id)] == [True, False, True]


def test_a_seat_that_beats_keeps_the_question_open_until_it_locks_in(opened, loaded):
    from drills.store.live import HEARTBEAT_S

    clock = FakeClock()
    store = opened(clock)
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded)
    store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    for _ in range(10):   # a minute of beats from both pages
        clock.t += HEARTBEAT_S
        for seat in seats:
            store.live_heartbeat(session.id, seat.candidate_id)
    store.lock_answer(seats[0].attempt_id, "jobs_in_flight", "board", "numeric", value=150)
    assert not store.live_locked(session.id) and store.live_session(session.id).state == "open"
    assert store.live_version(session.id)[1:] == (2, 1)


def test_a_late_lock_in_on_a_closed_questions_form_is_refused_and_not_counted(opened, loaded):
    from drills.store.live import LiveClosed

    store = opened()
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded)
    opened_q = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    store.lock_answer(seats[0].attempt_id, "jobs_in_flight", "board", "numeric", value=150)
    closed = store.live_move(session.id, CLOSE, seen_version=opened_q.version, questions=questions, actor="prof")
    with pytest.raises(LiveClosed, match="closed before your Lock in"):
        store.lock_answer(seats[1].attempt_id, "jobs_in_flight", "board", "numeric", value=160)
    nxt = store.live_move(session.id, NEXT, seen_version=closed.version, questions=questions, actor="prof")
    with pytest.raises(LiveClosed):   # the old question's form, pressed while the next one is open
        store.lock_answer(seats[1].attempt_id, "jobs_in_flight", "board", "numeric", value=160)
    store.lock_answer(seats[1].attempt_id, nxt.question_id, nxt.part_id, "numeric", value=0.5)
    assert set(store.answers(seats[1].attempt_id)) == {nxt.question_id}, "the late answer was not stored"
    assert [e.kind for e in store.events(seats[1].attempt_id)].count("locked") == 1
    solo = store.start_attempt_for(store.ensure_candidate("solo", "c1"), DRILL, 600)
    store.lock_answer(solo.id, "jobs_in_flight", "board", "numeric", value=1)   # attempts outside a room: as before


def test_a_batch_lock_in_of_a_live_seat_holds_only_the_open_question(opened, loaded):
    """The skip-a-part path locks many answers at once: for a live seat, a batch reaching past the room's open
    question is refused whole, so no answer to a question the room has not opened is stored."""
    from drills.store.live import LiveClosed
    from drills.records import AnswerEntry

    store = opened()
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded)
    opened_q = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    attempt = seats[0].attempt_id
    ahead = [AnswerEntry(opened_q.question_id, opened_q.part_id, "numeric", skipped=True),
             AnswerEntry("b2_breaker_at_30s", "break2", "choice", skipped=True)]
    with pytest.raises(LiveClosed):
        store.lock_answers(attempt, ahead)
    assert store.answers(attempt) == {}, "a refused batch stores nothing, not even its open question"
    [(answer, created)] = store.lock_answers(attempt, ahead[:1])
    assert created and answer.skipped
    store.live_move(session.id, CLOSE, seen_version=opened_q.version, questions=questions, actor="prof")
    with pytest.raises(LiveClosed):
        store.lock_answers(seats[1].attempt_id, ahead[:1])
    assert store.answers(seats[1].attempt_id) == {}


def test_the_board_marks_a_seat_in_a_live_session_as_live(opened, loaded):
    from drills.reports import aggregates
    from drills.reports.grading_key import DrillKey
    from drills.reports.source import Filters
    from ui.instructor.board import leaderboard_frame

    store = opened()
    session, seats = _room(store, loaded, n=1)
    solo = store.start_attempt_for(store.ensure_candidate("solo", "c1"), DRILL, 600)
    summary = aggregates.attempt_summary(store, DrillKey.from_loaded(loaded, {}), Filters(DRILL, "c1"))
    assert dict(zip(summary["attempt_id"], summary["live"])) == {seats[0].attempt_id: True, solo.id: False}
    shown = leaderboard_frame(aggregates.leaderboard_from(summary), "Strong")
    assert dict(zip(shown["Candidate"], shown["Live"])) == {"s0": "live", "solo": ""}


def test_item_analysis_counts_which_of_its_attempts_were_live_seats(opened, loaded):
    """Live answers are ordinary attempts of the class: item analysis counts them, and says how many were live."""
    from drills.reports import items
    from drills.reports.grading_key import DrillKey
    from drills.reports.source import Filters

    store = opened()
    questions = live.questions_in_order(loaded)
    session, seats = _room(store, loaded, n=2)
    step = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
    solo = store.start_attempt_for(store.ensure_candidate("solo", "c1"), DRILL, 600)
    for attempt, value in ((seats[0].attempt_id, 160), (seats[1].attempt_id, 400), (solo.id, 150)):
        store.lock_answer(attempt, step.question_id, step.part_id, "numeric", value=value)
        store.finish(attempt)
    store.start_attempt_for(store.ensure_candidate("open", "c1"), DRILL, 600)   # unfinished: not counted
    table = items.item_stats(store, DrillKey.from_loaded(loaded, {}), Filters(DRILL, "c1"), loaded=loaded)
    row = table[(table["question_id"] == step.question_id) & (table["variant"] == items.ALL)].iloc[0]
    assert (row["n"], row["live_n"]) == (3, 2)
    assert set(table["live_n"]) == {2}, "every question counts the same two live attempts"


def test_the_room_keeps_the_instructors_clock_from_the_first_open_question_paced_by_the_drill(loaded):
    """one_tenant~break2 paces the prompt to 1.1 min, the board to 5.9, the baseline to 7.2 and break 2 to 45; the
    room opens on the board (the prompt is read in the waiting room), so its pace starts 66 s in."""
    waiting = [LiveStep("waiting", -1, None, "", 0.0)]
    room = live.room_clock(loaded, waiting, now=50.0)
    assert room.started_at is None and room.elapsed_s == 0 and "starts when the first question opens" in \
        live.pace_words(room)
    opened = waiting + [LiveStep("open", 0, "jobs_in_flight", "", 100.0)]
    early = live.room_clock(loaded, opened, now=130.0)
    assert (early.started_at, early.elapsed_s, early.limit_s) == (100.0, 30.0, 45 * 60)
    assert (early.part_id, early.planned_part_id, early.parts_ahead) == ("board", "board", 0)
    assert live.pace_words(early) == "On pace."
    assert early.clock.remaining_s == 45 * 60 - 30
    still = live.room_clock(loaded, opened + [LiveStep("closed", 0, "jobs_in_flight", "", 200.0)], now=100.0 + 300)
    assert (still.planned_part_id, still.parts_ahead) == ("baseline", -1), "66 + 300 s is past the board's 354"
    late = live.room_clock(loaded, opened + [LiveStep("closed", 0, "jobs_in_flight", "", 200.0)], now=500.0)
    assert (late.part_id, late.planned_part_id, late.parts_ahead) == ("board", "break2", -2)
    assert live.pace_words(late) == "2 parts behind the suggested pace."
    on_break = opened + [LiveStep("open", 2, "b2_breaker_at_30s", "", 550.0)]
    assert live.pace_words(live.room_clock(loaded, on_break, now=600.0)) == "On pace."
    ended = on_break + [LiveStep("ended", 2, None, "", 700.0)]
    stopped = live.room_clock(loaded, ended, now=9999.0)
    assert stopped.elapsed_s == 600.0 and stopped.clock.finished, "an ended room's clock stops"


# -- the proper score the room ranks numbers by (drills.scoring.interval_score) --------------------------------
def test_the_interval_score_is_the_width_plus_ten_times_the_miss_for_an_80_percent_range():
    from drills import scoring

    assert scoring.interval_score(90, 110, 100) == 20                   # held: its width only
    assert scoring.interval_score(104, 106, 100) == 2 + 10 * 4          # missed low by 4: 2/0.2 = 10 per unit
    assert scoring.interval_score(90, 95, 100) == 5 + 10 * 5            # missed high by 5
    assert scoring.RANGE_ALPHA == pytest.approx(0.2)


def test_the_room_score_is_a_share_of_the_truth_capped_at_ten_and_a_missing_range_scores_the_cap():
    from drills import scoring
    from drills.schema import Tolerance

    rel = Tolerance(kind="relative", value=0.1)
    held = LockedAnswer(1, "q", "p", "numeric", 160, 150, 170, None, None, False, 1.0, 0.0)
    assert scoring.range_score(held, 160, rel) == pytest.approx(20 / 160)
    no_range = LockedAnswer(1, "q", "p", "numeric", 160, None, None, None, None, False, 1.0, 0.0)
    assert scoring.range_score(no_range, 160, rel) == 10
    assert scoring.range_score(None, 160, rel) == 10
    assert scoring.range_score(LockedAnswer(1, "q", "p", "numeric", 160, 0, 1_000_000, None, None, False, 1.0, 0.0),
                               160, rel) == 10, "an absurd range scores no better than none"
    # a truth of 0: the share is of the tolerance band (0.1 units), not a division by zero
    at_zero = LockedAnswer(1, "q", "p", "numeric", 0, -0.05, 0.05, None, None, False, 1.0, 0.0)
    assert scoring.range_score(at_zero, 0, rel) == pytest.approx(1.0)
    # a hint's share is given up as for every grade
    hinted = LockedAnswer(1, "q", "p", "numeric", 160, 150, 170, None, None, False, 1.0, 0.25)
    assert scoring.range_points(hinted, 160, rel) == pytest.approx((1 - 20 / 160 / 10) * 0.75)


def test_the_interval_score_is_proper_giving_the_real_10th_and_90th_percentiles_scores_best():
    """Against outcomes spread evenly over 1..100, the range with the least mean score is the 10th to the 90th
    percentile: a score that paid for wider (or narrower) ranges would move it."""
    from drills import scoring

    outcomes = range(1, 101)
    best = min(((low, high) for low in range(1, 101) for high in range(low, 101)),
               key=lambda r: sum(scoring.interval_score(r[0], r[1], x) for x in outcomes))
    assert 10 <= best[0] <= 11 and 90 <= best[1] <= 91, best
