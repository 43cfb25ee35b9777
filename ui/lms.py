"""The app's side of an LMS course (LTI): a launch whose link names a drill opens it, and a finished or newly
marked attempt's grade is queued in the store's outbox (drills.store.lti_grades) for the tool's LMS worker;
nothing happens for a visitor or an attempt no LMS launch asked for."""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from drills import scoring
from drills.records import RubricScore
from drills.store.lti_grades import FULLY_GRADED, PENDING_MANUAL, Grade
from ui import keys
from ui.context import get_catalogue, remember_attempt
from ui.drill.attempt_view import AttemptView
from ui.drill.start import Visitor, start
from ui.identity import lti_visit

K = keys.register("lms", __name__)
OPENED = K("opened")   # the key of the last launch whose drill this session opened


def grade_of(results: Sequence[scoring.QuestionResult], history: Sequence[RubricScore], tally: str) -> Grade:
    """A finished attempt's grade: its question points, one per question at most. Notes answers are marked by
    a person, so while an attempt has any and no instructor has scored it, the grade is PendingManual."""
    total = scoring.totals(results)
    notes = any(r.kind == "notes" and r.answer is not None and not r.answer.skipped for r in results)
    marked = any(row.scorer == "instructor" for row in history)
    return Grade(round(total.earned, 4), float(total.possible),
                 PENDING_MANUAL if notes and not marked else FULLY_GRADED, tally)


def queue_grade(view: AttemptView) -> bool:
    """Queue the attempt's grade (as stored now) for its LMS; False when no launch asked for one."""
    attempt = view.store.attempt_by_id(view.attempt.id)
    if attempt is None or attempt.finished_at is None:
        return False
    history = view.store.rubric_history(attempt.id)
    tally = scoring.verdict(view.loaded.drill, scoring.current_levels(history)).tally
    return view.store.queue_lti_grade(attempt.id, grade_of(view.results(), history, tally))


def open_linked_drill(store) -> None:
    """Once per launch, a learner whose LMS link names a drill goes straight into it: their unfinished attempt
    at it, else a new one. A live room's link says where the room is instead (the instructor opens it)."""
    visit = lti_visit(store)
    if visit is None or visit.instructor or not visit.drill_id or st.session_state.get(OPENED) == visit.key:
        return
    st.session_state[OPENED] = visit.key
    if visit.drill_id not in get_catalogue().drills:
        st.warning("The LMS link names a drill this app does not have: pick one below.", icon=":material/warning:")
        return
    if visit.live:
        st.info("Your course runs this drill as a live room: open Live when your instructor starts it.",
                icon=":material/groups:")
        st.page_link("pages/live.py", label="Live room", icon=":material/groups:")
        return
    candidate = store.account_candidate(visit.account, visit.cohort)
    open_ones = [a for a in store.attempts(drill_id=visit.drill_id, cohort=visit.cohort)
                 if a.candidate_id == candidate.id and a.finished_at is None]
    if open_ones:
        remember_attempt(open_ones[-1].token)
        st.switch_page("pages/drill.py", query_params={keys.ATTEMPT_TOKEN: open_ones[-1].token})
    minutes = get_catalogue().drills[visit.drill_id].drill.time_box_min
    start(store, Visitor(visit.account, visit.cohort, problem=st.empty()), visit.drill_id, minutes)
