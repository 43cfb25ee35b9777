"""Staged reveal: the worked answer opens one section at a time, in the drill's order.

Buttons stay disabled until the part's questions are locked in or explicitly skipped.
"""
from __future__ import annotations

import streamlit as st

from drills.disclosure import FOLLOWUP
from drills.schema import Part, section_title
from drills.store import AnswerEntry, AttemptFinished, LockRefused
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import fail_fast_when_down, fragment_run, note_store_outage
from ui.faults import is_store_fault
from ui.drill.lockin import FINISHED_ELSEWHERE, render_question
from ui.runtime import seam


def _skip_button(view: AttemptView, part: Part, questions, label: str, key: str) -> None:
    """Skipping forfeits the open questions for good, so it asks once more, saying how many."""
    open_questions = [q for q in questions if q.id not in view.answers]
    if not open_questions or view.finished:
        return
    count = len(open_questions)
    noun = "question" if count == 1 else "questions"
    with st.popover(label):
        st.markdown(f"**{count} unanswered {noun}** will be recorded as skipped and score 0. "
                    f"You cannot answer {'it' if count == 1 else 'them'} afterwards.")
        if st.button(f"Skip {count} {noun}", key=key, type="primary"):
            try:
                view.store.lock_answers(view.attempt.id, [AnswerEntry(q.id, part.id, q.kind, skipped=True)
                                                          for q in open_questions])
            except LockRefused as refused:   # finished elsewhere, or a live room closed the question first
                st.session_state[keys.CONFLICT] = (FINISHED_ELSEWHERE if isinstance(refused, AttemptFinished)
                                                   else str(refused))
            st.rerun()


def _lab_links(experiments) -> None:
    """After a worked answer: run its claim against a live PostgreSQL in the lab."""
    if experiments:
        from ui.labs.pg_lab import lab_link  # imported only where a section links the lab

        for experiment in experiments:
            lab_link(experiment)


K = keys.register("reveal", __name__)   # this module's keys (ui.keys holds only shared ones)
_SKIP = keys.register("skip", __name__)
_SKIP_FOLLOWUP = keys.register("skipf", __name__)


def reveal_button(part_id: str, section: str) -> str:
    """A part's button that opens one worked-answer section (or 'followup')."""
    return K.item(part_id, section)


def skip_button(part_id: str, followup: bool = False) -> str:
    """The confirm button that skips a part's open questions (or its follow-up's)."""
    return (_SKIP_FOLLOWUP if followup else _SKIP).item(part_id)


def _fresh_view(view: AttemptView) -> AttemptView | None:
    """The attempt as the store holds it now, for a fragment's own run (its arguments are the last page run's);
    None when the whole page must run instead: the gate, the finish or the store's state changed what lies
    outside the fragment (reveal buttons, the part's tick, the outage page)."""
    from ui.context import current_attempt

    if keys.STORE_OUTAGE in st.session_state:
        return None
    # A Lock in reruns its question and the skip button: the view its transaction returned, or one read of the
    # store, serves both in that run (told apart by the run's list of fragment ids, one object per run; none in
    # plain mode: each reads afresh).
    run = seam.fragment_run_key()
    fresh = AttemptView.kept(run)
    if fresh is None:
        found = current_attempt()
        if found is None:
            return None
        fresh = AttemptView.load(view.store, *found)
        if run is not None:
            fresh.kept_for_this_run()
    if fresh.finished != view.finished or fresh.loaded.drill is not view.loaded.drill:
        return None
    return fresh


def _fresh_or_rerun(view: AttemptView, questions) -> AttemptView:
    """In a fragment's own run, the attempt as the store holds it now (a fragment's arguments are the last page
    run's); the whole page runs instead once the group's gate opens or anything outside it must change."""
    if seam.page_run_owed():   # plain mode: a Lock in left the skip count to the page's run
        st.rerun(scope="app")
    if not fragment_run():
        return view
    fresh = _fresh_view(view)
    if fresh is None or fresh.all_answered(questions) != view.all_answered(questions):
        st.rerun(scope="app")
    return fresh


