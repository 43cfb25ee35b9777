"""Time-box arithmetic: everything is computed from the stored start, the grants and the clock.

Nothing here keeps state, so a reload or a server restart changes no answer. Time an outage of the store cost
an attempt is given back as a grant by SYSTEM_GRANTOR (outage_spans says which part of an outage is owed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone

from drills.schema import Drill
from drills.records import Attempt, Event


@dataclass(frozen=True)
class Clock:
    limit_s: float        # the time box plus any extra time granted
    elapsed_s: float      # since the attempt started (until it finished, if it has)
    remaining_s: float    # negative once the attempt runs over
    finished: bool

    @property
    def overtime_s(self) -> float:
        return max(0.0, -self.remaining_s)

    @property
    def over(self) -> bool:
        return self.remaining_s < 0


def clock_for(attempt: Attempt, now: float) -> Clock:
    end = attempt.finished_at if attempt.finished_at is not None else now
    elapsed = max(0.0, end - attempt.started_at)
    limit = attempt.time_box_s + attempt.extra_s
    return Clock(limit_s=limit, elapsed_s=elapsed, remaining_s=limit - elapsed,
                 finished=attempt.finished_at is not None)


# Who gives back the time an outage of the store cost: not an instructor, so the board says so.
SYSTEM_GRANTOR = "system"
# An outage shorter than this (one call cut, the next one fine) is not worth a line on anyone's timeline.
MIN_OUTAGE_CREDIT_S = 1.0


def outage_spans(started_at: float, finished_at: float | None, limit_s: float, down_at: float, up_at: float,
                 given: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The parts of the outage [down_at, up_at] this attempt is still owed: those it was running through
    (started, not finished, its time box not yet out when the outage began) and no earlier grant gave back.

    `given` holds the spans already given back, by any process: each process sees the outage begin and end at
    its own moments, so giving back only what no one has keeps the total the length of their union.
    """
    if started_at + limit_s <= down_at or (finished_at is not None and finished_at <= down_at):
        return []
    spans = [(max(down_at, started_at), min(up_at, finished_at) if finished_at is not None else up_at)]
    spans = [(a, b) for a, b in spans if b > a]   # started after it ended: nothing owed
    for low, high in sorted(given):
        spans = [(a, b) for start, end in spans for a, b in ((start, min(end, low)), (max(start, high), end))
                 if b > a]
    return spans


def outage_reason(low: float, high: float) -> str:
    """The grant's reason, as the board shows it (our words and the store's times only)."""
    return (f"The attempt store could not be reached from {format_utc(low)} to {format_utc(high)} UTC: "
            f"{format_duration(high - low)} given back.")


def format_duration(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    total = int(abs(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{secs:02d}"
    return f"{sign}{minutes:02d}:{secs:02d}"


@dataclass(frozen=True)
class PacePoint:
    part_id: str
    title: str
    planned_end_s: float   # cumulative suggested minutes, in seconds from the start


def pacing(drill: Drill) -> list[PacePoint]:
    total = 0.0
    out = []
    for part in drill.parts:
        total += part.minutes * 60
        out.append(PacePoint(part.id, part.title, total))
    return out


def planned_part(drill: Drill, elapsed_s: float) -> str:
    """Which part the suggested pacing says the candidate should be on by now."""
    for point in pacing(drill):
        if elapsed_s < point.planned_end_s:
            return point.part_id
    return drill.parts[-1].id


def time_per_part(events: list[Event], end_at: float) -> dict[str, float]:
    """Seconds spent on each part: from each 'opened' event to the next one (or the end)."""
    spent: dict[str, float] = {}
    opened = [(e.at, e.part_id) for e in events if e.kind == "opened" and e.part_id]
    for (at, part), nxt in zip(opened, opened[1:] + [(end_at, None)]):
        spent[part] = spent.get(part, 0.0) + max(0.0, min(nxt[0], end_at) - at)
    return spent


def format_utc(unix_seconds: float | None, *, seconds: bool = True) -> str:
    """A stored time as 'YYYY-MM-DD HH:MM[:SS]' in UTC; empty for a missing time."""
    if unix_seconds is None or (isinstance(unix_seconds, float) and math.isnan(unix_seconds)):
        return ""
    return datetime.fromtimestamp(float(unix_seconds), timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
