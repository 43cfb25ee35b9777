"""Chromium: a single break and the essentials path, each started from the catalogue, walked end to end
and finished inside its own clock, with results that list exactly the questions the attempt asked."""
from __future__ import annotations

import re

import pytest

from drills.loader import load_catalogue
from drills.scope import scope_drill, scopes
from tests.browser import without_numbers, finish_attempt, wait_for_app
from tests.test_browser_full_drill import _results_csv, walk_every_part

pytestmark = pytest.mark.browser

WHOLE = load_catalogue().drills["one_tenant"]


def _start_scope(page, url: str, scope: str, handle: str) -> None:
    page.goto(url)
    page.get_by_role("textbox", name="Your handle").wait_for(timeout=120_000)
    wait_for_app(page)
    page.get_by_role("textbox", name="Your handle").fill(handle)
    label = next(s for s in scopes(WHOLE.drill) if s.id == scope).label
    picker = page.locator(".st-key-scope_pick--one_tenant").get_by_role("combobox")
    # The catalogue's filters push the picker below a 900 px window. A click that must scroll first scrolls the
    # page under a list that has just opened, and the list closes on scroll: in view first, as a reader scrolls.
    picker.scroll_into_view_if_needed()
    picker.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(label))).click()
    wait_for_app(page)
    page.locator(".st-key-start_scope--one_tenant button").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    wait_for_app(page)


@pytest.mark.parametrize("scope", ["break4", "essentials"])
def test_a_shorter_practice_runs_end_to_end_inside_its_clock(module_app_server, page, scope):
    page.add_init_script("delete window.showSaveFilePicker;")
    page.set_default_timeout(60_000)
    loaded = scope_drill(WHOLE, scope)
    drill = loaded.drill
    _start_scope(page, module_app_server.url, scope, handle=f"short-{scope}")
    walk_every_part(page, loaded)
    finish_attempt(page)
    page.wait_for_url(re.compile(r".*/results\?.*attempt=.*"))
    page.get_by_role("heading", name=re.compile("^Results")).wait_for()
    wait_for_app(page)
    page.get_by_text(re.compile("inside the box|over by")).first.wait_for()   # the metrics have drawn
    assert page.get_by_text("inside the box").count() >= 1, "finished within the attempt's own clock"
    rows = _results_csv(page)
    assert sorted(without_numbers(r["Question"]) for r in rows) == \
        sorted(without_numbers(loaded.text(q.prompt)) for q in drill.all_questions())   # in the attempt's own draw
    assert all(r["Truth"] and not r["Truth"].startswith("hidden") for r in rows)
