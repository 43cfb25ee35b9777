"""Chromium: journeys in the order a person walks them, across pages and the provider's round trip.

A join link opened signed out survives the sign-in and ends on the class's board; a returning candidate's resume
code survives a move of focus; a sign-in begun on the board comes back to the board; an anonymous candidate with a
class's link counts for that class. Sign-in goes through the tests' real OpenID provider (tests/oidc/provider.mjs).
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from drills.loader import load_catalogue
from drills.store import AttemptStore
from tests.browser import (
    LOOPBACK_REDIRECT_URI,
    AppServer,
    lock_in,
    resume_code_on,
    sign_in_through_provider,
    start_drill,
    wait_for_app,
)
from tests.oidc_provider import auth_secrets

pytestmark = pytest.mark.browser

DRILL = "One Tenant Takes Everyone Down"
PROF = "prof@school.test"
BOARD_SIGN_IN = "Sign in with your account"


@pytest.fixture
def signed_server(tmp_path, oidc_provider):
    server = AppServer(tmp_path / "journeys.duckdb", env={"FAULTLINES_INSTRUCTORS": PROF},
                       secrets=auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, "j" * 40))
    server.start()
    yield server
    server.stop()


def _class(server, title: str, *, requires_sign_in: bool) -> tuple[str, str]:
    """A class made in the server's store while it is stopped: (cohort, join code)."""
    server.stop()
    store = AttemptStore(server.db_path)
    try:
        info, code = store.create_class(title, PROF, requires_sign_in=requires_sign_in)
    finally:
        store.close()
    server.start()
    return info.cohort, code


def _stored(server, token: str):
    server.stop()
    store = AttemptStore(server.db_path)
    try:
        attempt = store.attempt_by_token(token)
        return attempt, store.answers(attempt.id)
    finally:
        store.close()


def _new_page(chromium):
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    return context, page


def _open(page, url: str) -> None:
    page.goto(url)
    page.get_by_test_id("stApp").wait_for(timeout=120_000)   # a cold server imports every page first
    wait_for_app(page)


def _lock_first_board_question(page, url: str, token: str) -> None:
    loaded = load_catalogue().drills["one_tenant"]
    _open(page, f"{url}/drill?attempt={token}&part=board")
    lock_in(page, loaded, loaded.drill.parts[1].questions[0])
    page.get_by_text("Locked in").first.wait_for()


def test_a_join_link_opened_signed_out_survives_the_sign_in_and_ends_on_the_class_board(signed_server, chromium):
    cohort, code = _class(signed_server, "Drill night", requires_sign_in=True)
    cand, page = _new_page(chromium)
    _open(page, f"{signed_server.url}/?join={code}")
    page.get_by_text("You were invited to join a class").wait_for()
    sign_in_through_provider(page, "cy@school.test", button="Sign in to join")

    page.get_by_text("Join the class “Drill night”").wait_for()   # back on the link, the class named
    assert f"join={code}" in page.url
    page.get_by_role("textbox", name=re.compile("Your name in this class")).fill("Cy")
    page.get_by_role("button", name="Join", exact=True).click()
    page.get_by_text("Your attempts count for").wait_for()
    picked = page.get_by_role("combobox", name=re.compile("Your attempts count for"))
    assert "Drill night — as Cy" in (picked.input_value() or picked.inner_text()), picked.inner_text()
    page.get_by_role("button", name=f"Start the clock: {DRILL}").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    token = re.search(r"attempt=([^&]+)", page.url).group(1)
    _lock_first_board_question(page, signed_server.url, token)
    cand.close()

    prof, board = _new_page(chromium)
    _open(board, f"{signed_server.url}/instructor")
    sign_in_through_provider(board, PROF, button=BOARD_SIGN_IN)
    # the board covers the prof's class: one candidate, Cy
    expect(board.get_by_test_id("stMetric").filter(has_text="Candidates")).to_have_text(
        re.compile(r"^Candidates\s*1\s*$"))
    prof.close()

    attempt, answers = _stored(signed_server, token)
    assert (attempt.handle, attempt.cohort, len(answers)) == ("Cy", cohort, 1)


def test_signing_in_from_the_board_comes_back_to_the_board(signed_server, page):
    _open(page, f"{signed_server.url}/instructor")
    page.get_by_text("This page is for instructors").wait_for()
    sign_in_through_provider(page, PROF, button=BOARD_SIGN_IN)
    page.get_by_role("heading", name="Instructor scoreboard").wait_for()
    assert urlpath(page.url) == "/instructor"
    page.get_by_text(f"Signed in as {PROF}").first.wait_for()
    page.reload()   # the way back is followed once: a fresh visit to the catalogue stays there
    wait_for_app(page)
    _open(page, signed_server.url)
    page.get_by_role("heading", name="Who are you?").wait_for()
    assert urlpath(page.url) == "/"


def test_an_anonymous_candidate_with_a_class_link_counts_for_that_class(signed_server, page):
    cohort, code = _class(signed_server, "Open evening", requires_sign_in=False)
    _open(page, f"{signed_server.url}/?join={code}")
    page.get_by_text("You were invited to the class “Open evening”").wait_for()
    expect(page.get_by_role("textbox", name="Cohort code (optional)")).to_have_value(cohort)
    page.get_by_role("textbox", name="Your handle").fill("walk-in")
    page.get_by_role("button", name=f"Start the clock: {DRILL}").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    token = re.search(r"attempt=([^&]+)", page.url).group(1)
    _lock_first_board_question(page, signed_server.url, token)
    attempt, answers = _stored(signed_server, token)
    assert (attempt.handle, attempt.cohort, attempt.account_id, len(answers)) == ("walk-in", cohort, None, 1)


def test_a_returning_candidate_types_handle_and_code_moves_focus_then_starts(app_server, page):
    start_drill(page, app_server.url, DRILL, handle="comeback")
    code = resume_code_on(page)
    _open(page, app_server.url)
    page.get_by_role("textbox", name="Your handle").fill("comeback")
    box = page.get_by_role("textbox", name="Resume code, if used before")
    box.fill(code)
    box.press("Tab")   # focus moves on (to the field's Show password toggle), as a person tabbing away
    wait_for_app(page)
    page.get_by_role("button", name=f"Start the clock: {DRILL}").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    wait_for_app(page)
    assert page.get_by_text("is in use").count() == 0


def urlpath(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path
