"""An attempt's view in one statement: its answers, reveals, note ratings, graded hints, finish, extra time, the
part opened last and whether it is a live seat, read with one round trip, as a mixin of StoreCore (same SQL for
both backends).

A page run reads it once (attempt_records); a lock-in reads it inside its own write transaction, where it is
also the finished check, and returns it with the answer it stored (StoreCore.lock_in), so nothing is reread.
"""
from __future__ import annotations

import json

from drills.records import AttemptRecords, EventKind, LockedAnswer
from drills.store.contract import StorePart

# One row per answer, reveal, rating and hint opened, and one for the attempt: a tag, five texts, five numbers,
# a flag and an order. Columns of one kind in every branch, so both databases read it as one relation.
_RECORDS_SQL = f"""
    SELECT 'answer', question_id, part_id, kind, choice, notes, value, low, high, locked_at, hint_cost, skipped,
           CAST(0 AS BIGINT)
    FROM answers WHERE attempt_id = ?
    UNION ALL
    SELECT 'reveal', part_id, section, NULL, NULL, NULL, revealed_at, NULL, NULL, NULL, NULL, NULL, CAST(0 AS BIGINT)
    FROM reveals WHERE attempt_id = ?
    UNION ALL
    SELECT 'rating', question_id, rating, NULL, NULL, NULL, rated_at, NULL, NULL, NULL, NULL, NULL, id
    FROM note_ratings WHERE attempt_id = ?
    UNION ALL
    SELECT 'hint', detail, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, id
    FROM attempt_events WHERE attempt_id = ? AND kind = '{EventKind.HINT_OPENED.value}'
    UNION ALL
    SELECT 'attempt',
           (SELECT e.part_id FROM attempt_events e WHERE e.attempt_id = ? AND e.kind = '{EventKind.OPENED.value}'
            ORDER BY e.happened_at DESC, e.id DESC LIMIT 1), NULL, NULL, NULL, NULL,
           (SELECT MIN(e.happened_at) FROM attempt_events e
            WHERE e.attempt_id = ? AND e.kind = '{EventKind.FINISHED.value}'),
           COALESCE((SELECT SUM(g.seconds) FROM time_grants g WHERE g.attempt_id = ?), 0), NULL, NULL, NULL,
           EXISTS (SELECT 1 FROM live_presence p WHERE p.attempt_id = ?), CAST(0 AS BIGINT)
"""
_PARAMETERS = _RECORDS_SQL.count("?")


def records_of(rows, attempt_id: int) -> AttemptRecords:
    """The records _RECORDS_SQL's rows describe (in any order)."""
    answers, reveals, ratings, hints = [], {}, [], {}
    last_opened, finished_at, extra_s, live_seat = None, None, 0.0, False
    for tag, t1, t2, t3, t4, t5, x1, x2, x3, x4, x5, flag, order in rows:
        if tag == "answer":
            answers.append(LockedAnswer(attempt_id, t1, t2, t3, x1, x2, x3, t4, t5, bool(flag), x4, x5))
        elif tag == "reveal":
            reveals[(t1, t2)] = x1
        elif tag == "rating":
            ratings.append((x1, order, t1, t2))
        elif tag == "hint":
            detail = json.loads(t1)
            hints.setdefault(detail["question"], set()).add(int(detail["hint"]))
        else:
            last_opened, finished_at, extra_s, live_seat = t1, x1, float(x2), bool(flag)
    answers.sort(key=lambda a: a.locked_at)
    return AttemptRecords(
        answers={a.question_id: a for a in answers}, reveals=reveals,
        note_ratings={question: rating for _, _, question, rating in sorted(ratings)},   # the latest wins
        hints={question: frozenset(opened) for question, opened in hints.items()},
        finished_at=finished_at, extra_s=extra_s, last_opened=last_opened, live_seat=live_seat)


class AttemptViewStore(StorePart):
    """An attempt's records in one round trip."""

    def attempt_records(self, attempt_id: int) -> AttemptRecords:
        """Everything a page run shows of the attempt that can change, in one statement."""
        with self._reading() as cur:
            return self._attempt_records(cur, attempt_id)

    @staticmethod
    def _attempt_records(cur, attempt_id: int) -> AttemptRecords:
        """The records as `cur` sees them (in a write transaction: as of its writes so far)."""
        return records_of(cur.execute(_RECORDS_SQL, [attempt_id] * _PARAMETERS).fetchall(), attempt_id)
