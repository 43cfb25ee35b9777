"""The lock-in widget: a question, a form to commit an answer, then a read-only view.

Nothing about correctness shows before the lock; the truth appears once the answer is revealed.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from drills import answers as checks
from drills.disclosure import option_order
from drills.formulas import format_quantity
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion
from drills.scoring import NOTE_SCORES, AnswerGrade, grade_answer
from drills.store import AttemptFinished, LockedAnswer, LockRefused
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import fail_fast_when_down, fragment_run, get_catalogue, note_store_outage
from ui.faults import is_store_fault
from ui.runtime import seam
from ui.safe import escape_markdown
from ui.sims.embed import render_sim_embed
from ui.sims.replay import replay_query, replay_tab

NOTE_LABELS = {"full": "Covered it", "partial": "Partly", "missed": "Missed it"}
# Material icons and coloured badges, not emoji: a browser without an emoji font draws those as empty boxes.
SCORE_BADGE = {1.0: ":green-badge[:material/check_circle: full marks]",
               0.5: ":orange-badge[:material/contrast: half marks]",
               0.0: ":red-badge[:material/cancel: no marks]"}
CHOICE_BADGE = {True: ":green-badge[:material/check_circle: right]",
                False: ":red-badge[:material/cancel: not this one]"}
LOCK_IN = "Lock in"   # the button's words; its lock icon is drawn beside them and hidden from screen readers

K = keys.register("lock", __name__)     # this module's keys (ui.keys holds only shared ones)
_RATE = keys.register("rate", __name__)
_HINT = keys.register("hint", __name__)
FLASH = K.kept("flash")                 # a confirmation left for the next run to show once (in the page)


def lock_form(question_id: str) -> str:
    """A question's lock-in form; its fields are lock_field(question_id, 'value' | 'low' | 'high' | ...)."""
    return K.item(question_id)


def lock_field(question_id: str, field: str) -> str:
    """One input of a lock-in form: value, low, high, choice, notes, or submit (the Lock in button)."""
    return K.item(question_id, field)


def note_rating(question_id: str) -> str:
    """The self-rating radio under a revealed notes question."""
    return _RATE.item(question_id)


def hint_button(question_id: str, index: int) -> str:
    """The button that opens a numeric question's hint number `index` (from 0)."""
    return _HINT.item(question_id, index)


def score_badge(grade: AnswerGrade, hint_cost: float = 0.0) -> str:
    """The badge for a numeric grade (drills.scoring's), with what hints took off it."""
    badge = SCORE_BADGE[grade.accuracy]
    if hint_cost and grade.accuracy:
        badge += f", less {hint_cost:.0%} for hints: {grade.score:.2g} of 1"
    return badge


FINISHED_ELSEWHERE = ("This attempt has been finished (perhaps in another tab), so nothing more can be "
                      "locked in or scored. Reload to see it read-only.")


def render_question(view: AttemptView, question, part_id: str, rerun: tuple[str, ...] = (), *,
                    then: Callable[[], None] | None = None) -> None:
    """One question: the form while open, the locked answer (and the truth once disclosed) after.

    `rerun` names the fragments a Lock in reruns (the question's own and what counts its open questions);
    empty, the press reruns whatever it would by default. `then` draws more into the question's card, last
    (the live room's answers)."""
    with st.container(border=True):
        st.markdown(f"**{view.text(question.prompt)}**")
        answer = view.answers.get(question.id)
        show_truth = question.id in view.disclosed
        if isinstance(question, NumericQuestion) and question.sim:
            seed = view.question_seed(question.id)   # named, and linked, only once the question is locked
            render_sim_embed(question.sim, seed, revealed=show_truth, locked=answer is not None,
                             values=view.loaded.values,
                             replay=_replay(view, question, answer) if answer is not None or show_truth else None)
        outcome = st.session_state.pop(keys.lock_outcome(question.id), None)   # from this tab's Lock in press
        if answer is None and view.finished:
            if outcome is not None:   # a stale tab pressed Lock in after the finish
                st.error(FINISHED_ELSEWHERE, icon=":material/lock:")
            st.caption("Not answered: the attempt was finished before this question was locked in.")
            if show_truth:
                _truth(view, question, None)
        elif answer is None:
            if isinstance(question, NumericQuestion) and question.hints:
                _hints(view, question, part_id)
            if _open_form(view, question, part_id, rerun) and outcome is None:
                # Pressed, but no callback ran: a session the server has just made (after a restart) has no
                # callbacks registered yet. Lock in now, so no press is silently dropped.
                _on_lock(view, question, part_id)
                st.rerun()
            if outcome is not None and outcome[0] in (PROBLEM, UNAVAILABLE, REFUSED):
                st.error(outcome[1], icon=":material/warning:")
        else:
            if outcome is not None and outcome[0] == LOST:
                # This tab pressed Lock in, but another tab's answer was stored first.
                _tell_lost_race(view, question, answer)
            _locked(view, question, answer, show_truth=show_truth)
            if outcome is not None and outcome[0] == STORED:
                st.success("Locked in.", icon=":material/lock:")   # here, not a toast: a toast covers other controls
        if then is not None:
            then()


