"""The instructor board's reports over a filtered cohort: counts, attempts and the leaderboard, skills,
questions, time, calibration; parameterised SQL read through drills.reports.source, returned as DataFrames.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from drills.reports import source
from drills.reports.grading_key import KEY_JOIN, DrillKey, key_ctes
from drills.reports.source import LEVELS, Filters, with_ctes
from drills.reports.tallies import refresh_tallies
from drills.store import AttemptStore

LEVEL_VALUE = {"weak": 0, "ok": 1, "strong": 2}

_TIMING = ("""
        grants AS (
            SELECT g.attempt_id, SUM(g.seconds) AS extra_s FROM time_grants g
            WHERE g.attempt_id IN (SELECT attempt_id FROM att) GROUP BY g.attempt_id
        ),
        finished AS (
            SELECT e.attempt_id, MIN(e.happened_at) AS finished_at FROM attempt_events e
            WHERE e.kind = 'finished' AND e.attempt_id IN (SELECT attempt_id FROM att) GROUP BY e.attempt_id
        )""", [])

# The attempt whose skills count for a candidate: the latest finished attempt with skill scores, else (nothing
# finished and scored) the latest scored one. A retake just started, with no scores yet, hides nothing.
# Needs LEVELS before it.
_SKILL_ATTEMPT = ("""
        skill_attempt AS (
            SELECT att.candidate_id,
                   arg_max(att.attempt_id, (EXISTS (SELECT 1 FROM attempt_events e WHERE e.attempt_id = att.attempt_id
                                                    AND e.kind = 'finished'), att.started_at, att.attempt_id))
                       AS attempt_id
            FROM att WHERE att.attempt_id IN (SELECT attempt_id FROM levels)
            GROUP BY att.candidate_id
        )""", [])


# -- cheap things the page needs first -------------------------------------------------------
def data_version(store: AttemptStore) -> tuple[int, ...]:
    """Changes whenever anything is written: every write logs an event except note ratings and graded seeds
    (each written once per attempt, so their count says whether one was added).

    Row counts ride along with the highest ids so rows loaded with explicit ids count too.
    """
    row = source.one(store, "SELECT (SELECT COALESCE(MAX(id), 0) FROM attempt_events), "
                            "(SELECT COUNT(*) FROM attempt_events), "
                            "(SELECT COALESCE(MAX(id), 0) FROM note_ratings), (SELECT COUNT(*) FROM note_ratings), "
                            "(SELECT COUNT(*) FROM graded_seeds)")
    return tuple(int(v) for v in row)


def drills_by_activity(store: AttemptStore) -> list[str]:
    """Drill ids that have attempts, the most recently attempted first."""
    return [r[0] for r in source.rows(
        store, "SELECT drill_id FROM attempts GROUP BY drill_id ORDER BY MAX(started_at) DESC, drill_id")]


def variants_drawn(store: AttemptStore, drill_id: str) -> list[tuple[int, int]]:
    """The (variant, graded seed) pairs the drill's attempts drew, under any filters: the grading key needs no
    others."""
    return [tuple(r) for r in source.rows(
        store, f"SELECT DISTINCT a.variant, {source.GRADED_SEED} FROM attempts a {source.GRADED_SEED_JOIN} "
               "WHERE a.drill_id = ? ORDER BY 1, 2", [drill_id])]


def cohorts(store: AttemptStore, drill_id: str) -> list[str]:
    return [r[0] for r in source.rows(
        store, "SELECT DISTINCT c.cohort FROM attempts a JOIN candidates c ON c.id = a.candidate_id "
               "WHERE a.drill_id = ? ORDER BY 1", [drill_id])]


def date_bounds(store: AttemptStore, drill_id: str) -> tuple[float, float] | None:
    row = source.one(store, "SELECT MIN(started_at), MAX(started_at) FROM attempts WHERE drill_id = ?",
                     [drill_id])
    return None if row[0] is None else (float(row[0]), float(row[1]))


@dataclass(frozen=True)
class Counts:
    candidates: int
    started: int
    finished: int


def counts(store: AttemptStore, filters: Filters) -> Counts:
    head, params = with_ctes(filters.sql())
    row = source.one(store, head + """
        SELECT COUNT(DISTINCT att.candidate_id), COUNT(*),
               COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM attempt_events e
                                              WHERE e.attempt_id = att.attempt_id AND e.kind = 'finished'))
        FROM att""", params)
    return Counts(*(int(v) for v in row))


# -- attempts and the leaderboard ------------------------------------------------------------
def attempt_summary(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """One row per attempt: score, Strong count, time used against the box, ranges held, and whether it was
    a seat in a live session (its 'live' event).

    Time used runs to the finish, or for an unfinished attempt to its last lock-in.
    """
    refresh_tallies(store, key)
    head, params = with_ctes(filters.sql(), _TIMING)
    sql = head + """
        SELECT att.attempt_id, att.candidate_id, att.handle, att.cohort, att.variant, att.started_at, f.finished_at,
               COALESCE(t.earned, 0) AS earned, 100.0 * COALESCE(t.earned, 0) / ? AS score_pct,
               COALESCE(t.answered, 0) AS answered, COALESCE(t.strong, 0) AS strong,
               COALESCE(t.overridden, 0) AS overridden,
               GREATEST(0, COALESCE(f.finished_at, t.last_at, att.started_at) - att.started_at) AS used_s,
               att.time_box_s + COALESCE(g.extra_s, 0) AS limit_s, COALESCE(g.extra_s, 0) AS extra_s,
               COALESCE(t.ranges, 0) AS ranges, COALESCE(t.hits, 0) AS hits,
               EXISTS (SELECT 1 FROM attempt_events e WHERE e.attempt_id = att.attempt_id AND e.kind = 'live') AS live
        FROM att LEFT JOIN finished f USING (attempt_id) LEFT JOIN grants g USING (attempt_id)
        LEFT JOIN (SELECT * FROM attempt_tallies WHERE key_id = ?) t USING (attempt_id)
        ORDER BY att.started_at, att.attempt_id"""
    return source.frame(store, sql, params + [max(1, key.possible), key.fingerprint])


def leaderboard_from(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per candidate from attempt_summary: their best attempt (ties: the latest), calibration over all."""
    columns = ["candidate_id", "handle", "cohort", "attempts", "finished", "attempt_id", "variant", "score_pct", "strong",
               "overridden", "used_min", "limit_min", "ranges", "hits", "hit_rate", "live"]
    if summary.empty:
        return pd.DataFrame(columns=columns)
    ordered = summary.sort_values(["candidate_id", "score_pct", "started_at", "attempt_id"])
    best = ordered.groupby("candidate_id", sort=False).tail(1).set_index("candidate_id")
    per = summary.groupby("candidate_id").agg(attempts=("attempt_id", "size"),
                                              finished=("finished_at", "count"),
                                              ranges=("ranges", "sum"), hits=("hits", "sum"))
    out = best[["handle", "cohort", "attempt_id", "variant", "score_pct", "strong", "overridden", "live"]].join(per)
    out["used_min"] = best["used_s"] / 60
    out["limit_min"] = best["limit_s"] / 60
    out["hit_rate"] = (out["hits"] / out["ranges"]).where(out["ranges"] > 0)
    out = out.reset_index().sort_values(["score_pct", "strong", "handle", "cohort"],
                                        ascending=[False, False, True, True], kind="stable")
    return out[columns].reset_index(drop=True)


