"""Chromium: a sim page's settings, seed and guess survive a reload, and the run replays in the page.

Only a browser shows these: the URL the widgets write, and Plotly frames played client-side.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import wait_for_app

pytestmark = pytest.mark.browser


def _slider(page, label: str):
    return page.locator(f"input[type=range][aria-label='{label}']").first


@pytest.mark.timeout(120)
def test_settings_and_guess_survive_a_reload_and_the_run_replays_in_the_browser(app_server, page):
    sent: list[object] = []            # messages from the page to the server, over Streamlit's websocket
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    page.goto(f"{app_server.url}/sim_concurrency_pool?cp_pool=10&cp_seed=3")
    wait_for_app(page)
    page.get_by_role("heading", name="Concurrency pool").first.wait_for()
    expect(_slider(page, "Pool size K")).to_have_value("10")
    page.get_by_placeholder("your guess").fill("15")
    page.get_by_role("button", name="Lock in my guess").click()
    page.get_by_text("Your locked guess:").first.wait_for()
    page.wait_for_function("() => location.search.includes('guess_concurrency_pool.pool_limit=15')")

    page.reload()
    wait_for_app(page)
    page.get_by_text("Your locked guess:").first.wait_for()         # the guess came back with the settings
    expect(_slider(page, "Pool size K")).to_have_value("10")
    expect(page.locator("input[aria-label='Seed']").first).to_have_value("3")
    page.get_by_role("button", name="▶ Play").click()
    page.get_by_text("20 refusals").first.wait_for()

    # playback runs in the page: rewind, play at double speed, and the scrubber walks to the end
    chart = page.locator(".js-plotly-plot").first
    chart.get_by_text("Back to start").click()
    page.wait_for_function("() => document.querySelector('.slider-container text.slider-label')"
                           "?.textContent.includes('8%')")
    before = len(sent)
    assert before, "the listener sees the page talk to the server (the lock-in and Play did)"
    chart.get_by_text("2×").click()
    page.wait_for_function("() => document.querySelector('.slider-container text.slider-label')"
                           "?.textContent.includes('100%')", timeout=15000)
    assert len(sent) == before, "playing the run sent messages to the server"
    assert re.search(r"cp_pool=10", page.url)
