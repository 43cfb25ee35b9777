"""The Streamlit side of an LMS launch: the page redeems ?lti=CODE once, signs the session in as the LTI
account, and drops the code from the address; a spent code signs nobody in."""
from __future__ import annotations

from drills.store import AttemptStore
from ui.identity import LTI_VISIT

LAUNCH = {"issuer": "https://lms.example", "client_id": "c1", "deployment_id": "d1", "subject": "u1",
          "name": "Ada Lovelace", "email": "ada@example.org", "context_id": "course-42",
          "context_title": "Systems 101", "instructor": False}


def _code(db_path, launch: dict = LAUNCH) -> str:
    store = AttemptStore(db_path)
    try:
        return store.issue_launch_code(launch)
    finally:
        store.close()


def test_the_page_redeems_the_code_once_and_drops_it(app_test, db_path):
    code = _code(db_path)
    at = app_test("app.py")
    at.query_params["lti"] = code
    at.run()
    assert not at.exception, at.exception
    assert "lti" not in at.query_params
    visit = at.session_state[LTI_VISIT]
    assert visit.account.subject == "u1" and not visit.instructor

    again = app_test("app.py")
    again.query_params["lti"] = code
    again.run()
    assert not again.exception, again.exception
    assert LTI_VISIT not in again.session_state
    assert any("launch again" in w.value for w in again.warning)


def _attempts(db_path, drill_id):
    store = AttemptStore(db_path)
    try:
        return store.attempts(drill_id=drill_id)
    finally:
        store.close()


def test_a_link_that_names_a_drill_opens_it_once_and_resumes_it_at_the_next_launch(app_test, db_path):
    """The LMS link made by deep linking names one_tenant's essentials path: the learner lands in a new
    attempt at it; back on the catalogue it is not sent in again, and launching again resumes that attempt."""
    launch = {**LAUNCH, "custom": {"drill": "one_tenant", "scope": "essentials"}, "drill_id": "one_tenant~essentials"}
    at = app_test("app.py")
    at.query_params["lti"] = _code(db_path, launch)
    at.run()
    assert not at.exception, at.exception
    [attempt] = _attempts(db_path, "one_tenant~essentials")
    assert attempt.handle == "Ada Lovelace" and at.query_params["attempt"] == attempt.token
    at.switch_page("pages/home.py").run()   # going back to the catalogue is not sent into the drill again
    assert not at.exception, at.exception
    assert at.title[0].value == "Fault Lines" and len(_attempts(db_path, "one_tenant~essentials")) == 1

    second = app_test("app.py")
    second.query_params["lti"] = _code(db_path, launch)
    second.run()
    assert not second.exception, second.exception
    assert [a.token for a in _attempts(db_path, "one_tenant~essentials")] == [attempt.token]
    assert second.query_params["attempt"] == attempt.token
