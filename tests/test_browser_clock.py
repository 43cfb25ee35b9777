"""Chromium: the sidebar countdown ticks in the browser, with no server rerun, and survives a reload.

Attempts are written straight into the store with a start in the past. The browser's clock is
Playwright's (page.clock): once the page has loaded it is paused and moved by hand, so no check
depends on how long the machine took; the server's figures are bracketed by times read around them.
"""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Error as PlaywrightError

from drills.store import AttemptStore
from tests.browser import wait_for_app

pytestmark = pytest.mark.browser

BOX_S = 45 * 60


def _seconds(text: str) -> int:
    sign = -1 if text.strip().startswith("-") else 1
    minutes, seconds = re.fullmatch(r"-?(\d+):(\d\d)", text.strip()).groups()
    return sign * (int(minutes) * 60 + int(seconds))


def _shown_left(page) -> int:
    return _seconds(page.get_by_test_id("fl-time-left").locator(".fl-value").inner_text())


def _attempt_with_left(db_path, handle: str, left_s: float) -> tuple[str, float]:
    """A fresh attempt on one_tenant that has `left_s` seconds left now; returns its token and start."""
    started = time.time() - (BOX_S - left_s)
    store = AttemptStore(db_path, clock=lambda: started)
    try:
        return store.start_attempt("one_tenant", handle, "", BOX_S).token, started
    finally:
        store.close()


def _frames_sent_while_running(page, ms: int) -> int:
    """How many messages the page sends to the server while its paused clock runs `ms` forward, firing
    every timer due on the way (a rerun request is one message)."""
    sent = page.evaluate("() => window.__flSent || 0")
    page.clock.run_for(ms)
    return page.evaluate("() => window.__flSent || 0") - sent


def _pause(page) -> float:
    """Stop the page's clock a moment ahead of where it stands (pause_at only moves forward, and the page's
    clock runs on while the call travels); from here only run_for and fast_forward move it.

    Returns how far ahead it stopped, in seconds: the countdown may show that much less than the server."""
    for lead_s in (1, 5, 30):
        try:
            page.clock.pause_at(page.evaluate("() => Date.now()") / 1000 + lead_s)
            return lead_s
        except PlaywrightError as exc:
            if "to the past" not in str(exc):
                raise
    raise AssertionError("the page's clock ran more than 30 s ahead of the test")


def _bracket(started: float, before: float, after: float, lead_s: float = 0) -> tuple[int, int]:
    """The seconds left the page can show for a start at `started`, drawn between two times (and a paused
    clock's lead)."""
    return int(BOX_S - (after + lead_s - started)) - 1, int(BOX_S - (before - started)) + 1


# Counts every message the page sends on Streamlit's websocket (installed before the app's code runs);
# while window.__flHold is set, messages are counted but not sent, so the server cannot redraw the clock.
_COUNT_SENDS = """
(() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) {
    window.__flSent = (window.__flSent || 0) + 1;
    if (window.__flHold) return;
    return send.apply(this, args);
  };
})();
"""


def test_countdown_ticks_without_the_server_and_announces_ten_minutes(app_server, page):
    app_server.stop()   # one process per DuckDB file: write the attempts while the server is down
    near_ten, started = _attempt_with_left(app_server.db_path, "ticker", 30 * 60)
    near_end, _ = _attempt_with_left(app_server.db_path, "overrun", 60)
    app_server.start()
    page.add_init_script(_COUNT_SENDS)
    page.clock.install()   # the page's clock runs at real speed until it is paused

    before = time.time()
    page.goto(f"{app_server.url}/drill?attempt={near_ten}")
    wait_for_app(page)
    lead_s = _pause(page)
    first = _shown_left(page)
    low, high = _bracket(started, before, time.time(), lead_s)
    assert low <= first <= high, (low, first, high)
    assert _frames_sent_while_running(page, 60_000) == 0, "an idle candidate makes the server rerun nothing"
    assert first - _shown_left(page) == 60, "the browser ticked once a second for a minute"
    live = page.locator("#fl-clock-announcer")
    assert live.get_attribute("aria-live") == "polite"
    assert "minutes left" not in live.text_content()
    page.clock.fast_forward((first - 60 - 10 * 60 + 1) * 1000)   # as if the candidate sat still until 9:59
    assert "10 minutes left" in live.text_content()
    assert 10 * 60 - 2 <= _shown_left(page) < 10 * 60   # the jump lands within a second of 9:59

    page.clock.resume()
    before = time.time()
    page.reload()   # a fresh page: its clock starts from the server's figures again
    wait_for_app(page)
    after_reload = _shown_left(page)
    low, high = _bracket(started, before, time.time())
    assert low <= after_reload <= high, ("the reloaded clock counts from the stored start", low, after_reload, high)

    page.goto(f"{app_server.url}/drill?attempt={near_end}")
    wait_for_app(page)
    _pause(page)
    page.evaluate("() => { window.__flHold = true; }")   # the browser alone switches to over time
    sent = page.evaluate("() => window.__flSent || 0")
    page.clock.fast_forward(61_000)   # past the end of the box, however long the page took to open
    assert page.evaluate("() => window.__flSent || 0") > sent, "just after the limit the server is asked again"
    over = page.get_by_test_id("fl-over-time")
    assert over.is_visible() and "Over time by" in over.inner_text()
    assert page.get_by_test_id("fl-time-left").is_hidden()
