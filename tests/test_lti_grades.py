"""Grade passback (LTI AGS) against lti1p3platform's score endpoint (tests/lti_lms.py): a learner launched from
the course finishes an attempt, its grade is queued where attempts finish (ui.lms.queue_grade) and the sender
(deploy.lti.grades.send_due) posts it with pylti1p3's AGS client after a token from the platform; notes wait as
PendingManual until an instructor's override sends FullyGraded; an outage is retried with doubling waits and
the grade arrives exactly once after recovery; the board's override hook queues a grade. The outbox's rules hold on
PostgreSQL too."""
from __future__ import annotations

import pytest

from deploy.lti.grades import send_due
from drills import instructor_actions, scoring
from drills.backends import open_store
from drills.loader import load_catalogue
from drills.store.lti_grades import FULLY_GRADED, PENDING_MANUAL, Grade, retry_wait
from tests.lti_lms import LEARNER, Clock, code_of, course_with_tool, launch_form, post, tool_key  # noqa: F401
from ui.drill.attempt_view import AttemptView
from tests.test_instructor import (LOADED, _override, _selected_attempt, _signed_in, configured,  # noqa: F401
                                   demo_db, demo_template)
from ui.lms import queue_grade

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"



@pytest.fixture(scope="module")
def one_tenant():
    return load_catalogue().drills["one_tenant"]


@pytest.fixture
def lms(tmp_path, tool_key):
    clock = Clock()
    members = {"learner-1": {"name": "Ada Lovelace", "email": "ada@example.org", "roles": [LEARNER]}}
    with course_with_tool(tmp_path, tool_key, members, clock) as (course, _, store, settings):
        yield course, store, settings, clock


def launched_attempt(course, store, loaded):
    """The learner launches from the course into its class and starts the drill the link names."""
    client, form = launch_form(course, "learner-1")
    launch = store.redeem_launch_code(code_of(post(client, form)))
    assert SCORE_SCOPE in launch["ags_scopes"]
    visit = store.lti_visit(launch)
    candidate = store.account_candidate(visit.account, visit.cohort)
    return store.start_attempt_for(candidate, loaded.drill.id, 2700)


def lock_truths(store, loaded, attempt, question_ids):
    view = AttemptView.load(store, attempt, loaded)
    parts = scoring._part_of(loaded.drill)
    for qid in question_ids:
        store.lock_answer(attempt.id, qid, parts[qid], "numeric", value=loaded.truth(qid, view.sim_values))


def finish(store, loaded, attempt) -> AttemptView:
    store.finish(attempt.id)
    view = AttemptView.load(store, store.attempt_by_id(attempt.id), loaded)
    assert queue_grade(view)
    return view


def numeric_ids(loaded, n):
    return [q.id for q in loaded.drill.all_questions() if q.kind == "numeric"][:n]


def test_a_finished_attempts_score_lands_in_the_course_gradebook(lms, one_tenant):
    course, store, settings, _ = lms
    attempt = launched_attempt(course, store, one_tenant)
    lock_truths(store, one_tenant, attempt, numeric_ids(one_tenant, 2))
    finish(store, one_tenant, attempt)
    assert course.scores == []                       # queued, not sent by the page itself
    assert send_due(store, settings) == (1, 0)
    [score] = course.scores
    assert score["lineitem"] == "lineitem-1" and score["userId"] == "learner-1"
    assert score["scoreGiven"] == 2.0 and score["scoreMaximum"] == len(one_tenant.drill.all_questions())
    assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"
    assert score["timestamp"].endswith("Z")
    assert send_due(store, settings) == (0, 0) and len(course.scores) == 1
    assert [row.outcome for row in store.lti_outbox(attempt.id)] == ["sent"]


def test_notes_wait_for_an_instructor_and_the_override_sends_fully_graded(lms, one_tenant):
    course, store, settings, clock = lms
    attempt = launched_attempt(course, store, one_tenant)
    notes = next(q for q in one_tenant.drill.all_questions() if q.kind == "notes")
    store.lock_answer(attempt.id, notes.id, scoring._part_of(one_tenant.drill)[notes.id], "notes",
                      notes="shed the hot tenant first")
    view = finish(store, one_tenant, attempt)
    assert send_due(store, settings) == (1, 0)
    clock.now += 60
    skill = one_tenant.drill.rubric[0].id
    instructor_actions.override_skill(store, view.attempt, one_tenant, skill, "strong", "Clear plan", "Grace")
    assert queue_grade(view)
    assert send_due(store, settings) == (1, 0)
    assert [s["gradingProgress"] for s in course.scores] == ["PendingManual", "FullyGraded"]
    assert course.scores[0]["timestamp"] < course.scores[1]["timestamp"]


