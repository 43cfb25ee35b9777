"""Chromium: a candidate walks each whole drill of the catalogue, as a person would, sees every question scored,
then retakes it with new numbers.

Every question is locked in the attempt's own draw (read from the draw the page names), every reveal opened once
and only after its part's lock-ins (the follow-up's after its own), the rubric scored; the first break's worked
answer states the attempt's own figure, the results table lists every question, and a retake draws other numbers.
"""
from __future__ import annotations

import csv
import io
import re

import pytest

from drills.loader import load_catalogue
from drills.schema import NumericQuestion, section_title
from drills.variants import in_variant
from tests.browser import (finish_attempt, lock_in, open_lock_ins, resume_code_on, start_drill, wait_for_app,
                           wait_for_run_done, without_numbers)

pytestmark = pytest.mark.browser

DRILLS = ("one_tenant", "hot_tenant", "cache_stampede", "retry_chain", "split_brain")
# The drills whose first break's page shows its first figure rounded to a whole number on every draw (as the
# library walk checked them). one_tenant and hot_tenant state theirs with decimals (8.95, 57.5): the rounded
# figure is missing on some draws (hot_tenant's, once in CI).
WHOLE_FIGURES = ("cache_stampede", "retry_chain", "split_brain")


def _reveal(page, label: str) -> None:
    button = page.get_by_role("button", name=label, exact=True)
    assert button.is_enabled(), f"{label} is still disabled after every lock-in"
    button.click()
    button.wait_for(state="detached")
    wait_for_run_done(page)


def _walk_part(page, loaded, part) -> None:
    if part.questions and part.reveal:
        assert page.get_by_role("button", name=re.compile("^Reveal:")).first.is_disabled(), \
            f"{part.id}: the worked answer waits for the lock-ins"
    for question in part.questions:
        lock_in(page, loaded, question)
    for section in part.reveal:
        _reveal(page, f"Reveal: {section_title(section)}")
    if part.followup:
        page.get_by_role("heading", name="The follow-up").wait_for()
        assert page.get_by_role("button", name="Reveal: The follow-up answer").is_disabled(), \
            f"{part.id}: the follow-up's answer waits for its own lock-ins"
        for question in part.followup.questions:
            lock_in(page, loaded, question)
        _reveal(page, "Reveal: The follow-up answer")
        page.get_by_role("heading", name="The follow-up answer").wait_for()
    assert open_lock_ins(page) == 0, f"{part.id} still has an open question"
    assert page.get_by_role("button", name=re.compile("^Reveal:")).count() == 0, f"{part.id} has a closed reveal"


def _next(page, title: str) -> None:
    page.get_by_role("button", name="Next →").click()
    page.get_by_role("heading", name=title, exact=True).wait_for()
    wait_for_run_done(page)


def _results_csv(page) -> list[dict[str, str]]:
    """The results table as the candidate can download it (the grid itself is drawn on a canvas)."""
    table = page.get_by_test_id("stDataFrame").first
    table.hover()
    with page.expect_download() as download:
        table.get_by_role("button", name="Download as CSV").click()
    text = download.value.path().read_text(encoding="utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


def _in_own_draw(page, loaded):
    """The drill as this attempt draws it, once its first part has drawn: in the draw its caption names."""
    page.get_by_role("heading", name=loaded.drill.parts[0].title, exact=True).wait_for()
    wait_for_run_done(page)
    found = re.search(r"draw (\d+): this attempt draws its own numbers", page.locator("[data-testid=stMain]").inner_text())
    assert found, "every attempt draws its own numbers"
    return in_variant(loaded, int(found.group(1)))


def _first_break(drill):
    return next((p for p in drill.parts if p.kind == "break"), None)


def _first_break_figures(loaded) -> dict[str, float]:
    return {q.id: loaded.truth(q.id) for q in _first_break(loaded.drill).questions
            if isinstance(q, NumericQuestion) and q.answer is not None}


def walk_every_part(page, loaded):
    """Lock and reveal every part in order, from the first part's page to the 'Score yourself' step, in the draw
    the page names; that draw is returned. The first break's worked answer must state the draw's own figure
    (in WHOLE_FIGURES' drills)."""
    first_break = _first_break(loaded.drill)
    for index, part in enumerate(loaded.drill.parts):
        if index:
            _next(page, part.title)
        else:
            loaded = _in_own_draw(page, loaded)
        _walk_part(page, loaded, part)
        if part is first_break and loaded.drill.id in WHOLE_FIGURES:
            shown = page.locator("[data-testid=stMain]").inner_text()
            worked, figure = next(iter(_first_break_figures(loaded).items()))
            assert f"{figure:,.0f}" in shown, f"{worked}: the worked answer states this attempt's own figure"
    _next(page, "Score yourself")
    return loaded


def test_the_catalogue_offers_every_drill_walked_here():
    assert {d for d in load_catalogue().drills if "~" not in d} == set(DRILLS)


@pytest.mark.parametrize("drill_id", DRILLS)
def test_a_candidate_walks_the_whole_drill(module_app_server, page, drill_id):
    # Without the File System Access API Streamlit falls back to a plain download Playwright can catch.
    page.add_init_script("delete window.showSaveFilePicker;")
    page.set_default_timeout(60_000)
    loaded = load_catalogue().drills[drill_id]
    drill = loaded.drill
    token = start_drill(page, module_app_server.url, drill.title, handle=f"walker-{drill_id}")
    code = resume_code_on(page)

    seen = walk_every_part(page, loaded)
    for skill in drill.rubric:
        page.get_by_role("radiogroup", name=skill.name).get_by_text(drill.level_label("strong"), exact=True).click()
    page.get_by_role("button", name="Save my scores").click()
    wait_for_app(page)
    # The walk locks notes answers without self-rating them, so the page says what finishing costs them.
    if any(q.kind == "notes" for q in drill.all_questions()):
        page.get_by_text(re.compile(r"notes answers? still needs? your self-rating")).first.wait_for()
    finish_attempt(page)
    page.wait_for_url(re.compile(r".*/results\?.*attempt=.*"))
    page.get_by_role("heading", name=re.compile("^Results")).wait_for()
    wait_for_app(page)
    page.get_by_test_id("stDataFrame").first.wait_for()

    rows = _results_csv(page)
    listed = [without_numbers(row["Question"]) for row in rows]   # the attempt drew its own numbers
    expected = [without_numbers(loaded.text(q.prompt)) for q in drill.all_questions()]
    assert sorted(listed) == sorted(expected), "the results table lists every question of the drill once"
    answered = [row for row in rows if row["Your answer"] not in ("", "—", "skipped")]
    assert len(answered) == len(expected), "every question was locked with a real answer"
    page.screenshot(path=f"/tmp/full_drill_results_{drill_id}.png", full_page=True)

    retake = start_drill(page, module_app_server.url, drill.title, handle=f"walker-{drill_id}", code=code)
    assert retake != token
    again = _in_own_draw(page, loaded)
    assert again.values != seen.values, "a retake draws new numbers"
    assert _first_break_figures(again) != _first_break_figures(seen)
