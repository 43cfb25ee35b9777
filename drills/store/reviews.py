"""Spaced review in the attempt store: the append-only review log and the schedule read from it.

A mixin of StoreCore (like drills.store.accounts and drills.store.live), so both backends share the SQL.
The FSRS scheduler stays outside: drills.review passes it in as `advance`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from drills.records import ReviewEntry, ReviewState
from drills.store.contract import StorePart

_REVIEW_COLUMNS = "handle, drill_id, question_id, attempt_id, variant, guess, rating, reason, card, due_at, reviewed_at"
_REVIEW_SELECT = """
    SELECT r.id, r.handle, r.drill_id, r.question_id, r.attempt_id, r.variant, r.guess, r.rating, r.reason, r.card,
           r.due_at, r.reviewed_at,
           (SELECT COUNT(*) FROM review_log n
            WHERE n.handle = r.handle AND n.drill_id = r.drill_id AND n.question_id = r.question_id)
    FROM review_log r
    WHERE r.handle = ? AND r.id = (SELECT MAX(l.id) FROM review_log l
                                   WHERE l.handle = r.handle AND l.drill_id = r.drill_id AND l.question_id = r.question_id)
"""
_LATEST_CARD = ("SELECT id, card FROM review_log WHERE handle = ? AND drill_id = ? AND question_id = ? "
                "ORDER BY id DESC LIMIT 1")

# The scheduler, passed in by drills.review so the store needs no FSRS: (card JSON or None for a new item,
# rating, when) -> (the card JSON after that review, when it is due next).
Advance = Callable[[str | None, int, float], tuple[str, float]]


class ReviewStore(StorePart):
    """The spaced-review methods of StoreCore."""

    def schedule_reviews(self, attempt_id: int, handle: str, entries: Iterable[ReviewEntry], advance: Advance) -> int:
        """Put a finished attempt's review items on `handle`'s schedule, the attempt counting as one review of each.

        An item the attempt already scheduled is left alone, so finishing twice or a reload adds nothing.
        Returns how many rows were added.
        """
        entries = list(entries)
        if not entries:
            return 0
        now = self.clock()
        added = 0
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            done = {row[0] for row in cur.execute("SELECT question_id FROM review_log WHERE attempt_id = ?",
                                                  [attempt_id]).fetchall()}
            for entry in entries:
                if entry.question_id in done:
                    continue
                done.add(entry.question_id)
                at = now if entry.at is None else entry.at
                latest = cur.execute(_LATEST_CARD, [handle, entry.drill_id, entry.question_id]).fetchone()
                card, due_at = advance(latest[1] if latest else None, entry.rating, at)
                cur.execute(f"INSERT INTO review_log ({_REVIEW_COLUMNS}) VALUES ({', '.join(['?'] * 11)})",
                            [handle, entry.drill_id, entry.question_id, attempt_id, entry.variant, entry.guess,
                             entry.rating, entry.reason, card, due_at, at])
                added += 1
        return added

    def record_review(self, handle: str, drill_id: str, question_id: str, *, based_on: int, variant: int,
                      guess: float | None, rating: int, advance: Advance) -> ReviewState | None:
        """Append one review answered on the review page; the card moves on from the item's latest row.

        `based_on` is the id of the row the candidate was shown: if the item has moved on since (another tab
        reviewed it first), nothing is stored and None comes back.
        """
        now = self.clock()
        with self._transaction() as cur:
            # Row ids come from the one sequence attempts use, so no attempt shares this lock key.
            self._hold_attempt(cur, based_on)
            latest = cur.execute(_LATEST_CARD, [handle, drill_id, question_id]).fetchone()
            if latest is None or latest[0] != based_on:
                return None
            card, due_at = advance(latest[1], rating, now)
            new_id = cur.execute(
                f"INSERT INTO review_log ({_REVIEW_COLUMNS}) VALUES ({', '.join(['?'] * 11)}) RETURNING id",
                [handle, drill_id, question_id, None, variant, guess, rating, "", card, due_at, now]).fetchone()[0]
        return next(s for s in self.review_items(handle) if s.id == new_id)

    def review_items(self, handle: str) -> list[ReviewState]:
        """Every item on `handle`'s review schedule as its latest row leaves it, soonest due first."""
        rows = self._all(_REVIEW_SELECT + " ORDER BY r.due_at, r.id", [handle])
        return [ReviewState(*row) for row in rows]

    def due_reviews(self, handle: str, at: float | None = None) -> list[ReviewState]:
        """The items due by `at` (default: now), longest overdue first."""
        at = self.clock() if at is None else at
        rows = self._all(_REVIEW_SELECT + " AND r.due_at <= ? ORDER BY r.due_at, r.id", [handle, at])
        return [ReviewState(*row) for row in rows]

    def count_due(self, handle: str, at: float | None = None) -> int:
        at = self.clock() if at is None else at
        return int(self._one(f"SELECT COUNT(*) FROM ({_REVIEW_SELECT} AND r.due_at <= ?) due", [handle, at])[0])