def leaderboard(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    return leaderboard_from(attempt_summary(store, key, filters))


# -- skills ---------------------------------------------------------------------------------
def skill_levels(store: AttemptStore, key: DrillKey, filters: Filters,
                 candidate_ids: Sequence[int] | None = None) -> pd.DataFrame:
    """The level that counts per (candidate, skill) on each candidate's skill attempt (`_SKILL_ATTEMPT`: the
    latest finished attempt with scores), optionally for some candidates only."""
    head, params = with_ctes(filters.sql(), LEVELS, _SKILL_ATTEMPT)
    only = ""
    if candidate_ids is not None:
        only = " WHERE att.candidate_id IN (SELECT unnest(?::BIGINT[]))"
        params = params + [[int(c) for c in candidate_ids]]
    sql = head + f"""
        SELECT att.candidate_id, att.handle, att.cohort, att.attempt_id, l.skill_id, l.level, l.overridden,
               CASE WHEN l.overridden THEN l.reason ELSE '' END AS reason
        FROM skill_attempt JOIN att USING (attempt_id) JOIN levels l USING (attempt_id){only}
        ORDER BY att.handle, att.cohort, l.skill_id"""
    return source.frame(store, sql, params)


def skill_shares(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per skill, how many candidates' skill attempts sit at each level (the heatmap's summary for big cohorts)."""
    head, params = with_ctes(filters.sql(), LEVELS, _SKILL_ATTEMPT)
    sql = head + """
        SELECT l.skill_id, COUNT(*) FILTER (WHERE l.level = 'strong') AS strong,
               COUNT(*) FILTER (WHERE l.level = 'ok') AS ok, COUNT(*) FILTER (WHERE l.level = 'weak') AS weak,
               COUNT(*) FILTER (WHERE l.overridden) AS overridden
        FROM skill_attempt JOIN levels l USING (attempt_id) GROUP BY l.skill_id ORDER BY l.skill_id"""
    return source.frame(store, sql, params)


# -- questions ------------------------------------------------------------------------------
# Per graded numeric question, in one pass: skips and guesses side by side (FILTER), error quantiles
# over the guesses; truths of zero are kept out of the ratios.
_QUESTION_STATS = f"""
        SELECT an.question_id, ANY_VALUE(k.position) AS position,
               COUNT(*) FILTER (WHERE NOT an.skipped) AS guesses, COUNT(*) FILTER (WHERE an.skipped) AS skipped,
               AVG(CASE WHEN abs(an.value - k.truth) <= k.full_band THEN 1.0 ELSE 0.0 END)
                   FILTER (WHERE NOT an.skipped) AS in_tolerance,
               AVG((an.value - k.truth) / abs(k.truth)) FILTER (WHERE NOT an.skipped) AS mean_error,
               quantile_cont(abs(an.value - k.truth) / abs(k.truth), 0.5)
                   FILTER (WHERE NOT an.skipped) AS median_abs_error,
               quantile_cont(100 * an.value / k.truth, [0.05, 0.25, 0.5, 0.75, 0.95])
                   FILTER (WHERE NOT an.skipped) AS pct_quantiles,
               COUNT(an.low) FILTER (WHERE NOT an.skipped) AS ranges,
               AVG((an.low <= k.truth AND k.truth <= an.high)::INTEGER) FILTER (WHERE NOT an.skipped) AS range_hit_rate
        FROM answers an JOIN att USING (attempt_id) {KEY_JOIN}
        WHERE k.graded_numeric AND k.truth <> 0
        GROUP BY an.question_id HAVING COUNT(*) FILTER (WHERE NOT an.skipped) > 0
        ORDER BY median_abs_error DESC NULLS LAST, an.question_id"""


def question_errors(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per numeric question: the cohort's guesses as % of the truth (quantiles), hit rate, ranked by error."""
    head, params = with_ctes(filters.sql(), key_ctes(store, key))
    df = source.frame(store, head + _QUESTION_STATS, params)
    # Each guess above is measured against its own variant; the truth shown is the written one.
    df.insert(1, "truth", df["question_id"].map(dict(zip(key.question_ids, key.truths))).astype(float))
    if not df.empty:
        quantiles = df.pop("pct_quantiles").apply(lambda q: list(q) if q is not None else [None] * 5)
        for i, name in enumerate(("p5", "p25", "p50", "p75", "p95")):
            df[name] = quantiles.apply(lambda q, i=i: q[i])
    return df


def question_sample(store: AttemptStore, key: DrillKey, filters: Filters, attempts: int = 60) -> pd.DataFrame:
    """Every numeric guess from a stable pseudo-random pick of `attempts` attempts, to draw as points."""
    head, params = with_ctes(filters.sql(), key_ctes(store, key))
    sql = head + f""",
        picked AS (
            SELECT attempt_id, handle, variant, graded_seed FROM att ORDER BY hash(attempt_id), attempt_id LIMIT ?
        )
        SELECT an.question_id, p.handle, 100 * an.value / k.truth AS pct,
               CASE WHEN abs(an.value - k.truth) <= k.full_band THEN 1.0
                    WHEN abs(an.value - k.truth) <= k.half_band THEN 0.5 ELSE 0.0 END AS score
        FROM answers an JOIN picked p USING (attempt_id) {KEY_JOIN}
        WHERE k.graded_numeric AND NOT an.skipped AND k.truth <> 0
        ORDER BY an.question_id, hash(an.attempt_id)"""
    return source.frame(store, sql, params + [attempts])


# -- time -----------------------------------------------------------------------------------
# Per attempt and part, seconds spent: from each 'opened' to the next; the last part opened runs to the
# finish, and in an unfinished attempt it is not counted (no end yet). Only the drill's own parts are
# counted (their ids are the parameter), numbered by their place in the drill and grouped on integers; every
# 'opened' still ends the span before it. Needs _TIMING before it.
_SPENT = """,
        opened AS (
            SELECT e.attempt_id, list_position(?::VARCHAR[], e.part_id) AS part_no, e.happened_at,
                   LEAD(e.happened_at) OVER (PARTITION BY e.attempt_id ORDER BY e.happened_at, e.id) AS next_at
            FROM attempt_events e WHERE e.kind = 'opened' AND e.attempt_id IN (SELECT attempt_id FROM att)
        ),
        spent AS (
            SELECT o.attempt_id, o.part_no,
                   SUM(GREATEST(0, LEAST(COALESCE(o.next_at, f.finished_at), f.finished_at) - o.happened_at))
                       AS seconds
            FROM opened o LEFT JOIN finished f USING (attempt_id)
            WHERE (o.next_at IS NOT NULL OR f.finished_at IS NOT NULL) AND o.part_no > 0
            GROUP BY ALL
        )"""


def time_per_part(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per part, minutes candidates spent (from each 'opened' to the next) against the suggested pacing.

    The last part opened runs to the finish; in an unfinished attempt it is not counted (no end yet).
    """
    part_ids = [p for p, _, _ in key.part_titles]
    head, params = with_ctes(filters.sql(), _TIMING)
    sql = head + _SPENT + """,
        per_part AS (
            SELECT part_no, COUNT(*) AS attempts, quantile_cont(seconds, [0.5, 0.25, 0.75]) AS q
            FROM spent GROUP BY part_no
        )
        SELECT (?::VARCHAR[])[part_no] AS part_id, attempts, q[1] / 60 AS median_min, q[2] / 60 AS p25_min,
               q[3] / 60 AS p75_min
        FROM per_part"""
    df = source.frame(store, sql, params + [part_ids, part_ids])
    pacing = pd.DataFrame(key.part_titles, columns=["part_id", "title", "suggested_min"])
    out = pacing.merge(df, on="part_id", how="left")
    out["attempts"] = out["attempts"].fillna(0).astype(int)
    return out


def time_per_attempt(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per attempt and part, the minutes spent (as time_per_part counts them) beside the part's pacing."""
    part_ids = [p for p, _, _ in key.part_titles]
    head, params = with_ctes(filters.sql(), _TIMING)
    sql = head + _SPENT + """
        SELECT s.attempt_id, att.candidate_id, att.handle, att.cohort, (?::VARCHAR[])[s.part_no] AS part_id,
               s.part_no, s.seconds / 60 AS minutes
        FROM spent s JOIN att USING (attempt_id) ORDER BY s.attempt_id, s.part_no"""
    df = source.frame(store, sql, params + [part_ids, part_ids])
    pacing = pd.DataFrame(key.part_titles, columns=["part_id", "title", "suggested_min"])
    return df.merge(pacing, on="part_id", how="left")


# -- calibration ----------------------------------------------------------------------------
def calibration_by_skill(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per skill, how often the stated 80% ranges held; a question counts once per skill it links to."""
    head, params = with_ctes(filters.sql(), key_ctes(store, key))
    sql = head + f""",
        per_question AS (
            SELECT an.question_id, COUNT(*) AS ranges,
                   COUNT(*) FILTER (WHERE an.low <= k.truth AND k.truth <= an.high) AS hits
            FROM answers an JOIN att USING (attempt_id) {KEY_JOIN}
            WHERE k.graded_numeric AND NOT an.skipped AND an.low IS NOT NULL
            GROUP BY an.question_id
        )
        SELECT s.skill_id, SUM(p.ranges) AS ranges, SUM(p.hits) AS hits, SUM(p.hits) / SUM(p.ranges) AS hit_rate
        FROM per_question p JOIN qskill s USING (question_id) GROUP BY s.skill_id"""
    df = source.frame(store, sql, params)
    names = pd.DataFrame({"skill_id": key.skill_ids, "skill": key.skill_names})
    out = names.merge(df, on="skill_id", how="left")
    out[["ranges", "hits"]] = out[["ranges", "hits"]].fillna(0).astype(int)
    return out

