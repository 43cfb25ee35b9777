"""Chromium: a candidate who retakes a drill sees different numbers the second time (seeded variants)."""
from __future__ import annotations

import re

import pytest

from drills.loader import load_catalogue
from drills.variants import in_variant
from tests.browser import resume_code_on, start_drill, wait_for_app

pytestmark = pytest.mark.browser

HOT = load_catalogue().drills["hot_tenant"]


def _numbers_shown(page, url: str, token: str) -> str:
    """The scenario and Break 1's opening, where the drill states the givens a variant draws."""
    text = []
    for part in ("prompt", "spread"):
        page.goto(f"{url}/drill?attempt={token}&part={part}")
        page.get_by_role("heading", name=HOT.drill.part(part).title).wait_for()
        wait_for_app(page)
        text.append(page.locator("[data-testid=stMain]").inner_text())
    return "\n".join(text)


def test_two_attempts_of_one_drill_show_different_givens(app_server, page):
    page.set_default_timeout(60_000)
    first = start_drill(page, app_server.url, HOT.drill.title, handle="retaker")
    code = resume_code_on(page)   # a handle in use starts again only with its code
    second = start_drill(page, app_server.url, HOT.drill.title, handle="retaker", code=code)
    assert first != second
    shown = [_numbers_shown(page, app_server.url, t) for t in (first, second)]
    # The server holds the DuckDB file, so the variant is read where the candidate reads it: the caption.
    drawn = [re.search(r"draw (\d+): this attempt draws its own numbers", text) for text in shown]
    assert all(drawn), "every attempt draws its own numbers, the first one too"
    variants = [int(found.group(1)) for found in drawn]
    assert variants[0] != variants[1]
    for text, variant in zip(shown, variants):
        values = in_variant(HOT, variant).values
        assert f"One tenant now sends {values['hot_rate']:.0f} write units/s" in text
        assert f"newest {values['page_size']:.0f} events" in text
    assert shown[0] != shown[1], "the retake's text states its own numbers"
