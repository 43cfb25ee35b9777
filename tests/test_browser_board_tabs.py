"""Chromium: the board's issue-22 tabs (Items, Integrity, Time, Grader gap) and the Attempt tab's replay
links, drawn with their figures at 1300 px and at 390 px without the page scrolling sideways."""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from drills import access
from drills.demo import populate
from drills.loader import load_catalogue
from drills.reports import grader_gap
from drills.reports.integrity import integrity
from drills.reports.source import Filters
from drills.schema import NumericQuestion
from drills.store import AttemptStore
from tests.browser import sign_in_instructor, AppServer, wait_for_app

pytestmark = pytest.mark.browser

PASSPHRASE = "correct horse battery staple"
LOADED = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 100.0 for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
SHOTS = os.environ.get("FAULTLINES_SHOTS")    # a folder to keep the screenshots in, for looking at them
WIDTHS = (1300, 390)


@pytest.fixture(scope="module")
def board_server(tmp_path_factory):
    db_path = tmp_path_factory.mktemp("board") / "browser.duckdb"
    store = AttemptStore(db_path)
    populate(store, LOADED, candidates=24, cohorts=("north", "south"), seed=7, sim_truths=SIM_TRUTHS)
    looks = integrity(store, LOADED, Filters("one_tenant"))
    assert (looks["flags"] > 0).any()                                    # something for the Integrity tab
    assert not grader_gap.gap_by_skill(store, Filters("one_tenant")).empty  # and for the Grader gap tab
    store.close()
    server = AppServer(db_path, env={access.HASH_ENV: access.hash_passphrase(PASSPHRASE, iterations=1_000)})
    server.start()
    yield server
    server.stop()


def _signed_in(chromium, server, width):
    context = chromium.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60000)
    sign_in_instructor(page, server.url, PASSPHRASE)
    return context, page


def _tab(page, name):
    page.get_by_role("tab", name=name).click()
    wait_for_app(page)
    panel = page.get_by_role("tabpanel", name=name)
    panel.wait_for()
    return panel


def _fits(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")


def _shoot(page, width, name):
    if SHOTS:   # Streamlit scrolls inside its own container, so a tall window shows the whole tab
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.set_viewport_size({"width": width, "height": 3200})
        page.wait_for_timeout(800)
        page.screenshot(path=str(Path(SHOTS) / f"{name.lower().replace(' ', '_')}_{width}.png"))
        page.set_viewport_size({"width": width, "height": 1000})


@pytest.mark.parametrize("width", WIDTHS)
def test_each_new_tab_draws_its_figures_and_fits(chromium, board_server, width):
    context, page = _signed_in(chromium, board_server, width)
    try:
        items = _tab(page, "Items")
        items.locator(".js-plotly-plot g.barlayer").first.wait_for(state="attached")
        assert items.get_by_test_id("stDataFrame").count() >= 1
        assert "%" in items.get_by_test_id("stMetric").first.inner_text()     # Cronbach's alpha
        assert _fits(page), "Items scrolls sideways"
        _shoot(page, width, "Items")

        looks = _tab(page, "Integrity")
        looks.get_by_test_id("stDataFrame").first.wait_for()
        assert "of" in looks.get_by_test_id("stMetric").first.inner_text()
        assert looks.get_by_role("button", name="Integrity (CSV)").count() == 1
        assert _fits(page), "Integrity scrolls sideways"
        _shoot(page, width, "Integrity")

        time = _tab(page, "Time")
        time.locator(".js-plotly-plot g.hm").first.wait_for(state="attached")
        assert time.locator(".js-plotly-plot").count() == 2                  # the cohort bars and the heatmap
        assert "median" in time.locator(".js-plotly-plot").nth(1).inner_text()
        assert _fits(page), "Time scrolls sideways"
        _shoot(page, width, "Time")

        gap = _tab(page, "Grader gap")
        gap.locator(".js-plotly-plot g.barlayer").first.wait_for(state="attached")
        assert gap.get_by_test_id("stDataFrame").count() >= 1
        assert _fits(page), "Grader gap scrolls sideways"
        _shoot(page, width, "Grader gap")

        attempt = _tab(page, "Attempt")
        links = attempt.locator("a[href*='pin_']")
        links.first.wait_for()
        sims = [q for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim]
        assert links.count() == len(sims)
        query = parse_qs(urlparse(links.first.get_attribute("href")).query)
        named = re.search(r"seed (\d+)", links.first.inner_text())   # the question's own graded seed, on the link
        assert named and named.group(1) != "0"
        assert any(k.startswith("guess_") for k in query) and any(v == [named.group(1)] for k, v in query.items()
                                                                  if k.endswith("_seed"))
        assert _fits(page), "Attempt scrolls sideways"
        _shoot(page, width, "Attempt")
    finally:
        context.close()
