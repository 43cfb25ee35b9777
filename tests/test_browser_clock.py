"""Chromium: the sidebar countdown ticks in the browser, with no server rerun, and survives a reload.

Attempts are written straight into the store with a start in the past, so the 10-minute
announcement and the switch to over time happen within a few seconds of opening the page.
"""
from __future__ import annotations

import re
import time

import pytest

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


def _frames_sent_while(page, seconds: float) -> int:
    """How many messages the page sends to the server in `seconds` (a rerun request is one)."""
    sent = page.evaluate("() => window.__flSent || 0")
    page.wait_for_timeout(seconds * 1000)
    return page.evaluate("() => window.__flSent || 0") - sent


# Counts every message the page sends on Streamlit's websocket (installed before the app's code runs).
_COUNT_SENDS = """
(() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (...args) { window.__flSent = (window.__flSent || 0) + 1; return send.apply(this, args); };
})();
"""


def test_countdown_ticks_without_the_server_and_announces_ten_minutes(app_server, page):
    app_server.stop()   # one process per DuckDB file: write the attempts while the server is down
    near_ten, started = _attempt_with_left(app_server.db_path, "ticker", 10 * 60 + 40)
    near_end, _ = _attempt_with_left(app_server.db_path, "overrun", 3)
    app_server.start()
    page.add_init_script(_COUNT_SENDS)
    page.clock.install()   # the page's clock runs at real speed until fast_forward skips ahead

    page.goto(f"{app_server.url}/drill?attempt={near_ten}")
    wait_for_app(page)
    first = _shown_left(page)
    assert first > 10 * 60, f"the page took too long to open to see the 10-minute mark pass ({first} s left)"
    assert _frames_sent_while(page, 3.5) == 0, "an idle candidate makes the server rerun nothing"
    second = _shown_left(page)
    assert 2 <= first - second <= 5, (first, second)
    live = page.locator("#fl-clock-announcer")
    assert live.get_attribute("aria-live") == "polite"
    assert "minutes left" not in live.inner_text()
    page.clock.fast_forward((first - 10 * 60 + 1) * 1000)   # as if the candidate sat still until 9:59
    page.wait_for_function("() => document.querySelector('#fl-clock-announcer').textContent.includes('10 minutes left')",
                           timeout=5_000)
    assert _shown_left(page) < 10 * 60

    page.reload()   # a fresh page: its clock starts from the server's figures again
    wait_for_app(page)
    after_reload = _shown_left(page)
    expected = BOX_S - (time.time() - started)
    assert abs(after_reload - expected) <= 3, "the reloaded clock counts from the stored start"

    page.goto(f"{app_server.url}/drill?attempt={near_end}")
    wait_for_app(page)
    over = page.get_by_test_id("fl-over-time")
    over.wait_for(state="visible", timeout=10_000)
    assert "Over time by" in over.inner_text()
    assert page.get_by_test_id("fl-time-left").is_hidden()

