"""Chromium: every route to a score a candidate should not have, tried as a person would (issue 10).

The results page before any lock-in, a second tab racing the first, a simulation opened with its
questions open, the options' order, and a stale tab writing after the attempt is finished.
"""
from __future__ import annotations

import csv
import io
import re

import pytest

from drills.disclosure import option_order
from drills.loader import load_catalogue
from drills.schema import ChoiceQuestion
from drills.store import AttemptStore
from tests.browser import open_from_menu, start_drill, wait_for_app

pytestmark = pytest.mark.browser

LOADED = load_catalogue().drills["one_tenant"]
DRILL = LOADED.drill
LOCK = "Lock in"


def _csv(page) -> list[dict[str, str]]:
    table = page.get_by_test_id("stDataFrame").first
    table.wait_for()
    table.hover()
    with page.expect_download() as download:
        table.get_by_role("button", name="Download as CSV").click()
    return list(csv.DictReader(io.StringIO(download.value.path().read_text(encoding="utf-8-sig"))))


def _open(page, url: str) -> None:
    page.goto(url)
    page.get_by_test_id("stApp").wait_for(timeout=120_000)
    wait_for_app(page)


def _key(name: str) -> str:
    """The CSS class Streamlit gives an element with widget key `name` ('::' becomes '--')."""
    return ".st-key-" + name.replace("::", "--")


def _lock_number(page, question_id: str, value: str) -> None:
    page.locator(f"{_key(f'lock::{question_id}::value')} input").fill(value)
    page.locator(f"{_key(f'lock::{question_id}::submit')} button").click()
    wait_for_app(page)


def _shown_options(page, question: ChoiceQuestion) -> list[str]:
    options = page.locator(f"{_key(f'lock::{question.id}::choice')} [data-testid=stRadioOption]")
    options.first.wait_for()
    return [text.strip() for text in options.all_inner_texts()]


def test_no_route_to_an_unearned_score(app_server, chromium, page):
    page.add_init_script("delete window.showSaveFilePicker;")
    page.set_default_timeout(60_000)
    token = start_drill(page, app_server.url, DRILL.title, handle="peeker")

    # 1. The results page of an open attempt: no truth for anything not locked and revealed.
    _open(page, f"{app_server.url}/results?attempt={token}")
    rows = _csv(page)
    assert len(rows) == len(DRILL.all_questions())
    leaked = [r for r in rows if r["Truth"] not in ("self-assessed",) and not r["Truth"].startswith("hidden")]
    assert not leaked, f"truths shown before any lock-in: {leaked[:3]}"

    # 2. The options' order is the attempt's own, not the file's.
    shown_orders = {}
    for part_id in ("break1", "break2"):
        _open(page, f"{app_server.url}/drill?attempt={token}&part={part_id}")
        for q in DRILL.part(part_id).questions:
            if isinstance(q, ChoiceQuestion):
                shown_orders[q.id] = _shown_options(page, q)
    assert len(shown_orders) >= 2

    # 3. A simulation page opened from the sidebar while its questions are open.
    open_from_menu(page, "Hot shard")
    page.get_by_role("heading", name=re.compile("Hot shard", re.I)).first.wait_for()
    wait_for_app(page)

    # 4. Two tabs of one attempt lock the same question: the second is told, with the stored value.
    question, stale = DRILL.part("board").questions[:2]
    other = page.context.new_page()
    for tab in (page, other):
        _open(tab, f"{app_server.url}/drill?attempt={token}&part=board")
        tab.locator(_key(f"lock::{question.id}::value")).wait_for()
    _lock_number(page, question.id, "120")
    _lock_number(other, question.id, "999")
    other.get_by_text("Another tab locked this question first").wait_for()
    assert "120" in other.get_by_test_id("stAlert").filter(has_text="Another tab").first.inner_text()

    # 5. Finish in one tab; the stale tab's form is refused and the drill reads as a review.
    _open(page, f"{app_server.url}/drill?attempt={token}&part=score")
    page.get_by_text("Finish anyway").click()
    wait_for_app(page)
    page.get_by_role("button", name="Finish and see results").click()
    page.wait_for_url(re.compile(r".*/results\?.*attempt=.*"))
    wait_for_app(page)
    _lock_number(other, stale.id, "5")
    other.get_by_text("This attempt has been finished").wait_for()
    _open(page, f"{app_server.url}/drill?attempt={token}&part=board")
    page.get_by_text("This attempt is finished").wait_for()
    assert page.get_by_role("button", name=LOCK, exact=True).count() == 0
    other.close()

    app_server.stop()   # the store is one process's file: read it once the server is gone
    store = AttemptStore(app_server.db_path)
    attempt = store.attempt_by_token(token)
    answers = store.answers(attempt.id)
    assert answers[question.id].value == 120 and stale.id not in answers
    opened = [e for e in store.events(attempt.id) if e.kind == "sim_opened"]
    assert opened and opened[0].detail["page"] == "sim_hot_shard"
    assert "f1_sim_hot_4" in opened[0].detail["questions"]
    for qid, shown in shown_orders.items():
        q = DRILL.question(qid)
        assert shown == [LOADED.text(o.text) for o in option_order(q, attempt.seed)], qid
    store.close()
