"""Chromium: the board's Across drills tab over a class that took four drills (one by its essentials path),
its bar chart and skills heatmap drawn at 1300 px and 390 px without the page scrolling sideways."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from drills import access
from drills.demo import populate
from drills.loader import load_catalogue
from drills.schema import NumericQuestion
from drills.scope import ScopedDrills
from drills.store import AttemptStore
from tests.browser import AppServer, sign_in_instructor, wait_for_app

pytestmark = pytest.mark.browser

PASSPHRASE = "correct horse battery staple"
DRILLS = ScopedDrills(load_catalogue().drills)
TAKEN = ("one_tenant", "retry_chain", "cache_stampede~essentials", "split_brain", "hot_tenant")
SHOTS = os.environ.get("FAULTLINES_SHOTS")    # a folder to keep the screenshots in, for looking at them


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db_path = tmp_path_factory.mktemp("across") / "browser.duckdb"
    store = AttemptStore(db_path)
    for seed, drill_id in enumerate(TAKEN):
        truths = {q.id: 100.0 for q in DRILLS[drill_id].drill.all_questions()
                  if isinstance(q, NumericQuestion) and q.sim}
        populate(store, DRILLS[drill_id], candidates=12, cohorts=("north", "south"), seed=20 + seed,
                 sim_truths=truths)
    store.close()
    app = AppServer(db_path, env={access.HASH_ENV: access.hash_passphrase(PASSPHRASE, iterations=1_000)})
    app.start()
    yield app
    app.stop()


@pytest.mark.parametrize("width", (1300, 390))
def test_across_drills_draws_both_figures_and_fits(chromium, server, width):
    context = chromium.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60000)
    try:
        sign_in_instructor(page, server.url, PASSPHRASE)
        page.get_by_role("tab", name="Across drills").click()
        wait_for_app(page)
        panel = page.get_by_role("tabpanel", name="Across drills")
        panel.locator(".js-plotly-plot g.hm").first.wait_for(state="attached")
        assert panel.locator(".js-plotly-plot").count() == 2               # the drills' bars, the skills heatmap
        assert panel.locator(".js-plotly-plot g.barlayer").count() == 1
        assert panel.get_by_role("button", name="Drills (CSV)").count() == 1
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            page.set_viewport_size({"width": width, "height": 3200})
            page.wait_for_timeout(800)
            page.screenshot(path=str(Path(SHOTS) / f"board_across_{width}.png"))
    finally:
        context.close()
