"""Chromium: a bookmark opened first on a freshly started server still gets the app's frame."""
from __future__ import annotations

import pytest

from tests.browser import wait_for_app

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path, heading", [("sim_hot_shard", "Hot shard"), ("drill", "No drill in progress")])
def test_first_request_to_a_page_is_framed(app_server, page, path, heading):
    app_server.restart()  # nothing has run app.py yet in this server process
    page.goto(f"{app_server.url}/{path}")
    wait_for_app(page)
    page.get_by_role("heading", name=heading).first.wait_for()
    page.wait_for_timeout(1500)
    assert page.get_by_text("Page not found").count() == 0
    menu = page.get_by_test_id("stTopNav")
    assert menu.get_by_test_id("stTopNavSection").filter(has_text="Drills").count() == 1, \
        "the app's own menu, not the pages/ folder listing"
    assert page.get_by_text("sim hot shard").count() == 0
