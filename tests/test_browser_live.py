"""Chromium on the supervised 3-process stack: an instructor runs one whole break live for five candidates.

One stack (PostgreSQL, three app processes, nginx sticky per browser) and one browser for the whole test; each
page is its own context, so the room is spread over the processes and every move reaches the others by
LISTEN/NOTIFY. Nobody reloads: each page's fragment notices the moves (and the last lock-in's auto-close).
Every wait is for something the page shows, never a sleep or a clock.
"""
from __future__ import annotations

import re
import shutil
import time

import pytest

from deploy.stack import NGINX, Stack
from drills import access
from drills.backends import open_store

pytestmark = pytest.mark.browser

PASSPHRASE = "room-passphrase-for-tests"
HANDLES = ("ana", "bo", "cy", "di", "ed")
BREAK = re.compile("Break 2: one customer needs strict order")   # hot_tenant~ordered: 8 questions, no sims
QUESTIONS = 8
WAIT_MS = 60_000   # a budget for one page to show one move on a loaded machine, not a figure


@pytest.fixture
def room(monkeypatch):
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase(PASSPHRASE, iterations=1_000))
    with Stack(3) as stack:
        store = open_store(stack.database)
        try:
            info, _ = store.create_class("Drill night", "prof@school.test")
            yield stack, store, info.cohort
        finally:
            store.close()


def _seen(page, text, timeout_ms: int = WAIT_MS) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_ms)


def _press(console, label: str) -> None:
    """Press an enabled console button: enabled means the console drew the room's current state."""
    console.locator("button:enabled", has_text=label).first.click(timeout=WAIT_MS)


def _page(chromium, url: str):
    context = chromium.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{url}/live")
    page.get_by_test_id("stApp").wait_for(timeout=120_000)
    return context, page


@pytest.fixture
def evidence(tmp_path):
    """Pages to photograph if the test fails: a failed wait then shows what every page held, not only its own."""
    class Pages(list):
        failed = True

    pages = Pages()
    yield pages
    if pages.failed:
        for n, page in enumerate(pages):
            try:
                page.screenshot(path=str(tmp_path / f"failed-page-{n}.png"), full_page=True, timeout=10_000)
                print(f"--- page {n} ---\n{page.get_by_test_id('stApp').inner_text(timeout=10_000)}")
            except Exception as error:   # a page that cannot be photographed: say so, keep the others
                print(f"--- page {n}: no picture ({error})")
        print("pictures in", tmp_path)


@pytest.mark.timeout(400)
def test_an_instructor_runs_a_whole_break_for_five_candidates_on_three_processes(room, chromium, tmp_path, evidence):
    stack, store, cohort = room
    phases = [("stack up", time.monotonic())]   # printed for whoever trims this test; never asserted
    prof, console = _page(chromium, stack.url)
    evidence.append(console)
    console.get_by_text("Run the room (instructors)").click()
    console.get_by_label("Your name").fill("Prof Ada")
    console.get_by_label("Instructor passphrase").fill(PASSPHRASE)
    console.get_by_role("button", name="Sign in").click()
    console.get_by_test_id("stSelectbox").filter(has_text="Run live").click()
    console.get_by_role("option", name=BREAK).click()
    console.get_by_role("button", name="Start the live session").click()
    _seen(console, "Open the first question")

    phases.append(("console started the session", time.monotonic()))
    pages = []
    for handle in HANDLES:
        context, page = _page(chromium, stack.url)
        page.get_by_role("textbox", name="Your handle").fill(handle)
        page.get_by_role("textbox", name="Cohort code").fill(cohort)
        page.get_by_role("button", name="Join the room").click()
        pages.append((context, page))
        evidence.append(page)
    for _, page in pages:
        _seen(page, "You are in the waiting room")
    _seen(console, f"Who is here ({len(HANDLES)})")

    phases.append(("5 candidates in the waiting room", time.monotonic()))
    # Question 1 (a choice): everyone locks in, the last lock-in closes it, every page shows the shares.
    _press(console, "Open the first question")
    for _, page in pages:
        page.get_by_test_id("stRadioOption").first.click()
        page.get_by_role("button", name=re.compile("Lock in")).click()
    for _, page in pages:
        _seen(page, f"{len(HANDLES)} answers of {len(HANDLES)} in the room")
    _seen(console, "closed (all locked in)")
    _press(console, "Reveal the answer")
    _press(console, "Next question")

    phases.append(("question 1 locked, closed, revealed", time.monotonic()))
    # Question 2 (a number with an 80% range): the strip against the truth, on every page.
    for n, (_, page) in enumerate(pages):
        page.get_by_role("textbox", name=re.compile("Best guess")).fill(str(20 + 10 * n))
        page.get_by_role("textbox", name=re.compile("80% sure it is above")).fill(str(10 + 10 * n))
        page.get_by_role("textbox", name="…and below").fill(str(30 + 10 * n))
        page.get_by_role("button", name=re.compile("Lock in")).click()
    for _, page in pages:
        _seen(page, f"{len(HANDLES)} guesses of {len(HANDLES)} in the room")
    pages[0][1].screenshot(path=str(tmp_path / "candidate_closed.png"), full_page=True)
    _press(console, "Reveal the answer")
    for _, page in pages:
        _seen(page, "Truth")
    pages[0][1].screenshot(path=str(tmp_path / "candidate_revealed.png"), full_page=True)

    phases.append(("question 2 locked, closed, revealed", time.monotonic()))
    # The rest of the break, paced by the instructor: every page follows to the last question.
    for _ in range(3, QUESTIONS + 1):
        _press(console, "Next question")
        _press(console, "Close the question")
    for _, page in pages:
        _seen(page, f"Question {QUESTIONS} of {QUESTIONS}")
        _seen(page, "This question closed before you locked in")
    console.screenshot(path=str(tmp_path / "console.png"), full_page=True)
    phases.append(("questions 3-8 paced", time.monotonic()))
    _press(console, "End the session")
    for _, page in pages:
        _seen(page, "The session has ended")
    assert pages[0][1].get_by_text(re.compile(r"\bbo\b")).count() == 0, "no other name on a candidate's page"
    phases.append(("ended on every page", time.monotonic()))
    for context, _ in pages:
        context.close()
    prof.close()

    (session,) = store.live_sessions(cohort, running=False)
    seats = store.live_seats(session.id)
    assert sorted(s.handle for s in seats) == sorted(HANDLES)
    assert sum(1 for s in store.live_steps(session.id) if s.state == "open") == QUESTIONS, "the whole break"
    for seat in seats:
        attempt = store.attempt_by_id(seat.attempt_id)
        assert attempt.finished_at is not None and len(store.answers(attempt.id)) == 2
    print("screenshots in", tmp_path)
    evidence.failed = False
    print(" · ".join(f"{name} +{at - phases[i][1]:.1f} s" for i, (name, at) in enumerate(phases[1:])))
