"""Spaced review on the page: a signed-in handle's due items, answered one at a time in fresh numbers.

Also the two hooks other pages call: schedule_after_finish (the drill page's Finish) and due_link (the
catalogue's "due for review" link, under its Next up line). The rules and the FSRS scheduling live in drills.review.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from drills import answers as checks
from drills import review, scoring
from drills.store.accounts import attempt_learner
from drills.formulas import format_quantity
from drills.loader import Catalogue, LoadedDrill
from drills.schema import NumericQuestion
from drills.records import ReviewState
from drills.timebox import format_utc
from drills.variants import in_variant, label as variant_label
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import get_catalogue, get_store, now
from ui.drill.history import signed_in_bar
from ui.drill.lockin import SCORE_BADGE
from ui.safe import escape_markdown

K = keys.register("review", __name__)   # this module's keys (ui.keys holds only shared ones)
OUTCOME = K("outcome")                   # the review just answered, shown once above the next item
CHECK_AGAIN = K("check_again")           # nothing due yet but soon: reruns the page to look again


def form_key(row_id: int) -> str:
    """The answer form of the due item whose latest row is `row_id` (a new row gets a new, empty form)."""
    return f"review::{row_id}"


def value_key(row_id: int) -> str:
    """The answer typed in that form."""
    return f"review::{row_id}::value"


REVIEW_INTRO = ("Questions you missed in a finished attempt, and questions of skills you scored weak, come back "
                "here on a spaced schedule, each with fresh numbers. Sign in with your handle and the personal "
                "resume code shown when you first started a drill with it.")
SOON_S = 5 * 60   # the next question is near enough to wait for: the page offers a button to look again
RATING_MEANING = {
    review.Rating.Good: "inside the tolerance",
    review.Rating.Hard: "within twice the tolerance",
    review.Rating.Again: "outside twice the tolerance",
}


def schedule_after_finish(view: AttemptView) -> int:
    """Put what a finished attempt missed (and its weak skills' questions) on the candidate's review schedule.

    Graded in the attempt's own variant; safe to call again (the store adds each item once per attempt).
    """
    levels = scoring.current_levels(view.store.rubric_history(view.attempt.id))
    weak = {skill for skill, row in levels.items() if row.level == "weak"}
    entries = review.items_after(view.loaded, view.results(), weak, view.attempt.variant)
    return view.store.schedule_reviews(view.attempt.id, attempt_learner(view.attempt).review_key, entries,
                                      review.next_card)


def due_link(due: int) -> None:
    """The catalogue's link to the review page, under its Next up line, when `due` questions are due."""
    st.page_link("pages/review.py", icon=":material/replay:",
                 label=f"Due for review: {due} question{'' if due == 1 else 's'}, each with fresh numbers")


@dataclass(frozen=True)
class Outcome:
    """What the candidate sees after answering a review: their answer, the truth, the grade and the next due."""

    prompt: str
    guess: str
    truth: str
    accuracy: float
    rating: review.Rating
    due_at: float | None     # None: another tab reviewed the item first, so this answer was not stored


def _question(catalogue: Catalogue, item: ReviewState) -> tuple[LoadedDrill, NumericQuestion] | None:
    """The item's drill and question, while the catalogue still has them as a reviewable question."""
    loaded = catalogue.drills.get(item.drill_id)
    if loaded is None:
        return None
    try:
        question = loaded.drill.question(item.question_id)
    except KeyError:
        return None
    return (loaded, question) if review.reviewable(question) else None


def _part_title(loaded: LoadedDrill, question_id: str) -> str:
    for part in loaded.drill.parts:
        inside = list(part.questions) + (list(part.followup.questions) if part.followup else [])
        if any(q.id == question_id for q in inside):
            return part.title
    return ""


def _show_outcome() -> None:
    outcome: Outcome | None = st.session_state.pop(OUTCOME, None)
    if outcome is None:
        return
    if outcome.due_at is None:
        st.warning("That item was reviewed in another tab a moment ago, so this answer was not stored.", icon=":material/warning:")
        return
    with st.container(border=True):
        st.caption("Just answered")
        st.markdown(f"**{outcome.prompt}**")
        st.markdown(f"Your answer: **{outcome.guess}** · **Truth: {outcome.truth}** — {SCORE_BADGE[outcome.accuracy]}, "
                    f"{RATING_MEANING[outcome.rating]}: rated *{review.RATING_WORDS[outcome.rating]}*.")
        st.markdown(f"Comes back **{review.wait_words(outcome.due_at - now())}** "
                    f"({format_utc(outcome.due_at, seconds=False)} UTC).")


def _givens(loaded: LoadedDrill, question: NumericQuestion) -> None:
    shown = review.givens_for(loaded, question)
    if shown:
        st.markdown("The numbers you need:\n" + "\n".join(
            f"- **{format_quantity(g.value, g.unit)}** — {g.note or g.name.replace('_', ' ')}" for g in shown))


def _review_one(store, handle: str, item: ReviewState, base: LoadedDrill, question: NumericQuestion) -> None:
    variant = review.fresh_variant(base, question, item.variant, review.salt(item))
    loaded = in_variant(base, variant)
    prompt = loaded.text(question.prompt)
    with st.container(border=True):
        numbers = (f"{variant_label(variant)} of its numbers" if review.numbers_vary(base, question)
                   else "its numbers never vary: recall the method, not the figure")
        st.caption(f"{base.drill.title} · {_part_title(base, question.id)} · {numbers} · {item.reason or 'reviewed'}")
        st.markdown(f"**{prompt}**")
        _givens(loaded, question)
        with st.form(form_key(item.id), border=False, enter_to_submit=True):
            typed = st.text_input(f"Your answer ({question.unit})", key=value_key(item.id),
                                  placeholder="a number", max_chars=40)
            checked = st.form_submit_button("Check my answer", type="primary")
    if not checked:
        return
    try:
        entry = checks.numeric_entry(typed, unit=question.unit)
    except checks.InputError as problem:
        st.error(str(problem), icon=":material/warning:")
        return
    truth = loaded.truth(question.id)
    accuracy, rated = review.graded(entry.value, truth, question)
    state = store.record_review(handle, item.drill_id, question.id, based_on=item.id, variant=variant,
                                guess=entry.value, rating=int(rated), advance=review.next_card)
    st.session_state[OUTCOME] = Outcome(
        prompt, format_quantity(entry.value, question.unit), format_quantity(truth, question.unit, question.decimals),
        accuracy, rated,
        None if state is None else state.due_at)
    st.rerun()


def schedule_table(items: list[ReviewState], catalogue: Catalogue, at: float) -> pd.DataFrame:
    """Every scheduled item, for a static table: st.table wraps long prompts where a data grid cut off its
    right-hand columns, and it reads cells as markdown, so the texts are escaped (a prompt's "$3,800 … $1,560"
    would otherwise turn into a formula)."""
    rows = []
    for item in items:
        found = _question(catalogue, item)
        if found is None:
            continue
        base, question = found
        prompt = in_variant(base, item.variant).text(question.prompt)
        rows.append({
            "Question": escape_markdown(prompt.replace("**", "")),
            "Comes back": "due now" if review.is_due(item.due_at, at) else review.wait_words(item.due_at - at),
            "Due (UTC)": format_utc(item.due_at, seconds=False),
            "Last result": review.RATING_WORDS[review.Rating(item.rating)],
            "Reviews": item.reviews,
            "Drill": escape_markdown(base.drill.title),
        })
    return pd.DataFrame(rows)


def render_review() -> None:
    store = get_store()
    learner = signed_in_bar(store, intro=REVIEW_INTRO, button="Open my reviews", says="Reviews for **{handle}**.",
                            close="Close my reviews")
    if learner is None:
        return
    handle = learner.review_key
    _show_outcome()
    catalogue = get_catalogue()
    at = now()
    items = [item for item in store.review_items(handle) if _question(catalogue, item) is not None]
    if not items:
        st.info("Nothing on your review schedule yet. Finish an attempt: the numeric questions you miss come "
                "back here, and so do a few questions of each skill you score weak.")
        st.page_link("pages/home.py", label="Go to the catalogue", icon=":material/home:")
        return
    due = [item for item in items if review.is_due(item.due_at, at)]
    if due:
        st.header(f"Due now: {len(due)} question{'' if len(due) == 1 else 's'}")
        st.caption("Each is asked in another variant of the drill's numbers: work it out afresh, not from memory.")
        _review_one(store, handle, due[0], *_question(catalogue, due[0]))
    else:
        upcoming = min(item.due_at for item in items)
        st.success(f"Nothing due right now. The next question comes back {review.wait_words(upcoming - at)} "
                   f"({format_utc(upcoming, seconds=upcoming - at < 60)} UTC).", icon=":material/check_circle:")
        if upcoming - at < SOON_S:
            st.button("Check again", icon=":material/replay:", key=CHECK_AGAIN,
                      help="The page does not refresh by itself: press this once the question is due.")
    st.header("Your review schedule")
    st.table(schedule_table(items, catalogue, at), hide_index=True)
