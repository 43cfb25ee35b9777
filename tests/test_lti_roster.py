"""Course rosters (LTI NRPS) from lti1p3platform's membership endpoint (tests/lti_lms.py): a launch records
where the class's members are read, the LMS worker reads them with pylti1p3's NRPS client (after a token from
the platform), again when an instructor asks or after 15 minutes, keeps the last roster through an outage, and
the board's roster part names the learners who have not started the drill. The store's part holds on
PostgreSQL too."""
from __future__ import annotations

import pytest

from deploy.lti.roster import sync_rosters
from drills.backends import open_store
from tests.lti_lms import (INSTRUCTOR, LEARNER, Clock, code_of, course_with_tool, launch_form, post,  # noqa: F401
                           tool_key)



@pytest.fixture
def lms(tmp_path, tool_key):
    clock = Clock()
    members = {
        "learner-1": {"name": "Ada Lovelace", "email": "ada@example.org", "roles": [LEARNER]},
        "learner-2": {"name": "Barbara Liskov", "email": "barbara@example.org", "roles": [LEARNER]},
        "learner-3": {"name": "Charles Babbage", "email": "charles@example.org", "roles": [LEARNER]},
        "teacher-1": {"name": "Grace Hopper", "email": "grace@example.org", "roles": [INSTRUCTOR]}}
    with course_with_tool(tmp_path, tool_key, members, clock) as (course, _, store, settings):
        yield course, store, settings, clock


def visit(course, store, user):
    client, form = launch_form(course, user)
    return store.lti_visit(store.redeem_launch_code(code_of(post(client, form))))


def test_the_course_roster_is_read_and_says_who_has_not_started(lms):
    course, store, settings, _ = lms
    ada = visit(course, store, "learner-1")
    visit(course, store, "learner-2")                          # launched, never started the drill
    cohort = ada.cohort
    store.start_attempt_for(store.account_candidate(ada.account, cohort), "one_tenant", 2700)
    assert store.lti_roster_source(cohort).synced_at is None
    assert sync_rosters(store, settings) == (1, 0)
    roster = {m.user_id: m for m in store.lti_roster(cohort, "one_tenant")}
    assert set(roster) == {"learner-1", "learner-2", "learner-3", "teacher-1"}
    assert roster["learner-1"].attempts == 1 and roster["learner-1"].launched
    assert roster["learner-2"].attempts == 0 and roster["learner-2"].launched
    assert roster["learner-3"].attempts == 0 and not roster["learner-3"].launched
    assert roster["learner-3"].name == "Charles Babbage" and roster["learner-3"].learner
    assert not roster["teacher-1"].learner
    assert store.lti_roster(cohort, "hot_tenant")[0].attempts == 0   # counted per drill


def test_a_roster_is_read_again_when_asked_or_after_15_minutes(lms):
    course, store, settings, clock = lms
    cohort = visit(course, store, "learner-1").cohort
    assert sync_rosters(store, settings) == (1, 0)
    assert sync_rosters(store, settings) == (0, 0)
    course.members["learner-4"] = {"name": "Donald Knuth", "email": "", "roles": [LEARNER]}
    clock.now += 1
    store.request_lti_roster_sync(cohort)
    assert sync_rosters(store, settings) == (1, 0)
    assert "learner-4" in {m.user_id for m in store.lti_roster(cohort, "one_tenant")}
    clock.now += 15 * 60 - 1
    assert sync_rosters(store, settings) == (0, 0)
    clock.now += 1
    assert sync_rosters(store, settings) == (1, 0)


def test_an_outage_keeps_the_last_roster_and_says_why(lms):
    course, store, settings, clock = lms
    cohort = visit(course, store, "learner-1").cohort
    assert sync_rosters(store, settings) == (1, 0)
    course.down = True
    clock.now += 1
    store.request_lti_roster_sync(cohort)
    source = store.lti_roster_source(cohort)   # a second class on the same LMS, never read yet
    store.set_lti_roster_source("another-class", source.platform, {
        "issuer": source.issuer, "client_id": source.client_id, "nrps_url": source.memberships_url})
    both = (cohort, "another-class")
    assert sync_rosters(store, settings) == (0, 1)   # one refused read a pass: the other class waits
    assert sum(1 for c in both if store.lti_roster_source(c).last_error) == 1
    assert sync_rosters(store, settings) == (0, 1)
    assert all(store.lti_roster_source(c).last_error for c in both)
    assert len(store.lti_roster(cohort, "one_tenant")) == 4
    assert "503" in store.lti_roster_source(cohort).last_error
    course.down = False
    clock.now += 1
    store.request_lti_roster_sync(cohort)
    assert sync_rosters(store, settings) == (1, 0) and store.lti_roster_source(cohort).last_error == ""


def _board_script(db_path: str, cohort: str) -> None:
    from types import SimpleNamespace

    from drills.backends import open_store
    from drills.loader import load_catalogue
    from ui.instructor.roster import render_roster

    store = open_store(db_path)
    render_roster(SimpleNamespace(store=store, loaded=load_catalogue().drills["one_tenant"],
                                  filters=SimpleNamespace(cohort=cohort)))


def test_the_board_names_the_learners_who_have_not_started(lms, tmp_path):
    from streamlit.testing.v1 import AppTest

    course, store, settings, clock = lms
    clock.now = 1_000_000_000.0   # 2001: the page's store runs on the wall clock, which is later
    ada = visit(course, store, "learner-1")
    store.start_attempt_for(store.account_candidate(ada.account, ada.cohort), "one_tenant", 2700)
    sync_rosters(store, settings)
    store.close()   # the page opens the DuckDB file itself
    at = AppTest.from_function(_board_script, args=(str(tmp_path / "lti.duckdb"), ada.cohort), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.expander[0].label == "LMS roster: 2 of 3 learners have not started this drill"
    table = at.dataframe[0].value
    assert list(table["Learner"]) == ["Barbara Liskov", "Charles Babbage"]
    assert list(table["Where they are"]) == ["not launched yet", "not launched yet"]
    at.button[0].click().run(timeout=60)
    reopened = open_store(tmp_path / "lti.duckdb")
    try:
        source = reopened.lti_roster_source(ada.cohort)
        assert source.requested_at > source.synced_at     # the worker reads it again at its next pass
    finally:
        reopened.close()
    at_other = AppTest.from_function(_board_script, args=(str(tmp_path / "lti.duckdb"), "not-an-lms-class"),
                                     default_timeout=60).run()
    assert not at_other.expander


def test_on_postgresql_a_roster_is_kept_and_matched(pg_url):
    store = open_store(pg_url, clock=lambda: 1_800_000_000.0)
    try:
        launch = {"issuer": "https://lms", "client_id": "c1", "deployment_id": "d1", "subject": "u1", "name": "Ada",
                  "email": "", "context_id": "course-42", "context_title": "Systems 101", "instructor": False,
                  "nrps_url": "https://lms/memberships"}
        ada = store.lti_visit(launch)
        assert store.lti_roster_source(ada.cohort).memberships_url == "https://lms/memberships"
        assert [s.cohort for s in store.lti_rosters_due()] == [ada.cohort]
        members = [{"user_id": "u1", "name": "Ada", "roles": [LEARNER]},
                   {"user_id": "u2", "name": "Bob", "roles": [LEARNER], "status": "Inactive"}]
        assert store.replace_lti_roster(ada.cohort, members) == 2
        roster = store.lti_roster(ada.cohort, "one_tenant")
        assert [(m.user_id, m.launched, m.active) for m in roster] == [("u1", True, True), ("u2", False, False)]
        assert store.lti_rosters_due() == []
    finally:
        store.close()