def _replay(view: AttemptView, question: NumericQuestion, answer: LockedAnswer | None) -> dict[str, str] | None:
    """The query that replays the question's graded run, seed and guess on its page; None where the page keeps
    its seed to itself (its link then opens the run's settings)."""
    guess = None if answer is None or answer.skipped else answer.value
    query = replay_query(question.sim, view.loaded.values, guess, seed=view.question_seed(question.id))
    return query if replay_tab(question.sim, query) is not None else None


def answer_summary(question, answer: LockedAnswer, text=str, *, compact: bool = False) -> str:
    """A locked answer in a few words, as the candidate typed or picked it (`text` renders option texts).

    `compact` is the results table's form: the range in brackets, and notes in full (shown as plain text).
    """
    if answer.skipped:
        return "skipped"
    if isinstance(question, NumericQuestion):
        line = format_quantity(answer.value, question.unit)
        if answer.low is not None:
            span = f"{format_quantity(answer.low, question.unit)} – {format_quantity(answer.high, question.unit)}"
            line += f" [{span}]" if compact else f" (80% range {span})"
        return line
    if isinstance(question, ChoiceQuestion):
        return text(next((o.text for o in question.options if o.id == answer.choice), answer.choice or ""))
    return (answer.notes or "") if compact else "your notes"


def _submit_key(question) -> str:
    return lock_field(question.id, "submit")


def _tell_lost_race(view: AttemptView, question, stored: LockedAnswer) -> None:
    st.warning(escape_markdown(
        f"Another tab locked this question first, so the answer you just gave here was not stored. "
        f"The locked answer is: {answer_summary(question, stored, view.text)}."), icon=":material/warning:")


def _hints(view: AttemptView, question: NumericQuestion, part_id: str) -> None:
    """The question's graded hints: opened ones shown, the next one behind a button that names its price."""
    opened = view.hints.get(question.id, frozenset())
    for index, hint in enumerate(question.hints):
        if index in opened:
            st.info(f"**Hint {index + 1}** (cost {hint.cost:.0%} of this question's mark): {view.text(hint.text)}",
                    icon=":material/lightbulb:")
            continue
        spent = sum(question.hints[i].cost for i in opened)
        if st.button(f"Show hint {index + 1} of {len(question.hints)} — costs {hint.cost:.0%} of this question's "
                     f"mark" + (f" (on top of {spent:.0%})" if spent else ""),
                     key=hint_button(question.id, index), icon=":material/lightbulb:"):
            try:
                view.store.open_hint(view.attempt.id, question.id, part_id, index)
            except AttemptFinished:
                st.error(FINISHED_ELSEWHERE, icon=":material/lock:")
                return
            st.rerun()
        break   # one at a time, in order


STORED, LOST, PROBLEM, FINISHED = "stored", "lost", "problem", "finished"   # outcomes of a Lock in press
REFUSED = "refused"   # any other LockRefused (a live question closed first): its message, the form kept
UNAVAILABLE = "unavailable"
NOT_STORED = ("Not locked in: the attempt store could not be reached when you pressed Lock in, so nothing was "
              "stored. What you typed is back in the box; press Lock in again.")
_DRAFT = "lock_draft::"   # what a press the store refused had typed, put back in the form when it is drawn again
_FIELDS = ("value", "low", "high", "choice", "notes")


def _entry_fields(question) -> dict:
    """The pressed form's answer, checked as the store wants it (raises InputError with the reason)."""
    def typed(field: str):
        return st.session_state.get(lock_field(question.id, field))

    if isinstance(question, NumericQuestion):
        entry = checks.numeric_entry(typed("value"), typed("low"), typed("high"), unit=question.unit)
        return {"value": entry.value, "low": entry.low, "high": entry.high,
                "hint_costs": tuple(h.cost for h in question.hints)}
    if isinstance(question, ChoiceQuestion):
        return {"choice": checks.choice_entry(typed("choice"), [o.id for o in question.options])}
    return {"notes": checks.notes_entry(typed("notes"))}


