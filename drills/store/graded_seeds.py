"""Each attempt's graded seed in the store: the seed its simulation questions are graded against, written
once (drills.disclosure draws it), as a mixin of StoreCore (same SQL for both backends)."""
from __future__ import annotations

from collections.abc import Iterable

from drills.store.contract import StorePart


# The graded seed of each attempt of a drill with simulation questions: drawn when the attempt starts, written
# once, so a reload or a restart grades against the same runs. Attempts from before were graded against seed 0,
# and keep it.
GRADED_SEEDS_MIGRATION = """
    CREATE TABLE graded_seeds (
        attempt_id BIGINT PRIMARY KEY,
        seed BIGINT NOT NULL
    );
    INSERT INTO graded_seeds (attempt_id, seed) SELECT id, 0 FROM attempts;
    """
# Derived: a grading key (drills.reports.grading_key) holds one set of rows per (variant, graded seed) its
# attempts drew, and answers meet the rows of theirs.
GRADING_KEY_SEEDS_MIGRATION = """
    ALTER TABLE grading_keys ADD COLUMN graded_seed BIGINT NOT NULL DEFAULT 0;
    """


class GradedSeedStore(StorePart):
    """The graded_seeds table (migration 46): one row per attempt, never changed once written."""

    def keep_graded_seed(self, attempt_id: int, seed: int) -> int:
        """Store `seed` as the attempt's graded seed unless it has one; returns the one it keeps (the first)."""
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            self._insert_new(cur, "graded_seeds", "attempt_id, seed", [attempt_id, seed], {"attempt_id": attempt_id})
            return cur.execute("SELECT seed FROM graded_seeds WHERE attempt_id = ?", [attempt_id]).fetchone()[0]

    def graded_seed(self, attempt_id: int) -> int | None:
        """The attempt's graded seed, or None when none was drawn (a drill without simulation questions)."""
        row = self._one("SELECT seed FROM graded_seeds WHERE attempt_id = ?", [attempt_id])
        return None if row is None else row[0]

    def graded_seeds(self, attempt_ids: Iterable[int]) -> dict[int, int]:
        """The graded seeds of those of `attempt_ids` that have one."""
        ids = sorted(set(attempt_ids))
        if not ids:
            return {}
        # One array parameter, not a placeholder per id: a live room's Close asks for every seat's at once, and
        # psycopg parsed a 500-placeholder query afresh each time (a new length is a new query to its cache).
        return dict(self._all("SELECT attempt_id, seed FROM graded_seeds WHERE attempt_id = ANY(?)", [ids]))
