"""Extra-time grants: who may be given more time, and the grants an attempt already has.

No Streamlit here. The raw minutes are checked from the text the instructor typed, so an entry such as
`1e400` or `nan` is refused with a message instead of being clamped by a widget; a finished attempt gets
no more time. Writes go through drills.cohort.grant_extra_time; reads are parameterised SQL on the store.
"""
from __future__ import annotations

from dataclasses import dataclass

from drills import cohort
from drills.answers import InputError
from drills.store import Attempt, AttemptStore


@dataclass(frozen=True)
class Grant:
    granted_at: float
    granted_by: str
    minutes: float
    reason: str


def check_grantable(attempt: Attempt) -> None:
    """Raise InputError when the attempt cannot be given more time (it is already finished)."""
    if attempt.finished_at is not None:
        raise InputError("This attempt is already finished, so extra time would change nothing; "
                         "nothing was granted.")


def grant(store: AttemptStore, attempt: Attempt, minutes: object, instructor: str, reason: object = "") -> float:
    """Check the attempt and the raw minutes, then store one grant; returns the minutes granted."""
    check_grantable(attempt)
    return cohort.grant_extra_time(store, attempt, minutes, instructor, reason)


def grant_history(store: AttemptStore, attempt_id: int) -> list[Grant]:
    """The attempt's grants, oldest first."""
    rows = store.query(
        "SELECT granted_at, granted_by, seconds, reason FROM time_grants WHERE attempt_id = ? "
        "ORDER BY granted_at, id", [int(attempt_id)]).fetchall()
    return [Grant(float(at), str(by), float(seconds) / 60, str(reason or "")) for at, by, seconds, reason in rows]