def _on_lock(view: AttemptView, question, part_id: str, rerun: tuple[str, ...] = ()) -> None:
    """The Lock in button's callback: check and commit before the page's run, so that one run already
    draws the locked answer (no second run), and leave the outcome for render_question to show."""
    outcome = keys.lock_outcome(question.id)
    try:
        fields = _entry_fields(question)
        fail_fast_when_down()
        stored, created, records = view.store.lock_in(view.attempt.id, question.id, part_id, question.kind, **fields)
    except checks.InputError as problem:
        st.session_state[outcome] = (PROBLEM, str(problem))
        return
    except AttemptFinished:
        st.session_state[outcome] = (FINISHED, FINISHED_ELSEWHERE)
        return
    except LockRefused as refused:
        st.session_state[outcome] = (REFUSED, str(refused))
        return
    except Exception as error:
        if not is_store_fault(error):
            raise
        st.session_state[outcome] = (UNAVAILABLE, NOT_STORED)
        st.session_state[_DRAFT + question.id] = {
            field: st.session_state[lock_field(question.id, field)] for field in _FIELDS
            if st.session_state.get(lock_field(question.id, field)) is not None}
        # "not confirmed", not "not stored": a commit can land just as the connection to it drops.
        note_store_outage(error, refused=f"Your last Lock in was not confirmed: {view.text(question.prompt)} "
                                         "Once the drill is back it shows the answer locked if it reached the store; "
                                         "if not, what you typed is still in the box: press Lock in again.")
        return   # the fragment's own run sees the outage and reruns the page as the outage page
    st.session_state[outcome] = (STORED if created else LOST, "")
    _keep_view(view, records)
    if rerun and fragment_run() and not _run_alongside(rerun):   # pressed in its fragment: the named ones only
        st.rerun(list(rerun))


def _keep_view(view: AttemptView, records) -> None:
    """Leave the fragments this run redraws the attempt as the lock-in's own transaction returned it, on the
    catalogue's drill as a read would find it (an edited drill still reruns the page): no second read."""
    loaded = get_catalogue().drills.get(view.attempt.drill_id)
    if loaded is not None:
        AttemptView.of(view.store, view.attempt, loaded, records).kept_for_this_run()


def _run_alongside(fragments: tuple[str, ...]) -> bool:
    """From a Lock in's callback in its fragment's run: queue the other named fragments (the skip button's count)
    to run after it in this same run, instead of a keyed st.rerun, which stops this run and starts another (a
    second new-session message and run for every lock-in). False when Streamlit's run is not as expected, or
    in plain mode; the caller then reruns them the documented way (ui.runtime.seam.run_fragments_alongside)."""
    return seam.run_fragments_alongside(fragments)


_RANGE_WIDTH = 190   # px: each range box a quarter of the wide layout's row, as the columns 2:1:1 drew them


def _open_form(view: AttemptView, question, part_id: str, rerun: tuple[str, ...] = ()) -> bool:
    """The answer form; True when its Lock in was pressed in this run."""
    for field, typed in st.session_state.pop(_DRAFT + question.id, {}).items():
        st.session_state[lock_field(question.id, field)] = typed
    with st.form(lock_form(question.id), border=False, enter_to_submit=True):
        if isinstance(question, NumericQuestion):
            # One row that wraps on a phone: one block, where three columns were four (ten on the board).
            with st.container(horizontal=True, gap="small"):
                st.text_input(f"Best guess ({question.unit})", key=lock_field(question.id, "value"),
                              placeholder="a number", max_chars=40)
                st.text_input("80% sure it is above…", key=lock_field(question.id, "low"),
                              placeholder="optional", max_chars=40, width=_RANGE_WIDTH)
                st.text_input("…and below", key=lock_field(question.id, "high"), placeholder="optional",
                              max_chars=40, width=_RANGE_WIDTH)
        elif isinstance(question, ChoiceQuestion):
            labels = {o.id: view.text(o.text) for o in option_order(question, view.attempt.seed)}
            st.radio("Your answer", list(labels), format_func=labels.get, index=None,
                     key=lock_field(question.id, "choice"), label_visibility="collapsed")
        else:
            st.text_area("Your notes", key=lock_field(question.id, "notes"), max_chars=checks.MAX_NOTES,
                         height=140, placeholder="A few lines in your own words")
        return st.form_submit_button(LOCK_IN, icon=":material/lock:", type="primary", key=_submit_key(question), on_click=_on_lock,
                                     args=(view, question, part_id, rerun))


