"""Chromium: each drill of the library played through one break, then retaken with new numbers.

The walk locks every question of the drill's first break with the attempt's own truths (read from the draw
the page names), opens each worked-answer section once, locks the follow-up and opens its answer, finds the
drawn figures in the text, and starts a retake whose numbers differ.
"""
from __future__ import annotations

import re

import pytest

from drills.loader import load_catalogue
from drills.schema import ChoiceQuestion, NumericQuestion, section_title
from drills.variants import in_variant
from tests.browser import resume_code_on, start_drill, wait_for_run_done

pytestmark = pytest.mark.browser

LIBRARY = ("cache_stampede", "retry_chain", "split_brain")
LOCK = "Lock in"


def _open_part(page, url: str, token: str, loaded, part_id: str) -> str:
    page.goto(f"{url}/drill?attempt={token}&part={part_id}")
    page.get_by_role("heading", name=loaded.drill.part(part_id).title).wait_for()
    wait_for_run_done(page)
    return page.locator("[data-testid=stMain]").inner_text()


def _draw(text: str) -> int:
    found = re.search(r"draw (\d+): this attempt draws its own numbers", text)
    assert found, "every attempt draws its own numbers"
    return int(found.group(1))


def _lock(page, question, seen) -> None:
    before = page.get_by_role("button", name=LOCK, exact=True).count()
    if isinstance(question, NumericQuestion):
        truth = seen.truth(question.id) if question.answer is not None else 1.0
        box = page.get_by_label(re.compile(r"^Best guess")).first
        box.fill(f"{truth:.2f}")
        box.press("Enter")
    elif isinstance(question, ChoiceQuestion):
        right = next(o.text for o in question.options if o.id == question.answer)
        page.get_by_text(seen.text(right), exact=True).click()
        page.get_by_role("button", name=LOCK, exact=True).first.click()
    else:
        page.get_by_role("textbox", name="Your notes").fill("one query per key, and serve the old value meanwhile")
        page.get_by_role("button", name=LOCK, exact=True).first.click()
    page.wait_for_function(
        "([n, label]) => [...document.querySelectorAll('button')].filter(b => b.innerText.includes(label)).length < n",
        arg=[before, "Lock in"])
    wait_for_run_done(page)


@pytest.mark.parametrize("drill_id", LIBRARY)
def test_one_break_played_then_a_retake_draws_new_numbers(module_app_server, page, drill_id):
    loaded = load_catalogue().drills[drill_id]
    first_break = next(p for p in loaded.drill.parts if p.kind == "break")
    token = start_drill(page, module_app_server.url, loaded.drill.title, handle=f"walker-{drill_id}")
    code = resume_code_on(page)
    seen = in_variant(loaded, _draw(_open_part(page, module_app_server.url, token, loaded, "prompt")))
    _open_part(page, module_app_server.url, token, loaded, first_break.id)
    reveal = page.get_by_role("button", name=re.compile("^Reveal:"))
    assert reveal.first.is_disabled(), "the worked answer waits for the lock-ins"
    for question in first_break.questions:
        _lock(page, question, seen)
    assert page.get_by_role("button", name=LOCK, exact=True).count() == 0
    for section in first_break.reveal:
        title = section_title(section)
        button = page.get_by_role("button", name=f"Reveal: {title}", exact=True)
        assert button.is_enabled()
        button.click()
        page.get_by_role("heading", name=title, exact=True).wait_for()
        wait_for_run_done(page)
    page.get_by_role("heading", name="The follow-up", exact=True).wait_for()
    followup = page.get_by_role("button", name="Reveal: The follow-up answer")
    assert followup.is_disabled(), "the follow-up's answer waits for its own lock-ins"
    for question in first_break.followup.questions:
        _lock(page, question, seen)
    followup.click()
    page.get_by_role("heading", name="The follow-up answer", exact=True).wait_for()
    wait_for_run_done(page)
    assert page.get_by_role("button", name=re.compile("^Reveal:")).count() == 0, "every section opened once"
    shown = page.locator("[data-testid=stMain]").inner_text()
    worked = next(q for q in first_break.questions if isinstance(q, NumericQuestion) and q.answer is not None)
    assert f"{seen.truth(worked.id):,.0f}" in shown, "the worked answer states this attempt's own figure"

    retake = start_drill(page, module_app_server.url, loaded.drill.title, handle=f"walker-{drill_id}", code=code)
    assert retake != token
    again = in_variant(loaded, _draw(_open_part(page, module_app_server.url, retake, loaded, "prompt")))
    assert again.values != seen.values
    assert {q.id: again.truth(q.id) for q in first_break.questions
            if isinstance(q, NumericQuestion) and q.answer is not None} != \
           {q.id: seen.truth(q.id) for q in first_break.questions
            if isinstance(q, NumericQuestion) and q.answer is not None}
