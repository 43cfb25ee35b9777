"""Extra-time grants already given to an attempt (granting is drills.cohort.grant_extra_time).

No Streamlit here; reads are parameterised SQL on the store.
"""
from __future__ import annotations

from dataclasses import dataclass

from drills.store import AttemptStore


@dataclass(frozen=True)
class Grant:
    granted_at: float
    granted_by: str
    minutes: float
    reason: str


def grant_history(store: AttemptStore, attempt_id: int) -> list[Grant]:
    """The attempt's grants, oldest first."""
    rows = store.query(
        "SELECT granted_at, granted_by, seconds, reason FROM time_grants WHERE attempt_id = ? "
        "ORDER BY granted_at, id", [int(attempt_id)]).fetchall()
    return [Grant(float(at), str(by), float(seconds) / 60, str(reason or "")) for at, by, seconds, reason in rows]
