"""The lock-in widget: a question, a form to commit an answer, then a read-only view.

Nothing about correctness shows before the lock; the truth appears once the answer is revealed.
"""
from __future__ import annotations

import streamlit as st

from drills import answers as checks
from drills.formulas import format_quantity
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion
from drills.scoring import NOTE_SCORES, grade_numeric
from drills.store import LockedAnswer
from ui.attempt_view import AttemptView
from ui.safe import escape_markdown
from ui.sim_embed import render_sim_embed

NOTE_LABELS = {"full": "Covered it", "partial": "Partly", "missed": "Missed it"}
SCORE_BADGE = {1.0: "✅ full marks", 0.5: "🟡 half marks", 0.0: "❌ no marks"}


def render_question(view: AttemptView, question, part_id: str, *, show_truth: bool) -> None:
    """One question: the form while open, the locked answer (and the truth if revealed) after."""
    with st.container(border=True):
        st.markdown(f"**{view.text(question.prompt)}**")
        answer = view.answers.get(question.id)
        if isinstance(question, NumericQuestion) and question.sim:
            render_sim_embed(question.sim, view.attempt.seed, revealed=show_truth and answer is not None)
        if answer is None:
            _open_form(view, question, part_id)
        else:
            _locked(view, question, answer, show_truth=show_truth)


def _commit(view: AttemptView, question, part_id: str, **fields) -> None:
    _, created = view.store.lock_answer(view.attempt.id, question.id, part_id, question.kind, **fields)
    st.session_state["flash"] = "Locked in." if created else "Already locked: your first answer stands."
    st.rerun()


def _open_form(view: AttemptView, question, part_id: str) -> None:
    key = f"lock::{question.id}"
    with st.form(key, border=False, enter_to_submit=True):
        if isinstance(question, NumericQuestion):
            cols = st.columns([2, 1, 1])
            guess = cols[0].text_input(f"Best guess ({question.unit})", key=f"{key}::value",
                                       placeholder="a number", max_chars=40)
            low = cols[1].text_input("80% sure it is above…", key=f"{key}::low", placeholder="optional",
                                     max_chars=40)
            high = cols[2].text_input("…and below", key=f"{key}::high", placeholder="optional", max_chars=40)
        elif isinstance(question, ChoiceQuestion):
            labels = {o.id: view.text(o.text) for o in question.options}
            choice = st.radio("Your answer", list(labels), format_func=labels.get, index=None,
                              key=f"{key}::choice", label_visibility="collapsed")
        else:
            notes = st.text_area("Your notes", key=f"{key}::notes", max_chars=checks.MAX_NOTES, height=140,
                                 placeholder="A few lines in your own words")
        submitted = st.form_submit_button("🔒 Lock in", type="primary")
    if not submitted:
        return
    try:
        if isinstance(question, NumericQuestion):
            entry = checks.numeric_entry(guess, low, high, unit=question.unit)
            _commit(view, question, part_id, value=entry.value, low=entry.low, high=entry.high)
        elif isinstance(question, ChoiceQuestion):
            _commit(view, question, part_id, choice=checks.choice_entry(choice, [o.id for o in question.options]))
        else:
            _commit(view, question, part_id, notes=checks.notes_entry(notes))
    except checks.InputError as problem:
        st.error(str(problem), icon="⚠️")


def _locked(view: AttemptView, question, answer: LockedAnswer, *, show_truth: bool) -> None:
    if answer.skipped:
        st.markdown("⏭️ *Skipped — counts as no marks.*")
    elif isinstance(question, NumericQuestion):
        line = f"🔒 Your guess: **{format_quantity(answer.value, question.unit)}**"
        if answer.low is not None:
            line += (f" · 80% range {format_quantity(answer.low, question.unit)} – "
                     f"{format_quantity(answer.high, question.unit)}")
        st.markdown(line)
    elif isinstance(question, ChoiceQuestion):
        chosen = next((o.text for o in question.options if o.id == answer.choice), answer.choice)
        st.markdown(f"🔒 Your answer: **{view.text(chosen)}**")
    else:
        st.caption("🔒 Your notes")
        st.text(answer.notes)  # user text: plain text, never markdown or HTML
    if show_truth:
        _truth(view, question, answer)


def _truth(view: AttemptView, question, answer: LockedAnswer) -> None:
    if isinstance(question, NumericQuestion):
        truth = view.truth(question.id)
        shown = format_quantity(truth, question.unit, question.decimals)
        if answer.skipped:
            st.markdown(f"**Truth: {shown}**")
            return
        score = grade_numeric(answer.value, truth, question.tolerance)
        band = ""
        if answer.low is not None:
            band = " · inside your range" if answer.low <= truth <= answer.high else " · outside your range"
        st.markdown(f"**Truth: {shown}** — {SCORE_BADGE[score]}{band}")
    elif isinstance(question, ChoiceQuestion):
        right = next(o.text for o in question.options if o.id == question.answer)
        badge = "" if answer.skipped else (" — ✅ right" if answer.choice == question.answer else " — ❌ not this one")
        st.markdown(f"**Answer: {view.text(right)}**{badge}")
        if question.explain:
            st.caption(view.text(question.explain))
    elif isinstance(question, NotesQuestion):
        st.markdown(f"**A strong answer covers:** {view.text(question.strong_answer)}")
        if not answer.skipped:
            _rate_notes(view, question)


def _save_rating(view: AttemptView, question_id: str, widget_key: str) -> None:
    choice = st.session_state.get(widget_key)
    if choice in NOTE_SCORES:
        view.store.rate_note(view.attempt.id, question_id, choice)


def _rate_notes(view: AttemptView, question: NotesQuestion) -> None:
    """A self-rating that is saved the moment it is picked (a new row each time it changes)."""
    current = view.note_ratings.get(question.id)
    widget_key = f"rate::{question.id}"
    st.radio("How did your notes compare?", list(NOTE_SCORES), format_func=NOTE_LABELS.get,
             index=list(NOTE_SCORES).index(current) if current else None, horizontal=True, key=widget_key,
             on_change=_save_rating, args=(view, question.id, widget_key))
    if current:
        st.caption(f"Self-rated: {NOTE_LABELS[current]} — saved.")


def flash() -> None:
    """Show (once) the confirmation a lock-in left behind before its rerun."""
    message = st.session_state.pop("flash", None)
    if message:
        st.toast(escape_markdown(message), icon="🔒")