def test_an_outage_delays_grades_and_recovery_delivers_each_exactly_once(lms, one_tenant):
    """Two grades for a gradebook that answers 503: each pass posts once to the failing LMS (the other grade
    waits for the next pass), each failed grade waits 10 s then 20 s, and after recovery both arrive once."""
    course, store, settings, clock = lms
    first = launched_attempt(course, store, one_tenant)
    second = store.start_attempt_for(store.account_candidate(*_account_and_cohort(store, first)), "one_tenant", 2700)
    finish(store, one_tenant, first)
    finish(store, one_tenant, second)
    course.down = True
    assert send_due(store, settings) == (0, 1)       # the first is refused; the second waits for the next pass
    [row] = store.lti_outbox(first.id)
    assert row.tries == 1 and row.outcome == "" and ": 503 - the gradebook is down" in row.last_error
    assert store.lti_outbox(second.id)[0].tries == 0
    assert send_due(store, settings) == (0, 1)       # the second is refused
    assert send_due(store, settings) == (0, 0)       # neither is due again for 10 s
    clock.now += 10
    assert send_due(store, settings) == (0, 1)
    assert send_due(store, settings) == (0, 1)       # both refused again: now each waits 20 s
    clock.now += 19
    course.down = False
    assert send_due(store, settings) == (0, 0)
    clock.now += 1
    assert send_due(store, settings) == (2, 0)
    assert send_due(store, settings) == (0, 0)
    assert len(course.scores) == 2 and {s["userId"] for s in course.scores} == {"learner-1"}
    for attempt in (first, second):
        [row] = store.lti_outbox(attempt.id)
        assert row.tries == 3 and row.outcome == "sent" and row.last_error == ""


def _account_and_cohort(store, attempt):
    """What account_candidate needs to find an attempt's candidate again: its account and class."""
    account_id = store.query("SELECT account_id FROM candidates WHERE id = ?", [attempt.candidate_id]).fetchone()[0]
    return store.account_by_id(account_id), attempt.cohort


def test_an_attempt_no_lms_asked_for_queues_nothing(lms, one_tenant):
    _, store, _, _ = lms
    attempt = store.start_attempt(one_tenant.drill.id, "ada", "", 2700)
    store.finish(attempt.id)
    assert not queue_grade(AttemptView.load(store, store.attempt_by_id(attempt.id), one_tenant))
    assert store.lti_outbox() == []


def test_retries_wait_ten_seconds_doubling_up_to_an_hour():
    assert [retry_wait(n) for n in (1, 2, 3, 4)] == [10, 20, 40, 80]
    assert retry_wait(9) == 2560 and retry_wait(10) == 3600 and retry_wait(60) == 3600


def test_on_postgresql_the_outbox_retries_supersedes_and_sends_once(pg_url):
    now = [1_800_000_000.0]
    store = open_store(pg_url, clock=lambda: now[0])
    try:
        candidate = store.account_candidate(store.account_for("lti x", "u1", "", "Ada"), "")
        store.set_lti_grade_target(candidate.id, {"issuer": "https://lms", "client_id": "c1", "subject": "u1",
                                                  "lineitem": "https://lms/li/1", "ags_scopes": [SCORE_SCOPE],
                                                  "custom": {}})
        attempt = store.start_attempt_for(candidate, "one_tenant", 2700)
        assert store.queue_lti_grade(attempt.id, Grade(1.0, 4.0, PENDING_MANUAL, ""))
        [first] = store.due_lti_grades()
        assert first.scopes == (SCORE_SCOPE,) and first.user_id == "u1" and first.lineitem == "https://lms/li/1"
        assert store.lti_grade_failed(first.id, "HTTP 503") == now[0] + 10
        assert store.due_lti_grades() == []
        assert store.queue_lti_grade(attempt.id, Grade(3.0, 4.0, FULLY_GRADED, ""))
        now[0] += 10
        [newest] = store.due_lti_grades()              # the newer grade overtakes the waiting one
        assert newest.given == 3.0
        store.lti_grade_sent(newest.id)
        store.lti_grade_sent(newest.id)                # a second mark changes nothing
        assert [(r.outcome, r.tries) for r in store.lti_outbox(attempt.id)] == [("superseded", 1), ("sent", 1)]
        assert store.due_lti_grades() == []
    finally:
        store.close()


def test_an_override_saved_on_the_board_queues_the_attempts_grade(app_test, demo_db, configured):
    """The board's hook: an instructor's override of an attempt some LMS launched queues its grade again,
    FullyGraded, with the verdict tally as the comment."""
    store = open_store(demo_db)
    try:
        for candidate_id in {a.candidate_id for a in store.attempts()}:
            store.set_lti_grade_target(candidate_id, {"issuer": "https://lms", "client_id": "c1", "subject": "u1",
                                                      "lineitem": "https://lms/li/1", "ags_scopes": [SCORE_SCOPE]})
    finally:
        store.close()
    at = _signed_in(app_test, tab="Attempt")
    attempt = _selected_attempt(at, demo_db)
    _override(at, LOADED.drill.rubric[0].id, "strong", "Clear detection plan.")
    assert not at.exception, at.exception
    store = open_store(demo_db)
    try:
        [queued] = store.lti_outbox(attempt.id)
    finally:
        store.close()
    assert queued.grading_progress == "FullyGraded" and queued.activity_progress == "Completed"
    assert queued.lineitem == "https://lms/li/1" and queued.comment.endswith("needed.")
