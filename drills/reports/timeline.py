"""One attempt in detail for the instructor: its events in order with early reveals flagged, the
instructor's overrides, and the extra time granted (granting is drills.instructor_actions).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Sequence

from drills.disclosure import FOLLOWUP
from drills.loader import LoadedDrill
from drills.records import Event, EventKind, LockedAnswer, RubricScore
from drills.reports import source
from drills.schema import section_title
from drills.store import AttemptStore


@dataclass(frozen=True)
class TimelineRow:
    at: float
    kind: str
    part_id: str | None
    what: str
    early: bool           # flagged: a reveal before its questions were locked or skipped, or a simulation
                          # opened while questions it answers were still open
    flag: str = ""        # why it is flagged, in a few words


def timeline(loaded: LoadedDrill, events: Sequence[Event], answers: dict[str, LockedAnswer],
             question_label: Callable[[str], str] | None = None) -> list[TimelineRow]:
    """Each event of an attempt in order, flagging reveals that came before their questions' lock-ins and
    simulations opened while questions they answer were open.

    Questions are named by `question_label(question_id)` (by default the prompt in the written numbers) and
    skills and levels by the drill's own names: an instructor reads the drill, not its file's ids.
    """
    drill = loaded.drill
    label = question_label or (lambda question_id: loaded.text(drill.question(question_id).prompt))

    def question(question_id: object) -> str:
        try:
            return label(str(question_id))
        except KeyError:      # a question since removed from the drill file: its id is all there is
            return str(question_id)

    def skill(skill_id: object, level: object) -> str:
        try:
            return f"{drill.skill(str(skill_id)).name}: {drill.level_label(str(level))}"
        except (KeyError, AttributeError):
            return f"{skill_id}: {level}"

    rows = []
    for e in events:
        detail = dict(e.detail)
        early = False
        flag = ""
        if e.kind in ("locked", "skipped"):
            what = question(detail.get("question", ""))
        elif e.kind == "revealed":
            section = str(detail.get("section", ""))
            what = section
            try:
                part = drill.part(e.part_id or "")
            except KeyError:
                part = None
            if part is not None:
                what = next((section_title(r) for r in part.reveal if r.stage == section),
                            "Follow-up" if section == FOLLOWUP else section)
                gating = part.followup.questions if section == FOLLOWUP and part.followup else part.questions
                early = any(q.id not in answers or answers[q.id].locked_at > e.at for q in gating)
                flag = "revealed before lock-in" if early else ""
        elif e.kind == EventKind.SIM_OPENED:
            questions = [str(q) for q in detail.get("questions", [])]
            what = f"{detail.get('page', '')} while open: {'; '.join(question(q) for q in questions)}"
            early = bool(questions)
            flag = "simulation opened before lock-in" if early else ""
        elif e.kind == EventKind.HINT_OPENED:
            what = f"hint {int(detail.get('hint', 0)) + 1} of {question(detail.get('question', ''))}"
        elif e.kind == "scored":
            what = f"{skill(detail.get('skill', ''), detail.get('level', ''))} ({detail.get('scorer', '')})"
        elif e.kind == "extra_time":
            what = f"+{float(detail.get('seconds', 0)) / 60:g} min by {detail.get('by', '')}"
        else:
            what = json.dumps(detail) if detail else ""
        rows.append(TimelineRow(e.at, e.kind, e.part_id, what, early, flag))
    return rows


def override_history(history: Sequence[RubricScore]) -> list[RubricScore]:
    return [row for row in history if row.scorer == "instructor"]



@dataclass(frozen=True)
class Grant:
    granted_at: float
    granted_by: str
    minutes: float
    reason: str


def grant_history(store: AttemptStore, attempt_id: int) -> list[Grant]:
    """The attempt's grants, oldest first."""
    rows = source.rows(
        store, "SELECT granted_at, granted_by, seconds, reason FROM time_grants WHERE attempt_id = ? "
               "ORDER BY granted_at, id", [int(attempt_id)])
    return [Grant(float(at), str(by), float(seconds) / 60, str(reason or "")) for at, by, seconds, reason in rows]
