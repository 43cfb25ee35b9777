"""A learner opens the tool's link on a course page of lti1p3platform (tests/lti_lms.py) in Chromium: the whole
LTI launch runs inside the LMS page's iframe (the platform's OIDC initiation, the tool's login, the platform's
auto-posted id token, the tool's launch page), and "Continue here" opens the app in the frame, signed in as
the course account and straight into the drill the link names. Finishing it there sends its grade to the
course's gradebook through the LMS worker. The tool and the app share a PostgreSQL store, as a served class
does."""
from __future__ import annotations

from playwright.sync_api import expect

from deploy.lti.grades import send_due
from tests.browser import AppServer
from tests.lti_lms import MEMBERS, course_with_tool, tool_key  # noqa: F401 - the shared fixture


def test_a_learner_launches_from_the_course_page_into_the_drill_and_its_grade_comes_back(tmp_path, tool_key, page,
                                                                                           pg_url):
    app = AppServer(tmp_path / "app.duckdb", env={"FAULTLINES_DB": pg_url})
    app.start()
    try:
        with course_with_tool(tmp_path, tool_key, MEMBERS, db=pg_url, app_url=app.url + "/") as (
                course, _, store, settings):
            page.goto(course.url + "/course?user=learner-1")
            frame = page.frame_locator("#tool")
            frame.get_by_role("link", name="Continue here").click()
            expect(frame.get_by_role("heading", name="The prompt")).to_be_visible(timeout=120_000)
            [attempt] = store.attempts(drill_id="one_tenant")
            assert attempt.handle == "Ada Lovelace" and attempt.finished_at is None
            inner = next(f for f in page.frames if f.url.startswith(app.url))
            assert f"attempt={attempt.token}" in inner.url and "lti=" not in inner.url

            frame.get_by_role("combobox", name="Part").click()      # to the last step, where Finish is
            frame.get_by_role("option").last.click()
            frame.get_by_text("Finish anyway", exact=True).click()
            frame.get_by_role("button", name="Finish and see results").click()
            expect(frame.get_by_role("heading", name="Results")).to_be_visible()
            assert send_due(store, settings) == (1, 0)
            [score] = course.scores
            assert score["userId"] == "learner-1" and score["scoreGiven"] == 0.0
            assert score["activityProgress"] == "Completed" and score["gradingProgress"] == "FullyGraded"
    finally:
        app.stop()
