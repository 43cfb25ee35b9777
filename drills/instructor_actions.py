"""Instructor writes: skill overrides and extra time, each checked here and stored through the store's
own record methods (a comment and a name are required; finished attempts get no time).
"""
from __future__ import annotations

import math

from drills import answers as checks
from drills.loader import LoadedDrill
from drills.records import Attempt
from drills.reports.aggregates import LEVEL_VALUE
from drills.store import AttemptStore

MIN_EXTRA_MIN = 1
MAX_EXTRA_MIN = 240
MAX_INSTRUCTOR_NAME = checks.MAX_HANDLE


def instructor_name_entry(text: object) -> str:
    cleaned = str(text or "").strip()
    if not cleaned:
        raise checks.InputError("Enter your name so overrides and grants say who made them.")
    if len(cleaned) > MAX_INSTRUCTOR_NAME:
        raise checks.InputError(f"Keep your name under {MAX_INSTRUCTOR_NAME} characters.")
    if not checks.HANDLE_RE.match(cleaned):
        raise checks.InputError("Use letters, digits, spaces, dots, dashes or underscores in your name.")
    return cleaned


def extra_minutes_entry(value: object) -> float:
    """Minutes of extra time: a finite number from 1 to 240."""
    # No ±1e12 bound here: any finite number past the cap gets the cap's own message (1e308 included).
    minutes = checks._finite(value, "the extra time", limit=math.inf)  # noqa: SLF001 - the shared number check
    if minutes < MIN_EXTRA_MIN:
        raise checks.InputError(f"Extra time must be at least {MIN_EXTRA_MIN} minute (it cannot take time away).")
    if minutes > MAX_EXTRA_MIN:
        raise checks.InputError(f"Extra time is capped at {MAX_EXTRA_MIN} minutes per grant.")
    return minutes


def override_skill(store: AttemptStore, attempt: Attempt, loaded: LoadedDrill, skill_id: str, level: str,
                   comment: object, instructor: str) -> None:
    """Append an instructor score; the comment is required and checked before anything is stored."""
    if skill_id not in {s.id for s in loaded.drill.rubric}:
        raise checks.InputError("Pick one of the drill's skills.")
    if level not in LEVEL_VALUE:
        raise checks.InputError("Pick Strong, OK or Weak.")
    reason = checks.reason_entry(comment, required=True)
    name = instructor_name_entry(instructor)
    store.add_rubric_score(attempt.id, skill_id, level, scorer="instructor", scorer_name=name, reason=reason)


def check_grantable(attempt: Attempt) -> None:
    """Raise InputError when the attempt cannot be given more time (it is already finished)."""
    if attempt.finished_at is not None:
        raise checks.InputError("This attempt is already finished, so extra time would change nothing; "
                                "nothing was granted.")


def grant_extra_time(store: AttemptStore, attempt: Attempt, minutes: object, instructor: str,
                     reason: object = "") -> float:
    """Check the minutes, the name and the attempt as stored now (the candidate may have finished since
    the board loaded), then append one grant; returns the minutes granted."""
    clean = extra_minutes_entry(minutes)
    name = instructor_name_entry(instructor)
    current = store.attempt_by_id(attempt.id)
    if current is None:
        raise checks.InputError("That attempt no longer exists; nothing was granted.")
    check_grantable(current)
    store.grant_time(attempt.id, clean * 60, granted_by=name, reason=checks.reason_entry(reason, required=False))
    return clean
