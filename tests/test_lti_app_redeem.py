"""The Streamlit side of an LMS launch: the page redeems ?lti=CODE once, signs the session in as the LTI
account, and drops the code from the address; a spent code signs nobody in."""
from __future__ import annotations

from drills.store import AttemptStore
from ui.identity import LTI_VISIT

LAUNCH = {"issuer": "https://lms.example", "client_id": "c1", "deployment_id": "d1", "subject": "u1",
          "name": "Ada Lovelace", "email": "ada@example.org", "context_id": "course-42",
          "context_title": "Systems 101", "instructor": False}


def _code(db_path) -> str:
    store = AttemptStore(db_path)
    try:
        return store.issue_launch_code(LAUNCH)
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
