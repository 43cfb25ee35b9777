"""Chromium: user text through ui.safe.escape_markdown shows as the text typed, with no link, icon or formatting.

A handle such as "www.evil.example" passes the handle rule and is shown to the instructor and the live room; a
backslash-escaped dot did not stop Streamlit's markdown from drawing it as a link, nor escaped colons an icon.
The probe (tests/apps/safe_text_probe.py) draws each sample as markdown and as a caption, and one raw, which
shows that the checks below do find a link and an icon when there is one.
"""
from __future__ import annotations

import pytest

from tests.apps.safe_text_probe import SAMPLES
from tests.browser import AppServer, wait_for_app

pytestmark = pytest.mark.browser

PROBE = "tests/apps/safe_text_probe.py"
DRAWN = "a, [role=img], b, strong, em, code, pre, h1, h2, h3, .katex, [data-testid=stMarkdownColoredText]"


@pytest.fixture
def probe(tmp_path):
    server = AppServer(tmp_path / "probe.duckdb", script=PROBE)
    server.start()
    yield server
    server.stop()


def test_user_text_shows_as_typed_with_no_link_icon_or_formatting(probe, page):
    page.goto(probe.url)
    page.locator(".st-key-raw").wait_for(timeout=120_000)
    wait_for_app(page)
    raw = page.locator(".st-key-raw")
    assert raw.locator("a").count() == 1 and raw.locator("[role=img]").count() == 1, \
        "the same text as raw markdown is a link and an icon: the checks see them"
    for n, text in enumerate(SAMPLES):
        box = page.locator(f".st-key-sample-{n}")
        drawn = box.locator(DRAWN)
        assert drawn.count() == 0, f"{text!r} drew {drawn.evaluate_all('els => els.map(e => e.outerHTML)')}"
        shown = box.inner_text().replace("\u2060", "")   # the word joiners are invisible
        assert shown.split("\n\n") == [text, text], "the text as typed, as markdown and as a caption"
