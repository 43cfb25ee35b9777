"""Chromium, keyboard only: the skip link lands on the first open question, and a whole single-break
practice (start, every lock-in, every reveal, the rubric, Finish) is done without a mouse.

Every step presses Tab until the element it needs has focus (bounded), then types or presses Enter/Space.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from drills.loader import load_catalogue
from drills.scope import scope_drill
from tests.browser import ANSWERED_MS, wait_for_app

pytestmark = pytest.mark.browser

TAB_BUDGET = 5          # Tabs from a part's load to its first answer field, skip link included
WALK_LIMIT = 120        # Tabs allowed to reach any one control while walking

# The focused element, described for the predicates below.
_ACTIVE = """() => {
  // What a screen reader says: the text without aria-hidden parts (a Material icon's ligature, "lock").
  const spoken = (node) => {
    const copy = node.cloneNode(true);
    copy.querySelectorAll('[aria-hidden="true"]').forEach(hidden => hidden.remove());
    return (copy.textContent || '').replace(/\\s+/g, ' ').trim();
  };
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const form = el.closest('[data-testid="stForm"]');
  const open = !!form && [...form.querySelectorAll('button')].some(b => b.innerText.includes('Lock in'));
  return {tag: el.tagName.toLowerCase(), type: el.type || '', id: el.id || '',
          label: el.getAttribute('aria-label') || '', text: spoken(el).slice(0, 80),
          inOpenForm: open, main: !!el.closest('[data-testid="stMain"]'), disabled: !!el.disabled};
}"""


def settled(page) -> None:
    """The run has ended and every widget is drawn (a component's code loads on first use: a skeleton till then)."""
    wait_for_app(page)
    page.wait_for_function("() => !document.querySelector('[data-testid=stMain] [data-testid=stSkeleton]')")


def active(page) -> dict | None:
    return page.evaluate(_ACTIVE)


def tab_to(page, wanted, limit: int = WALK_LIMIT, what: str = "") -> int:
    """Press Tab until `wanted(active)` holds; the number of Tabs pressed."""
    stops = []
    for count in range(1, limit + 1):
        page.keyboard.press("Tab")
        now = active(page)
        if now and wanted(now):
            return count
        stops.append(now and f"{now['tag']}#{now['id']} {now['label'] or now['text'][:30]!r}")
    raise AssertionError(f"{limit} Tabs never reached {what or wanted}; focus went to {stops[:12]}")


def is_field(el) -> bool:
    """An answer's first field in an open form: an option, a notes box, or a number's best guess."""
    return el["inOpenForm"] and (el["type"] == "radio" or el["tag"] == "textarea" or (
        el["tag"] == "input" and el["label"].startswith("Best guess")))


def button(text: str):
    return lambda el: el["tag"] == "button" and el["text"].startswith(text) and not el["disabled"]


def open_forms(page) -> int:
    return page.get_by_role("button", name="Lock in", exact=True).count()


def pick_focused_option(page) -> None:
    """Space picks the focused option; as a keyboard user would, look that it took. A Space that picks
    nothing fails the walk (the wait bounds a hang, it times nothing)."""
    page.keyboard.press("Space")
    try:
        page.wait_for_function("() => document.activeElement && document.activeElement.checked === true",
                               timeout=ANSWERED_MS)
    except PlaywrightTimeout:
        raise AssertionError(f"one Space on the focused option picked nothing; focus on {active(page)}") from None


def lock_focused_question(page, what: str) -> None:
    """Answer the question whose field has focus, by keyboard, and wait for its form to go.

    What to do is read from the focused field (an option, a notes box, a best guess): on a loaded machine a
    rerun can still be drawing as Tab is pressed, and focus may reach the part's open questions in another
    order than the drill lists them; each is locked all the same."""
    before, field = open_forms(page), active(page)
    if field["tag"] == "input" and field["type"] != "radio":
        page.keyboard.type("100")
        page.keyboard.press("Enter")            # the form submits on Enter
    else:
        if field["type"] == "radio":
            pick_focused_option(page)
        else:
            page.keyboard.type("Per-tenant limits first, then recover and prevent.")
        tab_to(page, button("Lock in"), limit=12, what="this question's Lock in")
        page.keyboard.press("Enter")
    try:
        page.wait_for_function(
            "n => [...document.querySelectorAll('button')].filter(b => b.innerText.includes('Lock in')).length < n",
            arg=before, timeout=ANSWERED_MS)
    except PlaywrightTimeout:
        alerts = page.get_by_test_id("stAlert").all_inner_texts()
        raise AssertionError(f"{what}: its form stayed open; focus was on {field}, now on {active(page)}, "
                             f"{open_forms(page)} of {before} forms open, alerts {alerts}") from None
    settled(page)


def skip_to_question(page) -> int:
    """From a freshly loaded part: Tab to the skip link (where a change of part puts focus), follow it;
    the Tabs it took."""
    try:   # after a change of part the page moves focus there itself, within a poll or two
        page.wait_for_function("() => document.activeElement && document.activeElement.id === 'fl-skip-link'",
                               timeout=2_000)
    except PlaywrightTimeout:
        pass
    now = active(page)
    on_link = now is not None and now["id"] == "fl-skip-link"
    tabs = 0 if on_link else tab_to(page, lambda el: el["id"] == "fl-skip-link", limit=TAB_BUDGET,
                                    what="the skip link")
    page.keyboard.press("Enter")
    return tabs


def lock_all(page, questions, *, skip: bool = True) -> None:
    """Lock in each question in turn, reaching the first through the skip link (`skip`) and the rest by Tab."""
    for number, question in enumerate(questions):
        if number == 0 and skip:
            skip_to_question(page)
        else:
            tab_to(page, is_field, what=f"{question.id}'s field")
        assert active(page)["inOpenForm"], f"{question.id}: focus is not in an open question"
        lock_focused_question(page, f"question {number + 1} of {len(questions)}")


def reveal(page, part_id: str) -> None:
    tab_to(page, button("Reveal:"), what=f"a reveal on {part_id}")
    page.keyboard.press("Enter")
    settled(page)


def _moved_on(part_id: str):
    return lambda url: (found := re.search(r"[?&]part=([^&]+)", url)) is not None and found.group(1) != part_id


def go_next(page, part_id: str) -> None:
    """Tab to Next and press Enter once; as a keyboard user would, look that the page moved to the next part.
    An Enter the page does not answer fails the walk."""
    now = active(page)
    if not (now and button("Next →")(now)):
        tab_to(page, button("Next →"), what=f"Next after {part_id}")
    page.keyboard.press("Enter")
    try:
        page.wait_for_url(_moved_on(part_id), timeout=ANSWERED_MS)
    except PlaywrightTimeout:
        raise AssertionError(f"one Enter on Next did not leave {part_id}; focus on {active(page)}, "
                             f"url {page.url}") from None
    settled(page)


def test_skip_link_lands_on_the_first_open_question_within_five_tabs(app_server, page):
    from drills.store import AttemptStore

    app_server.stop()
    store = AttemptStore(app_server.db_path)
    token = store.start_attempt("one_tenant", "kb-skip", "", 45 * 60).token
    store.close()
    app_server.start()
    page.goto(f"{app_server.url}/drill?attempt={token}&part=break1")
    settled(page)
    page.get_by_role("button", name="Lock in", exact=True).first.wait_for()
    tabs = skip_to_question(page)
    now = active(page)
    assert now and now["inOpenForm"], f"the skip link left focus on {now}"
    first_form = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name="Lock in", exact=True)).first
    assert first_form.evaluate("f => f.contains(document.activeElement)"), "not the first open question"
    assert tabs <= TAB_BUDGET