def _one_question(view: AttemptView, part: Part, questions, question, rerun: tuple[str, ...]) -> None:
    render_question(_fresh_or_rerun(view, questions), question, part.id, rerun)


def _skip_panel(view: AttemptView, part: Part, questions, skip_label: str, skip_key: str) -> None:
    _skip_button(_fresh_or_rerun(view, questions), part, questions, skip_label, skip_key)


def _lock_ins(view: AttemptView, part: Part, questions, skip_label: str, skip_key: str) -> None:
    """A group of lock-ins and their skip button, each question in its own fragment: a Lock in reruns that
    question and the skip button (its count of open questions) only, not the page.

    Once the group's last question is locked the whole page runs, so the reveal buttons below it open."""
    skip_fragment = f"lock-skip::{skip_key}"
    for question in questions:
        own = f"lock-question::{question.id}"
        st.fragment(_one_question, key=own)(view, part, questions, question, (own, skip_fragment))
    st.fragment(_skip_panel, key=skip_fragment)(view, part, questions, skip_label, skip_key)


def render_questions(view: AttemptView, part: Part) -> bool:
    """The 'before you read on' lock-ins; returns whether the gate to the answer is open."""
    if not part.questions:
        return True
    st.header("Before you read on")
    _lock_ins(view, part, part.questions, "Skip to the answer", skip_button(part.id))
    return view.all_answered(part.questions)


def _reveal_button(view: AttemptView, part_id: str, section: str, label: str, gate_open: bool) -> None:
    st.button(label, key=reveal_button(part_id, section), disabled=not gate_open, type="primary",
              on_click=_on_reveal, args=(view, part_id, section))


def _on_reveal(view: AttemptView, part_id: str, section: str) -> None:
    """The Reveal button's callback: record the reveal before the page's run, so that one run draws the section
    (a record made in the run itself took a second run to show it). A finished attempt records nothing."""
    try:
        fail_fast_when_down()
        view.store.record_reveal(view.attempt.id, part_id, section)
    except Exception as error:
        if not is_store_fault(error):
            raise
        # The page's run sees the outage and draws the outage page; the section stays closed until pressed again.
        note_store_outage(error, refused="Your last Reveal was not recorded: press it again once the drill is back.")


def render_reveals(view: AttemptView, part: Part, gate_open: bool) -> bool:
    """Revealed sections as text, then one button for the next; returns True once all are open."""
    if not part.reveal:
        return True
    st.header("The answer")
    for section in part.reveal:
        title = section_title(section)
        if view.revealed(part.id, section.stage) or view.finished:   # a finished attempt reads as a review
            st.markdown(f"### {title}")
            st.markdown(view.text(section.text))
            _lab_links(section.labs)
            continue
        _reveal_button(view, part.id, section.stage, f"Reveal: {title}", gate_open)
        if not gate_open:
            st.caption("Lock in every question above, or skip to the answer, to open this.")
        return False
    return True


def render_followup(view: AttemptView, part: Part) -> None:
    followup = part.followup
    if followup is None:
        return
    st.divider()
    st.header("The follow-up")
    st.markdown(view.text(followup.prompt))
    revealed = view.revealed(part.id, FOLLOWUP) or view.finished
    if followup.questions:
        _lock_ins(view, part, followup.questions, "Skip to the follow-up answer",
                  skip_button(part.id, followup=True))
    if revealed:
        st.markdown("### The follow-up answer")
        st.markdown(view.text(followup.answer))
        _lab_links(followup.labs)
        return
    gate_open = view.all_answered(followup.questions)
    _reveal_button(view, part.id, FOLLOWUP, "Reveal: The follow-up answer", gate_open)
    if not gate_open:
        st.caption("Lock in every follow-up question, or skip to the follow-up answer, to open this.")


def render_part(view: AttemptView, part: Part) -> None:
    if part.body:
        st.markdown(view.text(part.body))
    gate_open = render_questions(view, part)
    if render_reveals(view, part, gate_open):
        render_followup(view, part)
