"""An attempt's timeline in the store: the events a candidate leaves (opened, hints, finished), the graded
hints and the time an outage of the store gave back, as a mixin of StoreCore (same SQL for both backends;
the plumbing comes from StoreCore)."""
from __future__ import annotations

import json
from collections.abc import Mapping

from drills.records import Event, EventKind
from drills.store.contract import StorePart
from drills.timebox import MIN_OUTAGE_CREDIT_S, SYSTEM_GRANTOR, outage_reason, outage_spans

FINISHED_SQL = "SELECT 1 FROM attempt_events WHERE attempt_id = ? AND kind = 'finished' LIMIT 1"

# Attempts started before an outage ended, not finished before it began, and with time left when it began.
_RUNNING_THROUGH_SQL = """
    SELECT id, started_at, finished_at, limit_s FROM (
        SELECT a.id, a.started_at,
               (SELECT MIN(e.happened_at) FROM attempt_events e WHERE e.attempt_id = a.id AND e.kind = 'finished')
                   AS finished_at,
               a.time_box_s + COALESCE((SELECT SUM(g.seconds) FROM time_grants g WHERE g.attempt_id = a.id), 0)
                   AS limit_s
        FROM attempts a WHERE a.started_at < ?) running
    WHERE (finished_at IS NULL OR finished_at > ?) AND started_at + limit_s > ?
    ORDER BY id
"""


class TimelineStore(StorePart):
    """Hints opened, events logged and outages given back."""

    # -- time an outage cost -----------------------------------------------------------
    def give_back_outage(self, down_at: float, up_at: float) -> int:
        """Give every attempt that was running while the store could not be reached (down_at to up_at) the
        time it lost, as grants by SYSTEM_GRANTOR; returns how many. Each span given back is kept in the grant's
        event, and each attempt is held while its spans are read, so the same outage seen by several processes
        (or given back twice) adds only what no one has given yet."""
        granted = 0
        with self._transaction() as cur:
            for attempt_id, started_at, finished_at, limit_s in cur.execute(_RUNNING_THROUGH_SQL,
                                                                            [up_at, down_at, down_at]).fetchall():
                self._hold_attempt(cur, attempt_id)
                given = [(float(d["from"]), float(d["to"])) for (raw,) in cur.execute(
                    "SELECT detail FROM attempt_events WHERE attempt_id = ? AND kind = 'extra_time'",
                    [attempt_id]).fetchall() if "from" in (d := json.loads(raw))]
                for low, high in outage_spans(started_at, finished_at, limit_s, down_at, up_at, given):
                    if high - low < MIN_OUTAGE_CREDIT_S:
                        continue
                    cur.execute("INSERT INTO time_grants (attempt_id, seconds, granted_by, reason, granted_at) "
                                "VALUES (?, ?, ?, ?, ?)",
                                [attempt_id, high - low, SYSTEM_GRANTOR, outage_reason(low, high), up_at])
                    cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) "
                                "VALUES (?, ?, 'extra_time', ?)",
                                [attempt_id, up_at, json.dumps({"seconds": high - low, "by": SYSTEM_GRANTOR,
                                                                "from": low, "to": high})])
                    granted += 1
        return granted

    # -- graded hints ------------------------------------------------------------------
    def open_hint(self, attempt_id: int, question_id: str, part_id: str, index: int) -> bool:
        """Record that hint `index` of a question was opened; True the first time, before its lock-in.

        Opening it again, or after the question is locked, records nothing (and so costs nothing).
        A finished attempt raises AttemptFinished.
        """
        with self._transaction() as cur:
            self._guard(cur, attempt_id)
            if index in self._hints_opened(cur, attempt_id).get(question_id, set()):
                return False
            if cur.execute("SELECT 1 FROM answers WHERE attempt_id = ? AND question_id = ?",
                           [attempt_id, question_id]).fetchone() is not None:
                return False
            cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) "
                        "VALUES (?, ?, ?, ?, ?)", [attempt_id, self.clock(), EventKind.HINT_OPENED.value, part_id,
                                                   json.dumps({"question": question_id, "hint": index})])
        return True

    def hints_opened(self, attempt_id: int) -> dict[str, set[int]]:
        """question id -> the indexes of its hints opened so far."""
        with self._reading() as cur:
            return self._hints_opened(cur, attempt_id)

    @staticmethod
    def _hints_opened(cur, attempt_id: int) -> dict[str, set[int]]:
        opened: dict[str, set[int]] = {}
        for (detail,) in cur.execute("SELECT detail FROM attempt_events WHERE attempt_id = ? AND kind = ?",
                                     [attempt_id, EventKind.HINT_OPENED.value]).fetchall():
            data = json.loads(detail)
            opened.setdefault(data["question"], set()).add(int(data["hint"]))
        return opened

    def log_event(self, attempt_id: int, kind: str, part_id: str | None = None,
                  detail: Mapping[str, object] | None = None) -> bool:
        """Append a candidate's event; a finished attempt gains none (False), only instructor actions.

        One statement: the finished check and the insert together (as atomic as the two were in one transaction)."""
        with self._transaction() as cur:
            added = cur.execute(
                "INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) SELECT ?, ?, ?, ?, ? "
                f"WHERE NOT EXISTS ({FINISHED_SQL}) RETURNING id",
                [attempt_id, self.clock(), kind, part_id, json.dumps(dict(detail or {})), attempt_id]).fetchone()
        return added is not None

    def events(self, attempt_id: int) -> list[Event]:
        rows = self._all(
            "SELECT happened_at, kind, part_id, detail FROM attempt_events WHERE attempt_id = ? "
            "ORDER BY happened_at, id", [attempt_id])
        return [Event(at, kind, part, json.loads(detail)) for at, kind, part, detail in rows]

    def last_opened_part(self, attempt_id: int) -> str | None:
        """The part the candidate opened last, where a resumed attempt picks up."""
        row = self._one(
            "SELECT part_id FROM attempt_events WHERE attempt_id = ? AND kind = 'opened' "
            "ORDER BY happened_at DESC, id DESC LIMIT 1", [attempt_id])
        return row[0] if row else None