def test_a_single_break_practice_by_keyboard_alone(app_server, page):
    loaded = load_catalogue().drills["one_tenant"]
    practice = scope_drill(loaded, "break1").drill
    page.goto(app_server.url)
    page.get_by_role("textbox", name="Your handle").wait_for(timeout=120_000)
    settled(page)
    tab_to(page, lambda el: el["label"] == "Your handle" or el["tag"] == "input" and el["type"] == "text",
           what="the handle box")
    page.keyboard.type("kb-ada")
    page.keyboard.press("Enter")
    settled(page)
    # The first drill's picker of a shorter practice (the catalogue's skill filter is a combobox too, above it).
    tab_to(page, lambda el: el["tag"] == "input" and el["main"] and el["label"] == "Practise",
           what="the practice picker")
    page.keyboard.type("Break 1")
    page.keyboard.press("Enter")
    settled(page)
    tab_to(page, button("Start this practice"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*attempt=.*"))
    settled(page)

    for part in practice.parts:
        page.get_by_role("heading", name=part.title).first.wait_for()
        settled(page)
        lock_all(page, part.questions)
        for _ in part.reveal:
            reveal(page, part.id)
        if part.followup:
            lock_all(page, part.followup.questions, skip=False)   # further down, where focus already is
            reveal(page, part.id)
        go_next(page, part.id)

    page.get_by_role("heading", name="Score yourself").wait_for()
    for _ in practice.rubric:
        tab_to(page, lambda el: el["type"] == "radio" and el["main"] and not el["disabled"], what="a rubric level")
        pick_focused_option(page)
    tab_to(page, button("Save my scores"))
    page.keyboard.press("Enter")
    page.get_by_text("Scores saved.").wait_for()
    settled(page)
    if page.get_by_text("Finish anyway", exact=True).count():   # a notes answer is still to self-rate
        tab_to(page, lambda el: el["type"] == "checkbox", what="Finish anyway")
        pick_focused_option(page)
        settled(page)
    tab_to(page, button("Finish and see results"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/results\?attempt=.*"))
    page.get_by_role("heading", name=re.compile("Results")).first.wait_for()
    assert page.get_by_test_id("stException").count() == 0
