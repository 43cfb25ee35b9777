"""Time-box arithmetic: everything is computed from the stored start, the grants and the clock.

Nothing here keeps state, so a reload or a server restart changes no answer.
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
