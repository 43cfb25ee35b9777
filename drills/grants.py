"""Extra-time grants: who may be given more time, and the grants an attempt already has.

No Streamlit here. The raw minutes are checked from the text the instructor typed, so an entry such as
`1e400` or `nan` is refused with a message instead of being clamped by a widget; a finished attempt gets
no more time. Writes go through drills.cohort.grant_extra_time; reads are parameterised SQL on the store.
"""
from __future__ import annotations

from dataclasses import dataclass

from drills import cohort
from drills.store import Attempt, AttemptStore


@dataclass(frozen=True)
class Grant:
    granted_at: float
    granted_by: str
    minutes: float
    reason: str


def grant(store: AttemptStore, attempt: Attempt, minutes: object, instructor: str, reason: object = "") -> float:
    """Check the attempt and the raw minutes, then store one grant; returns the minutes granted."""
    return cohort.grant_extra_time(store, attempt, minutes, instructor, reason)


def grant_history(store: AttemptStore, attempt_id: int) -> list[Grant]:
    """The attempt's grants, oldest first."""
    rows = store.query(
        "SELECT granted_at, granted_by, seconds, reason FROM time_grants WHERE attempt_id = ? "
        "ORDER BY granted_at, id", [int(attempt_id)]).fetchall()
    return [Grant(float(at), str(by), float(seconds) / 60, str(reason or "")) for at, by, seconds, reason in rows]
