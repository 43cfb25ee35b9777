"""The one way reports reach the store: the filtered attempts as a CTE, CTEs shared between reports,
and the only calls to the store's report query and derived-table rewrite.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import pandas as pd

from drills.store import AttemptStore


# An attempt's graded seed (drills.disclosure.graded_seed_of), 0 where none was drawn: a drill without simulation
# questions, or an attempt from before graded seeds. Answers meet the key's rows for their (variant, seed).
GRADED_SEED_JOIN = "LEFT JOIN graded_seeds gs ON gs.attempt_id = a.id"
GRADED_SEED = "COALESCE(gs.seed, 0)"


@dataclass(frozen=True)
class Filters:
    """What the instructor narrowed the board to; times are UNIX seconds on the attempt's start."""

    drill_id: str
    cohort: str | None = None          # None: every cohort; "": candidates who gave none
    since: float | None = None
    until: float | None = None

    def sql(self) -> tuple[str, list]:
        clauses, params = ["a.drill_id = ?"], [self.drill_id]
        for clause, value in (("c.cohort = ?", self.cohort), ("a.started_at >= ?", self.since),
                              ("a.started_at < ?", self.until)):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        text = f"""
        att AS (
            SELECT a.id AS attempt_id, a.candidate_id, c.handle, c.cohort, a.time_box_s, a.started_at, a.variant,
                   {GRADED_SEED} AS graded_seed
            FROM attempts a JOIN candidates c ON c.id = a.candidate_id {GRADED_SEED_JOIN}
            WHERE {' AND '.join(clauses)}
        )"""
        return text, params


def with_ctes(*ctes: tuple[str, list]) -> tuple[str, list]:
    params: list = []
    for _, p in ctes:
        params.extend(p)
    return "WITH " + ",".join(text for text, _ in ctes), params


# The score that counts per (attempt, skill): the latest instructor row, else the latest self row.
LEVELS = ("""
        levels AS (
            SELECT s.attempt_id, s.skill_id,
                   arg_max(s.level, (s.scorer = 'instructor', s.scored_at, s.id)) AS level,
                   bool_or(s.scorer = 'instructor') AS overridden,
                   arg_max(s.reason, (s.scorer = 'instructor', s.scored_at, s.id)) AS reason
            FROM rubric_scores s WHERE s.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        )""", [])


# -- the store calls: every report reads and rewrites through these -----------------------------
def frame(store: AttemptStore, sql: str, params: Iterable | None = None) -> pd.DataFrame:
    return store.query(sql, params).df()


def one(store: AttemptStore, sql: str, params: Iterable | None = None) -> tuple | None:
    return store.query(sql, params).fetchone()


def rows(store: AttemptStore, sql: str, params: Iterable | None = None) -> list[tuple]:
    return store.query(sql, params).fetchall()


def rewrite(store: AttemptStore, write: Callable) -> None:
    """Rewrite derived tables (grading keys, tallies) in one store transaction; `write(cursor)`."""
    store.refresh_derived(write)
