"""Chromium: an instructor runs a question live for three signed-in candidates, each in their own browser.

Nobody reloads a candidate's page: the fragment notices the instructor's moves (and the last lock-in's
auto-close) and redraws the room. Screenshots go beside the database for a look.
"""
from __future__ import annotations

import re

import pytest

from drills.store import AttemptStore
from tests.browser import LOOPBACK_REDIRECT_URI, AppServer, wait_for_app
from tests.oidc_provider import auth_secrets
from tests.test_browser_accounts import _open, _signed_in

pytestmark = pytest.mark.browser

CANDIDATES = (("ana@school.test", "Ana", "150"), ("bo@school.test", "Bo", "200"), ("cy@school.test", "Cy", "170"))


@pytest.fixture
def room_server(tmp_path, oidc_provider):
    db = tmp_path / "live.duckdb"
    store = AttemptStore(db)
    try:
        _, code = store.create_class("Drill night", "prof@school.test")
    finally:
        store.close()
    server = AppServer(db, env={"FAULTLINES_INSTRUCTORS": "prof@school.test"},
                       secrets=auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, "c" * 40))
    server.start()
    yield server, code
    server.stop()


def _seen(page, text: str, timeout_ms: int = 15_000) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_ms)


def test_the_room_follows_the_instructor_without_a_reload(room_server, chromium, tmp_path):
    server, code = room_server
    prof, console = _signed_in(chromium, server, "prof@school.test")
    _open(console, f"{server.url}/live")
    console.get_by_test_id("stSelectbox").filter(has_text="Run live").click()
    console.get_by_role("option", name=re.compile("Break 2: the primary LLM provider goes down")).click()
    console.get_by_role("button", name="Start the live session").click()
    _seen(console, "Open the first question")

    pages = []
    for login, name, _ in CANDIDATES:
        context, page = _signed_in(chromium, server, login)
        _open(page, f"{server.url}/?join={code}")
        page.get_by_role("textbox", name=re.compile("Your name in this class")).fill(name)
        page.get_by_role("button", name="Join", exact=True).click()
        wait_for_app(page)
        _open(page, f"{server.url}/live")
        _seen(page, "You are in the waiting room")
        pages.append((context, page))
    _seen(console, "Who is here (3)")

    console.get_by_role("button", name="Open the first question").click()
    for (_, page), (_, _, guess) in zip(pages, CANDIDATES):
        _seen(page, "Best guess")   # the fragment reran the page
        page.get_by_role("textbox", name=re.compile("Best guess")).fill(guess)
        page.get_by_role("textbox", name=re.compile("80% sure it is above")).fill(str(int(guess) - 20))
        page.get_by_role("textbox", name="…and below").fill(str(int(guess) + 20))
        page.get_by_role("button", name=re.compile("Lock in")).click()
        wait_for_app(page)
    # the last lock-in closed the question: every page shows the room without anyone reloading
    for _, page in pages:
        _seen(page, "3 guesses of 3 in the room")
    pages[0][1].screenshot(path=str(tmp_path / "candidate_closed.png"), full_page=True)
    _seen(console, "closed (all locked in)")
    wait_for_app(console)
    console.get_by_role("button", name="Reveal the answer").click()
    wait_for_app(console)
    console.screenshot(path=str(tmp_path / "console_revealed.png"), full_page=True)
    for _, page in pages:
        _seen(page, "Truth: 160 jobs")
    pages[0][1].screenshot(path=str(tmp_path / "candidate_revealed.png"), full_page=True)
    _seen(console, "Scoreboard")
    console.screenshot(path=str(tmp_path / "console.png"), full_page=True)
    assert pages[0][1].get_by_text(re.compile(r"\bBo\b")).count() == 0, "no other name on a candidate's page"
    for context, _ in pages:
        context.close()
    prof.close()
    print("screenshots in", tmp_path)
