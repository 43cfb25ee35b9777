"""The LTI tool's store part: a launch becomes an account keyed by platform, client, deployment and subject,
its course a class, its teaching roles instructors of that class; codes and nonces are one-use."""
from __future__ import annotations

import pytest

from drills.backends import open_store


def launch(**changes) -> dict:
    record = {"issuer": "https://lms.example", "client_id": "c1", "deployment_id": "d1", "subject": "u1",
              "name": "Ada Lovelace", "email": "ada@example.org", "context_id": "course-42",
              "context_title": "Systems 101", "instructor": False}
    record.update(changes)
    return record


@pytest.fixture
def store(tmp_path):
    store = open_store(tmp_path / "lti.duckdb", clock=lambda: 1_800_000_000.0)
    yield store
    store.close()


def test_a_learner_joins_the_course_class(store):
    visit = store.lti_visit(launch())
    assert store.class_info(visit.cohort).title == "Systems 101"
    assert not visit.instructor
    assert store.account_cohorts(visit.account.id) == [(visit.cohort, "Ada Lovelace")]
    again = store.lti_visit(launch())
    assert again.account.id == visit.account.id and again.cohort == visit.cohort


def test_the_same_subject_on_another_deployment_is_another_account(store):
    one = store.lti_visit(launch())
    other = store.lti_visit(launch(deployment_id="d2"))
    assert one.account.id != other.account.id and one.cohort != other.cohort


def test_an_instructor_is_named_on_the_class(store):
    learner = store.lti_visit(launch())
    teacher = store.lti_visit(launch(subject="t1", email="grace@example.org", instructor=True))
    assert teacher.cohort == learner.cohort and teacher.instructor
    assert "grace@example.org" in store.class_info(teacher.cohort).instructors
    assert [c.cohort for c in store.classes_for("grace@example.org")] == [teacher.cohort]


def test_two_learners_with_one_name_both_join(store):
    first = store.lti_visit(launch())
    second = store.lti_visit(launch(subject="u2", email="ada2@example.org"))
    names = {store.account_cohorts(v.account.id)[0][1] for v in (first, second)}
    assert len(names) == 2 and "Ada Lovelace" in names


def test_on_postgresql_nonces_codes_and_visits_hold_too(pg_url):
    """The class's multi-process store: a nonce is spent once, a code redeems once and dies after 60 s."""
    now = [1_800_000_000.0]
    store = open_store(pg_url, clock=lambda: now[0])
    try:
        assert store.use_lti_nonce("iss", "n-1", 4_102_444_800) is True
        assert store.use_lti_nonce("iss", "n-1", 4_102_444_800) is False
        code = store.issue_launch_code(launch())
        assert store.redeem_launch_code(code)["subject"] == "u1"
        assert store.redeem_launch_code(code) is None
        stale = store.issue_launch_code(launch())
        now[0] += 61
        assert store.redeem_launch_code(stale) is None
        visit = store.lti_visit(launch(instructor=True))
        assert "ada@example.org" in store.class_info(visit.cohort).instructors
    finally:
        store.close()
