"""Chromium: a review session appears after a miss. A short attempt is finished with one numeric answer far
off; the review page lists that question, it falls due a minute after it was answered (FSRS's first learning
step), the catalogue links to it, and it is answered in fresh numbers and comes back later.

The server runs on PostgreSQL so that the test can move the schedule instead of waiting for it: the minute is
taken out of the review's stored times (its card too), as if it had passed, and no step waits on the clock."""
from __future__ import annotations

import re
import time
import warnings
from datetime import timedelta

import psycopg
import pytest
from fsrs import Card

from drills.loader import load_catalogue
from drills.scope import scope_drill
from drills.variants import in_variant
from tests.browser import AppServer, open_from_menu, wait_for_app
from tests.test_browser_scope import _start_scope

pytestmark = pytest.mark.browser

WHOLE = load_catalogue().drills["one_tenant"]
SHORT = scope_drill(WHOLE, "essentials")
HANDLE = "review-ada"
DUE_AFTER_S = 60   # FSRS's first learning step: the miss is due a minute after its lock-in


@pytest.fixture
def pg_app_server(tmp_path, pg_url):
    server = AppServer(tmp_path / "review.duckdb", env={"FAULTLINES_DB": pg_url})   # the path names its log only
    server.start()
    yield server
    server.stop()


def _let_the_schedule_pass(pg_url: str) -> None:
    """Every scheduled review falls due a second ago: its due time, last review and card are moved back by the
    time left, as if that time had passed (the scheduler reads the card on the next review)."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT id, card, due_at FROM review_log").fetchall()
        assert rows, "the finished attempt scheduled its miss"
        for row_id, card_json, due_at in rows:
            shift = max(0.0, due_at - time.time() + 1)
            card = Card.from_json(card_json)
            card.due -= timedelta(seconds=shift)
            if card.last_review is not None:
                card.last_review -= timedelta(seconds=shift)
            conn.execute("UPDATE review_log SET due_at = due_at - %s, reviewed_at = reviewed_at - %s, card = %s "
                         "WHERE id = %s", [shift, shift, card.to_json(), row_id])


def _body(page) -> str:
    return page.locator("[data-testid=stMain]").inner_text()


def _open_review_page(page) -> None:
    """Through the sidebar, so the session (and its sign-in) carries over."""
    open_from_menu(page, "Spaced review")
    page.get_by_role("heading", name="Spaced review").wait_for()
    wait_for_app(page)


def test_a_review_session_appears_after_a_miss(pg_app_server, pg_url, page):
    app_server = pg_app_server
    page.set_default_timeout(60_000)
    _start_scope(page, app_server.url, "essentials", HANDLE)
    page.get_by_text("Your personal resume code is").wait_for()
    code = re.search(r"resume code is ([A-Z0-9]{4}-[A-Z0-9]{4})", _body(page)).group(1)
    token = re.search(r"attempt=([^&]+)", page.url).group(1)

    question = SHORT.drill.part("board").questions[0]
    page.goto(f"{app_server.url}/drill?attempt={token}&part=board")
    page.get_by_role("heading", name=SHORT.drill.part("board").title, exact=True).wait_for()
    wait_for_app(page)
    box = page.get_by_test_id("stForm").first.get_by_label(f"Best guess ({question.unit})")
    box.fill(f"{WHOLE.values[question.id] * 10:g}")   # far outside the tolerance in every variant
    before_lock = time.time()   # the server stamps the lock-in after this moment (same machine clock)
    box.press("Enter")
    page.get_by_text("Your guess:").first.wait_for()

    page.goto(f"{app_server.url}/drill?attempt={token}&part=score")
    page.get_by_role("heading", name="Score yourself").wait_for()
    wait_for_app(page)
    page.get_by_text("Finish anyway").click()
    wait_for_app(page)
    page.get_by_role("button", name="Finish and see results").click()
    page.wait_for_url(re.compile(r".*/results\?.*attempt=.*"))
    wait_for_app(page)

    _open_review_page(page)
    page.get_by_role("textbox", name="Your handle").fill(HANDLE)
    page.get_by_label("Resume code").fill(code)
    page.get_by_role("button", name="Open my reviews").click()
    page.get_by_role("heading", name="Your review schedule").wait_for()
    wait_for_app(page)
    # the schedule's first line is drawn after its heading: read the page once it is there
    page.get_by_text(re.compile(r"Nothing due right now|Due now")).first.wait_for()
    body = _body(page)
    if time.time() < before_lock + DUE_AFTER_S:   # drawn before the miss can have fallen due
        assert "Due now" not in body and "Nothing due right now" in body, body
        assert re.search(r"comes back in (1 minute|\d{1,2} seconds?) \(", body), "never 'now' when not offered"
    else:   # said, not skipped in silence; tests/test_review.py checks this wording on an injected clock
        warnings.warn(pytest.PytestWarning("the walk took over a minute: the not-yet-due wording was not seen "
                                           "in the browser"))
    page.screenshot(path="/tmp/review_scheduled.png", full_page=True)

    _let_the_schedule_pass(pg_url)
    _open_review_page(page)
    assert "Due now: 1 question" in _body(page), "the missed question fell due a minute after its lock-in"

    # The catalogue points at the review while it is due.
    open_from_menu(page, "Catalogue")
    page.get_by_role("textbox", name="Your handle").fill(HANDLE)
    page.get_by_role("textbox", name="Your handle").press("Tab")
    wait_for_app(page)
    page.get_by_role("link", name=re.compile(r"^Due for review: 1 question")).click()
    page.get_by_role("heading", name="Due now: 1 question").wait_for()
    page.get_by_role("button", name="Check my answer").wait_for()   # the question itself has drawn
    wait_for_app(page)

    body = _body(page)
    assert question.prompt in body or in_variant(WHOLE, 1).text(question.prompt) in body
    caption = re.search(re.escape(f"{WHOLE.drill.title} · {SHORT.drill.part('board').title} · ")
                        + r"(?:(as written|draw (\d+)) of its numbers|its numbers never vary[^·]*) · missed", body)
    assert caption, body
    variant = int(caption.group(2) or 0)
    if caption.group(1):   # a question whose numbers vary is asked in a fresh draw (drills.review.fresh_variant)
        assert variant != 0, "a review asks in a draw of its own, not the written numbers"
    page.screenshot(path="/tmp/review_due.png", full_page=True)
    truth = in_variant(WHOLE, variant).values[question.id]
    box = page.get_by_label(f"Your answer ({question.unit})")
    box.fill(f"{truth:.4g}")
    page.get_by_role("button", name="Check my answer").click()
    page.get_by_text("rated good").wait_for()
    wait_for_app(page)
    body = _body(page)
    assert "Comes back in 10 minutes" in body and "Nothing due right now" in body
    page.screenshot(path="/tmp/review_answered.png", full_page=True)
