"""Chromium: lock Break 1's answers, reload and restart, find them read-only and the clock unchanged."""
from __future__ import annotations

import re

import pytest

from drills.loader import load_catalogue
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.store import AttemptStore
from tests.browser import start_drill, wait_for_app

pytestmark = pytest.mark.browser


def _time_left_s(page) -> int:
    text = page.get_by_test_id("stSidebar").get_by_test_id("fl-time-left").locator(".fl-value").inner_text()
    minutes, seconds = re.fullmatch(r"(\d+):(\d\d)", text.strip()).groups()
    return int(minutes) * 60 + int(seconds)


def _lock_buttons(page) -> int:
    return page.get_by_role("button", name="Lock in", exact=True).count()


def _lock_break1(page, loaded) -> None:
    part = loaded.drill.part("break1")
    for question in part.questions:
        before = _lock_buttons(page)
        if isinstance(question, NumericQuestion):
            box = page.get_by_label(re.compile(r"^Best guess")).first
            box.fill(f"{loaded.values[question.id]:.2f}")
            box.press("Enter")
        elif isinstance(question, ChoiceQuestion):
            right = next(o.text for o in question.options if o.id == question.answer)
            page.get_by_text(right, exact=True).click()
            page.get_by_role("button", name="Lock in", exact=True).first.click()
        else:
            page.get_by_label("Your notes").fill("<b>token bucket</b>, running cap, idempotency key")
            page.get_by_role("button", name="Lock in", exact=True).first.click()
        page.wait_for_function(
            "n => [...document.querySelectorAll('button')].filter(b => b.innerText.includes('Lock in')).length < n",
            arg=before)
        wait_for_app(page)


def test_break1_locks_survive_reload_and_restart(app_server, page):
    loaded = load_catalogue().drills["one_tenant"]
    page.clock.install()   # the page's time runs at real speed until the test moves it on
    token = start_drill(page, app_server.url, loaded.drill.title)
    page.goto(f"{app_server.url}/drill?attempt={token}&part=break1")
    wait_for_app(page)
    assert page.get_by_role("button", name=re.compile("^Reveal:")).first.is_disabled()
    _lock_break1(page, loaded)
    assert page.get_by_role("button", name="Lock in", exact=True).count() == 0
    assert page.get_by_role("button", name=re.compile("^Reveal:")).first.is_enabled()

    drawn = []   # (start, time box) the clock was drawn with, after each
    for action in ("reload", "restart"):
        if action == "reload":
            page.reload()
        else:
            app_server.restart()
            page.goto(f"{app_server.url}/drill?attempt={token}&part=break1")
        wait_for_app(page)
        page.get_by_text("Your guess:").first.wait_for()
        assert page.get_by_role("button", name="Lock in", exact=True).count() == 0, f"answers editable after {action}"
        assert page.get_by_label(re.compile(r"^Best guess")).count() == 0
        assert page.get_by_text("<b>token bucket</b>, running cap, idempotency key").count() == 1
        first = _time_left_s(page)
        page.clock.run_for(2_500)   # the page's second hand moved on by hand, rather than waited for
        second = _time_left_s(page)
        assert second < first, "the clock keeps counting"
        clock = page.get_by_test_id("stSidebar").locator("[data-fl-clock]").first
        drawn.append((float(clock.get_attribute("data-started")), float(clock.get_attribute("data-limit"))))
    app_server.stop()  # release the file so the store can be read here
    attempt = AttemptStore(app_server.db_path).attempt_by_token(token)
    # The clock ticks from the numbers the server draws on it (tests/test_browser_clock.py times the ticking).
    assert drawn == [(pytest.approx(attempt.started_at, abs=0.001), attempt.time_box_s)] * 2, \
        "the clock counts from the original start, after the reload and after the restart"