def locked_line(question, answer: LockedAnswer, text) -> str:
    """The markdown line for a locked number or choice (":material/lock: Your guess: …"), here and in the live room."""
    words = "guess" if isinstance(question, NumericQuestion) else "answer"
    return f":material/lock: Your {words}: **{answer_summary(question, answer, text)}**"


def _locked(view: AttemptView, question, answer: LockedAnswer, *, show_truth: bool) -> None:
    if answer.skipped:
        st.markdown(":material/skip_next: *Skipped — counts as no marks.*")
    elif isinstance(question, NumericQuestion):
        st.markdown(locked_line(question, answer, view.text))
        if answer.hint_cost:
            st.caption(f":material/lightbulb: Hints opened before the lock-in cost {answer.hint_cost:.0%} of this question's mark.")
            with st.expander("The hints you opened"):
                for index in sorted(view.hints.get(question.id, ())):
                    st.markdown(f"**Hint {index + 1}:** {view.text(question.hints[index].text)}")
    elif isinstance(question, ChoiceQuestion):
        st.markdown(locked_line(question, answer, view.text))
    else:
        st.caption(":material/lock: Your notes")
        st.text(answer.notes)  # user text: plain text, never markdown or HTML
    if show_truth:
        _truth(view, question, answer)


def _truth(view: AttemptView, question, answer: LockedAnswer | None) -> None:
    """The truth under a locked answer; with no answer (a finished attempt's open question), the truth alone."""
    if isinstance(question, NumericQuestion):
        truth = view.truth(question.id)
        shown = format_quantity(truth, question.unit, question.decimals)
        if answer is None or answer.skipped:
            st.markdown(f"**Truth: {shown}**")
            return
        grade = grade_answer(question, answer, truth)
        band = {True: " · inside your range", False: " · outside your range", None: ""}[grade.in_range]
        st.markdown(f"**Truth: {shown}** — {score_badge(grade, answer.hint_cost)}{band}")
    elif isinstance(question, ChoiceQuestion):
        right = next(o.text for o in question.options if o.id == question.answer)
        badge = ("" if answer is None or answer.skipped
                 else " — " + CHOICE_BADGE[bool(grade_answer(question, answer, None).score)])
        st.markdown(f"**Answer: {view.text(right)}**{badge}")
        if question.explain:
            st.caption(view.text(question.explain))
    elif isinstance(question, NotesQuestion):
        st.markdown(f"**A strong answer covers:** {view.text(question.strong_answer)}")
        if answer is not None and not answer.skipped:
            _rate_notes(view, question)


def _save_rating(view: AttemptView, question_id: str, widget_key: str) -> None:
    choice = st.session_state.get(widget_key)
    if choice in NOTE_SCORES:
        try:
            view.store.rate_note(view.attempt.id, question_id, choice)
        except AttemptFinished:
            st.session_state[keys.CONFLICT] = FINISHED_ELSEWHERE
        except Exception as error:
            if not is_store_fault(error):
                raise
            note_store_outage(error, refused="Your self-rating was not saved; pick it again once the drill is back.")


def _rate_notes(view: AttemptView, question: NotesQuestion) -> None:
    """A self-rating that is saved the moment it is picked (a new row each time it changes)."""
    current = view.note_ratings.get(question.id)
    widget_key = note_rating(question.id)
    st.radio("How did your notes compare?", list(NOTE_SCORES), format_func=NOTE_LABELS.get,
             index=list(NOTE_SCORES).index(current) if current else None, horizontal=True, key=widget_key,
             on_change=_save_rating, args=(view, question.id, widget_key), disabled=view.finished)
    if current:
        st.caption(f"Self-rated: {NOTE_LABELS[current]} — saved.")


def flash() -> None:
    """Show (once) what a lock-in left behind before its rerun: a confirmation, or why it did not count."""
    message = st.session_state.pop(FLASH, None)
    if message:
        st.success(escape_markdown(message), icon=":material/lock:")   # in the page, never a toast over its controls
    conflict = st.session_state.pop(keys.CONFLICT, None)
    if conflict:
        st.warning(escape_markdown(conflict), icon=":material/warning:")
