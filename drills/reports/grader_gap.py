"""The grader gap: how candidates' self-scores compare with their instructors' wherever both scored a
skill on one attempt, and how two instructors agree when both scored the same skill.

Levels are compared as steps (weak 0, ok 1, strong 2); each scorer's latest row per (attempt, skill) counts.
"""
from __future__ import annotations

import pandas as pd

from drills.reports import source
from drills.reports.aggregates import LEVEL_VALUE
from drills.reports.source import Filters, with_ctes
from drills.store import AttemptStore

_STEP = "CASE level " + " ".join(f"WHEN '{k}' THEN {v}" for k, v in LEVEL_VALUE.items()) + " END"

_LATEST = (f"""
        latest AS (
            SELECT s.attempt_id, s.skill_id, s.scorer, s.scorer_name,
                   arg_max(s.level, (s.scored_at, s.id)) AS level, MAX(s.scored_at) AS scored_at
            FROM rubric_scores s WHERE s.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        ),
        stepped AS (SELECT *, {_STEP} AS step FROM latest),
        pairs AS (   -- the self-score beside the instructor score that counts (the latest instructor's)
            SELECT me.attempt_id, me.skill_id, me.level AS self_level, me.step AS self_step,
                   arg_max(them.level, them.scored_at) AS instructor_level,
                   arg_max(them.step, them.scored_at) AS instructor_step
            FROM stepped me JOIN stepped them USING (attempt_id, skill_id)
            WHERE me.scorer = 'self' AND them.scorer = 'instructor'
            GROUP BY ALL
        )""", [])

_SUMMARY = """
        SELECT {group}, COUNT(*) AS pairs, AVG(instructor_step - self_step) AS mean_gap,
               AVG((instructor_step = self_step)::INTEGER) AS agree,
               AVG((self_step > instructor_step)::INTEGER) AS self_higher,
               AVG((self_step < instructor_step)::INTEGER) AS self_lower
        FROM pairs JOIN att USING (attempt_id) GROUP BY {group} ORDER BY {group}"""


def gap_by_skill(store: AttemptStore, filters: Filters) -> pd.DataFrame:
    """Per skill: pairs of (self, instructor) scores, the mean gap in level steps (negative: the candidate
    rated themselves higher), and the shares that agree, rate themselves higher, or lower."""
    head, params = with_ctes(filters.sql(), _LATEST)
    return source.frame(store, head + _SUMMARY.format(group="skill_id"), params)


def gap_by_candidate(store: AttemptStore, filters: Filters) -> pd.DataFrame:
    """The same per candidate, over every skill of every attempt where both scored."""
    head, params = with_ctes(filters.sql(), _LATEST)
    return source.frame(store, head + _SUMMARY.format(group="candidate_id, handle, cohort"), params)


def gap_pairs(store: AttemptStore, filters: Filters) -> pd.DataFrame:
    """Every (attempt, skill) both scored: the rows behind the summaries (the export)."""
    head, params = with_ctes(filters.sql(), _LATEST)
    return source.frame(store, head + """
        SELECT att.attempt_id, att.handle, att.cohort, p.skill_id, p.self_level, p.instructor_level,
               p.instructor_step - p.self_step AS gap
        FROM pairs p JOIN att USING (attempt_id) ORDER BY att.handle, att.cohort, att.attempt_id, p.skill_id""", params)


_INSTRUCTORS = """,
        two AS (
            SELECT a.attempt_id, a.skill_id, a.scorer_name AS first_name, a.level AS first_level,
                   b.scorer_name AS second_name, b.level AS second_level, abs(a.step - b.step) AS apart
            FROM stepped a JOIN stepped b USING (attempt_id, skill_id)
            WHERE a.scorer = 'instructor' AND b.scorer = 'instructor' AND a.scorer_name < b.scorer_name
        )"""


def instructor_agreement(store: AttemptStore, filters: Filters) -> pd.DataFrame:
    """Per skill, where two instructors each scored it on one attempt: how many pairs, the share that
    agree, and the mean distance in level steps."""
    head, params = with_ctes(filters.sql(), _LATEST)
    return source.frame(store, head + _INSTRUCTORS + """
        SELECT skill_id, COUNT(*) AS pairs, AVG((apart = 0)::INTEGER) AS agree, AVG(apart) AS mean_apart
        FROM two GROUP BY skill_id ORDER BY skill_id""", params)


def instructor_disagreements(store: AttemptStore, filters: Filters) -> pd.DataFrame:
    """Each (attempt, skill) where two instructors gave different levels, with both levels."""
    head, params = with_ctes(filters.sql(), _LATEST)
    return source.frame(store, head + _INSTRUCTORS + """
        SELECT att.attempt_id, att.handle, att.cohort, t.skill_id, t.first_name, t.first_level, t.second_name,
               t.second_level
        FROM two t JOIN att USING (attempt_id) WHERE t.apart > 0
        ORDER BY att.handle, att.cohort, att.attempt_id, t.skill_id""", params)
