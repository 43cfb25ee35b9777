"""The app's side of grade passback to an LMS (LTI AGS): a finished or newly marked attempt's grade is queued
in the store's outbox (drills.store.lti_grades) for the tool's sender; nothing happens for an attempt no LMS
launch asked a grade for."""
from __future__ import annotations

from collections.abc import Sequence

from drills import scoring
from drills.records import RubricScore
from drills.store.lti_grades import FULLY_GRADED, PENDING_MANUAL, Grade
from ui.drill.attempt_view import AttemptView


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
