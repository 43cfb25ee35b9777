"""Instructor reports over the attempt store: parameterised DuckDB aggregates returned as DataFrames.

Grading happens in SQL against a key built from the drill (truths, bands, right options), so a
cohort of a million answers is summarised without a Python loop. No Streamlit here.
"""
from __future__ import annotations

import hashlib
import io
import json
import threading
import weakref
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

from drills import answers as checks
from drills import scoring
from drills.loader import LoadedDrill
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.records import Attempt, Event, EventKind, LockedAnswer, RubricScore
from drills.store import AttemptStore

LEVEL_VALUE = {"weak": 0, "ok": 1, "strong": 2}
MIN_EXTRA_MIN = 1
MAX_EXTRA_MIN = 240
MAX_INSTRUCTOR_NAME = checks.MAX_HANDLE
_NOTE_SCORE_SQL = " ".join(f"WHEN '{k}' THEN {v}" for k, v in scoring.NOTE_SCORES.items())
_EPS = 1e-9  # the same slack scoring.grade_numeric allows at the tolerance edge


# -- the drill as a key the SQL can join against ---------------------------------------------
@dataclass(frozen=True)
class DrillKey:
    """What SQL needs to grade a drill: one row per question, one per (question, skill) pair."""

    drill_id: str
    question_ids: tuple[str, ...]
    part_ids: tuple[str, ...]
    kinds: tuple[str, ...]
    truths: tuple[float | None, ...]    # None for choice and notes (and simulations without a reference run)
    bands: tuple[float | None, ...]
    right_choices: tuple[str | None, ...]
    skill_pairs: tuple[tuple[str, str], ...]
    skill_ids: tuple[str, ...]
    skill_names: tuple[str, ...]
    part_titles: tuple[tuple[str, str, float], ...]   # (part id, title, suggested minutes)

    @classmethod
    def from_loaded(cls, loaded: LoadedDrill, sim_truths: Mapping[str, float] | None = None) -> DrillKey:
        """`sim_truths`: one reference run of each simulation-backed question (left ungraded without it)."""
        drill = loaded.drill
        parts = scoring._part_of(drill)  # noqa: SLF001 - the one place that maps questions to parts
        qids, pids, kinds, truths, bands, rights, pairs = [], [], [], [], [], [], []
        for q in drill.all_questions():
            truth = band = right = None
            if isinstance(q, NumericQuestion):
                known = loaded.values.get(q.id) if q.sim is None else (sim_truths or {}).get(q.id)
                if known is not None:
                    truth = float(known)
                    band = scoring.tolerance_band(truth, q.tolerance)
            elif isinstance(q, ChoiceQuestion):
                right = q.answer
            qids.append(q.id)
            pids.append(parts[q.id])
            kinds.append(q.kind)
            truths.append(truth)
            bands.append(band)
            rights.append(right)
            pairs.extend((q.id, s) for s in q.skills)
        return cls(drill.id, tuple(qids), tuple(pids), tuple(kinds), tuple(truths), tuple(bands), tuple(rights),
                   tuple(pairs), tuple(s.id for s in drill.rubric), tuple(s.name for s in drill.rubric),
                   tuple((p.id, p.title, p.minutes) for p in drill.parts))

    @property
    def fingerprint(self) -> str:
        """Names the whole key: the same drill content and reference truths give the same id."""
        whole = (self.drill_id, self.question_ids, self.part_ids, self.kinds, self.truths, self.bands,
                 self.right_choices, self.skill_pairs)
        return hashlib.sha256(repr(whole).encode()).hexdigest()[:24]

    @property
    def possible(self) -> int:
        return len(self.question_ids)

    def sql(self) -> tuple[str, list]:
        """CTEs `qkey` and `qskill` as parameterised VALUES lists (the reports read the stored key instead).

        VALUES rather than unnested arrays: the planner then knows the key is small and builds its
        hash tables on the key and the attempts, never on a million answers.
        """
        rows = list(zip(self.question_ids, self.part_ids, self.kinds, self.truths, self.bands, self.right_choices,
                        range(1, len(self.question_ids) + 1))) or [("", "", "", None, None, None, 0)]
        pairs = list(self.skill_pairs) or [("", "")]
        text = f"""
        qkey AS (
            SELECT * FROM (VALUES {", ".join(["(?, ?, ?, ?::DOUBLE, ?::DOUBLE, ?::VARCHAR, ?::BIGINT)"] * len(rows))})
                AS v(question_id, part_id, kind, truth, band, right_choice, position)
        ),
        qskill AS (
            SELECT * FROM (VALUES {", ".join(["(?, ?)"] * len(pairs))}) AS v(question_id, skill_id)
        )"""
        return text, [x for row in rows for x in row] + [x for pair in pairs for x in pair]


_known_keys: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # store -> key ids already stored
_key_lock = threading.Lock()


def ensure_key(store: AttemptStore, key: DrillKey) -> None:
    """Store the key's rows in grading_keys once, so every report joins a small table by its id."""
    with _key_lock:
        if key.fingerprint in _known_keys.get(store, ()):
            return
    rows = list(zip(key.question_ids, key.part_ids, key.kinds, key.truths, key.bands, key.right_choices,
                    range(1, len(key.question_ids) + 1)))
    writes = []
    absent = " WHERE NOT EXISTS (SELECT 1 FROM {table} WHERE key_id = ?)"
    if rows:
        writes.append((
            "INSERT INTO grading_keys SELECT ?, * FROM (VALUES "
            + ", ".join(["(?, ?, ?, ?::DOUBLE, ?::DOUBLE, ?::VARCHAR, ?::BIGINT)"] * len(rows)) + ") AS v"
            + absent.format(table="grading_keys"),
            [key.fingerprint, *[x for row in rows for x in row], key.fingerprint]))
    if key.skill_pairs:
        writes.append((
            "INSERT INTO grading_key_skills SELECT ?, * FROM (VALUES "
            + ", ".join(["(?, ?)"] * len(key.skill_pairs)) + ") AS v" + absent.format(table="grading_key_skills"),
            [key.fingerprint, *[x for pair in key.skill_pairs for x in pair], key.fingerprint]))
    stored = store.query("SELECT (SELECT COUNT(*) FROM grading_keys WHERE key_id = ?), "
                         "(SELECT COUNT(*) FROM grading_key_skills WHERE key_id = ?)",
                         [key.fingerprint, key.fingerprint]).fetchone()
    if writes and tuple(stored) != (len(rows), len(key.skill_pairs)):
        store.refresh_derived(lambda cur: [cur.execute(sql, params) for sql, params in writes])
    with _key_lock:
        _known_keys.setdefault(store, set()).add(key.fingerprint)


def _key(store: AttemptStore, key: DrillKey) -> tuple[str, list]:
    """CTEs `qkey` and `qskill` read from the stored key (stored first if need be)."""
    ensure_key(store, key)
    return _stored_key(key)


def _stored_key(key: DrillKey) -> tuple[str, list]:
    """CTEs `qkey` and `qskill` from grading_keys, with the grading tests worked out per question.

    The band edges carry the scorer's slack and the kind tests are booleans, so the million-row passes
    compare doubles and never strings.
    """
    return (f"""
        qkey AS (
            SELECT question_id, part_id, kind, truth, band, right_choice, position,
                   kind = 'numeric' AND truth IS NOT NULL AS graded_numeric, kind = 'choice' AS graded_choice,
                   band * (1 + {_EPS}) AS full_band, 2 * band * (1 + {_EPS}) AS half_band
            FROM grading_keys WHERE key_id = ?
        ),
        qskill AS (SELECT question_id, skill_id FROM grading_key_skills WHERE key_id = ?)""",
            [key.fingerprint, key.fingerprint])


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
            SELECT a.id AS attempt_id, a.candidate_id, c.handle, c.cohort, a.time_box_s, a.started_at
            FROM attempts a JOIN candidates c ON c.id = a.candidate_id
            WHERE {' AND '.join(clauses)}
        )"""
        return text, params


def _with(*ctes: tuple[str, list]) -> tuple[str, list]:
    params: list = []
    for _, p in ctes:
        params.extend(p)
    return "WITH " + ",".join(text for text, _ in ctes), params


_TIMING = ("""
        grants AS (
            SELECT g.attempt_id, SUM(g.seconds) AS extra_s FROM time_grants g
            WHERE g.attempt_id IN (SELECT attempt_id FROM att) GROUP BY g.attempt_id
        ),
        finished AS (
            SELECT e.attempt_id, MIN(e.happened_at) AS finished_at FROM attempt_events e
            WHERE e.kind = 'finished' AND e.attempt_id IN (SELECT attempt_id FROM att) GROUP BY e.attempt_id
        )""", [])

_RATINGS = ("""
        ratings AS (
            SELECT n.attempt_id, n.question_id, arg_max(n.rating, (n.rated_at, n.id)) AS rating
            FROM note_ratings n WHERE n.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        ),
        rated AS (
            SELECT r.attempt_id, r.question_id, CASE r.rating """ + _NOTE_SCORE_SQL + """ END AS note_score
            FROM ratings r JOIN answers an USING (attempt_id, question_id) WHERE NOT an.skipped
        )""", [])

# An answer's grade from the key's precomputed columns: the same tests as scoring.grade_numeric and
# grade_choice, with no string comparison left in the per-row work. Notes stay NULL here: they are
# graded by their latest self-rating, joined in separately (`rated`), because a million-row join for
# a few thousand ratings would dominate the query.
_SCORE = """CASE
                     WHEN an.skipped THEN 0.0
                     WHEN k.graded_numeric THEN
                       CASE WHEN abs(an.value - k.truth) <= k.full_band THEN 1.0
                            WHEN abs(an.value - k.truth) <= k.half_band THEN 0.5 ELSE 0.0 END
                     WHEN k.graded_choice THEN CASE WHEN an.choice = k.right_choice THEN 1.0 ELSE 0.0 END
                   END"""
_IN_RANGE = """CASE WHEN k.graded_numeric AND NOT an.skipped AND an.low IS NOT NULL
                        THEN an.low <= k.truth AND k.truth <= an.high END"""

# Every answer with its grade (the export's rows).
_GRADED = (f"""
        graded AS (
            SELECT an.attempt_id, an.question_id, k.part_id, k.kind, k.truth, k.position, an.value, an.low, an.high,
                   an.choice, an.notes, an.skipped, an.locked_at, {_SCORE} AS score, {_IN_RANGE} AS in_range
            FROM answers an JOIN att USING (attempt_id) JOIN qkey k USING (question_id)
        )""", [])

# The score that counts per (attempt, skill): the latest instructor row, else the latest self row.
_LEVELS = ("""
        levels AS (
            SELECT s.attempt_id, s.skill_id,
                   arg_max(s.level, (s.scorer = 'instructor', s.scored_at, s.id)) AS level,
                   bool_or(s.scorer = 'instructor') AS overridden,
                   arg_max(s.reason, (s.scorer = 'instructor', s.scored_at, s.id)) AS reason
            FROM rubric_scores s WHERE s.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        )""", [])

_LATEST = ("""
        latest AS (
            SELECT candidate_id, arg_max(attempt_id, (started_at, attempt_id)) AS attempt_id FROM att
            GROUP BY candidate_id
        )""", [])


def _df(store: AttemptStore, sql: str, params: Sequence) -> pd.DataFrame:
    return store.query(sql, params).df()


# -- cheap things the page needs first -------------------------------------------------------
def data_version(store: AttemptStore) -> tuple[int, ...]:
    """Changes whenever anything is written: every write logs an event except note ratings.

    Row counts ride along with the highest ids so rows loaded with explicit ids count too.
    """
    row = store.query("SELECT (SELECT COALESCE(MAX(id), 0) FROM attempt_events), (SELECT COUNT(*) FROM attempt_events), "
                      "(SELECT COALESCE(MAX(id), 0) FROM note_ratings), (SELECT COUNT(*) FROM note_ratings)").fetchone()
    return tuple(int(v) for v in row)


def drills_by_activity(store: AttemptStore) -> list[str]:
    """Drill ids that have attempts, the most recently attempted first."""
    return [r[0] for r in store.query(
        "SELECT drill_id FROM attempts GROUP BY drill_id ORDER BY MAX(started_at) DESC, drill_id").fetchall()]


def cohorts(store: AttemptStore, drill_id: str) -> list[str]:
    return [r[0] for r in store.query(
        "SELECT DISTINCT c.cohort FROM attempts a JOIN candidates c ON c.id = a.candidate_id "
        "WHERE a.drill_id = ? ORDER BY 1", [drill_id]).fetchall()]


def date_bounds(store: AttemptStore, drill_id: str) -> tuple[float, float] | None:
    row = store.query("SELECT MIN(started_at), MAX(started_at) FROM attempts WHERE drill_id = ?",
                      [drill_id]).fetchone()
    return None if row[0] is None else (float(row[0]), float(row[1]))


@dataclass(frozen=True)
class Counts:
    candidates: int
    started: int
    finished: int


def counts(store: AttemptStore, filters: Filters) -> Counts:
    head, params = _with(filters.sql())
    row = store.query(head + """
        SELECT COUNT(DISTINCT att.candidate_id), COUNT(*),
               COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM attempt_events e
                                              WHERE e.attempt_id = att.attempt_id AND e.kind = 'finished'))
        FROM att""", params).fetchone()
    return Counts(*(int(v) for v in row))


# -- attempts and the leaderboard ------------------------------------------------------------
# Per attempt, the sums attempt_summary needs, kept in attempt_tallies (migration 2) so the board
# reads one row per attempt instead of grading a million answers on every new lock-in. Answers,
# rubric scores and note ratings are append-only, so (a) their row counts say whether anything was
# added at all, and (b) rows added since the last refresh sit at or past the rowid it recorded: only
# the attempts those rows belong to are tallied again.
_TABLE_ENDS = """
        SELECT (SELECT COUNT(*) FROM answers), (SELECT COUNT(*) FROM rubric_scores),
               (SELECT COUNT(*) FROM note_ratings), (SELECT COALESCE(MAX(rowid) + 1, 0) FROM answers),
               (SELECT COALESCE(MAX(rowid) + 1, 0) FROM rubric_scores),
               (SELECT COALESCE(MAX(rowid) + 1, 0) FROM note_ratings)"""


def _tally_insert(key: DrillKey, todo: list[int]) -> tuple[str, list]:
    """Tallies for the attempts in `todo` (none of which has a row for this key)."""
    # The id range as constants lets the answers scan skip row groups by their min/max attempt ids.
    chosen = ("""
        att AS (SELECT unnest(?::BIGINT[]) AS attempt_id),
        mine AS (
            SELECT * FROM answers
            WHERE attempt_id BETWEEN ? AND ? AND attempt_id IN (SELECT attempt_id FROM att)
        )""", [todo, min(todo), max(todo)])
    head, params = _with(chosen, _stored_key(key), _LEVELS)
    # As _RATINGS, but joined to this refresh's own answers instead of the whole table.
    sql = "INSERT INTO attempt_tallies " + head + f""",
        ratings AS (
            SELECT n.attempt_id, n.question_id, arg_max(n.rating, (n.rated_at, n.id)) AS rating
            FROM note_ratings n WHERE n.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        ),
        rated AS (
            SELECT r.attempt_id, r.question_id, CASE r.rating {_NOTE_SCORE_SQL} END AS note_score
            FROM ratings r JOIN mine an USING (attempt_id, question_id) WHERE NOT an.skipped
        ),
        rows_n AS (SELECT attempt_id, COUNT(*) AS n FROM mine GROUP BY attempt_id),
        per_attempt AS (
            SELECT an.attempt_id, COALESCE(SUM({_SCORE}), 0) AS earned, COUNT(*) AS answered,
                   COUNT({_IN_RANGE}) AS ranges, COUNT(*) FILTER (WHERE {_IN_RANGE}) AS hits,
                   MAX(an.locked_at) AS last_at
            FROM mine an JOIN qkey k USING (question_id) GROUP BY an.attempt_id
        ),
        notes AS (SELECT attempt_id, SUM(note_score) AS earned FROM rated GROUP BY attempt_id),
        rating_n AS (
            SELECT attempt_id, COUNT(*) AS n FROM note_ratings WHERE attempt_id IN (SELECT attempt_id FROM att)
            GROUP BY attempt_id
        ),
        strong AS (
            SELECT attempt_id, COUNT(*) FILTER (WHERE level = 'strong') AS strong,
                   COUNT(*) FILTER (WHERE overridden) AS overridden
            FROM levels GROUP BY attempt_id
        ),
        score_n AS (
            SELECT attempt_id, COUNT(*) AS n FROM rubric_scores WHERE attempt_id IN (SELECT attempt_id FROM att)
            GROUP BY attempt_id
        )
        SELECT ?, att.attempt_id, COALESCE(rows_n.n, 0), COALESCE(score_n.n, 0), COALESCE(rating_n.n, 0),
               COALESCE(p.earned, 0) + COALESCE(n.earned, 0), COALESCE(p.answered, 0), COALESCE(p.ranges, 0),
               COALESCE(p.hits, 0), p.last_at, COALESCE(s.strong, 0), COALESCE(s.overridden, 0)
        FROM att LEFT JOIN rows_n USING (attempt_id) LEFT JOIN per_attempt p USING (attempt_id)
        LEFT JOIN notes n USING (attempt_id) LEFT JOIN rating_n USING (attempt_id)
        LEFT JOIN strong s USING (attempt_id) LEFT JOIN score_n USING (attempt_id)"""
    return sql, params + [key.fingerprint]


def refresh_tallies(store: AttemptStore, key: DrillKey) -> None:
    """Bring attempt_tallies up to date for this key: nothing to do unless rows were added since last time."""
    counts = store.query(_TABLE_ENDS).fetchone()[:3]
    mark = store.query("SELECT answer_rows, score_rows, rating_rows FROM tally_marks WHERE key_id = ?",
                       [key.fingerprint]).fetchone()
    if mark is not None and tuple(mark) == tuple(counts):
        return
    ensure_key(store, key)
    fp = key.fingerprint

    def write(cur) -> None:
        ends = cur.execute(_TABLE_ENDS).fetchone()
        since = cur.execute("SELECT answer_next, score_next, rating_next FROM tally_marks WHERE key_id = ?",
                            [fp]).fetchone()
        if since is None:
            cur.execute("DELETE FROM attempt_tallies WHERE key_id = ?", [fp])
        else:
            cur.execute("""
                DELETE FROM attempt_tallies WHERE key_id = ? AND attempt_id IN (
                    SELECT attempt_id FROM answers WHERE rowid >= ?
                    UNION SELECT attempt_id FROM rubric_scores WHERE rowid >= ?
                    UNION SELECT attempt_id FROM note_ratings WHERE rowid >= ?)""", [fp, *since])
        todo = [r[0] for r in cur.execute(
            "SELECT id FROM attempts WHERE drill_id = ? AND id NOT IN "
            "(SELECT attempt_id FROM attempt_tallies WHERE key_id = ?)", [key.drill_id, fp]).fetchall()]
        if todo:
            cur.execute(*_tally_insert(key, todo))
        cur.execute("INSERT OR REPLACE INTO tally_marks (key_id, answer_rows, score_rows, rating_rows, refreshed_at, "
                    "answer_next, score_next, rating_next) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [fp, *ends[:3], store.clock(), *ends[3:]])

    store.refresh_derived(write)


def attempt_summary(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """One row per attempt: score, Strong count, time used against the box, ranges held.

    Time used runs to the finish, or for an unfinished attempt to its last lock-in.
    """
    refresh_tallies(store, key)
    head, params = _with(filters.sql(), _TIMING)
    sql = head + """
        SELECT att.attempt_id, att.candidate_id, att.handle, att.cohort, att.started_at, f.finished_at,
               COALESCE(t.earned, 0) AS earned, 100.0 * COALESCE(t.earned, 0) / ? AS score_pct,
               COALESCE(t.answered, 0) AS answered, COALESCE(t.strong, 0) AS strong,
               COALESCE(t.overridden, 0) AS overridden,
               GREATEST(0, COALESCE(f.finished_at, t.last_at, att.started_at) - att.started_at) AS used_s,
               att.time_box_s + COALESCE(g.extra_s, 0) AS limit_s, COALESCE(g.extra_s, 0) AS extra_s,
               COALESCE(t.ranges, 0) AS ranges, COALESCE(t.hits, 0) AS hits
        FROM att LEFT JOIN finished f USING (attempt_id) LEFT JOIN grants g USING (attempt_id)
        LEFT JOIN (SELECT * FROM attempt_tallies WHERE key_id = ?) t USING (attempt_id)
        ORDER BY att.started_at, att.attempt_id"""
    return _df(store, sql, params + [max(1, key.possible), key.fingerprint])


def leaderboard_from(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per candidate from attempt_summary: their best attempt (ties: the latest), calibration over all."""
    columns = ["candidate_id", "handle", "cohort", "attempts", "finished", "attempt_id", "score_pct", "strong",
               "overridden", "used_min", "limit_min", "ranges", "hits", "hit_rate"]
    if summary.empty:
        return pd.DataFrame(columns=columns)
    ordered = summary.sort_values(["candidate_id", "score_pct", "started_at", "attempt_id"])
    best = ordered.groupby("candidate_id", sort=False).tail(1).set_index("candidate_id")
    per = summary.groupby("candidate_id").agg(attempts=("attempt_id", "size"),
                                              finished=("finished_at", "count"),
                                              ranges=("ranges", "sum"), hits=("hits", "sum"))
    out = best[["handle", "cohort", "attempt_id", "score_pct", "strong", "overridden"]].join(per)
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
    """The level that counts per (candidate, skill) on each candidate's latest attempt (optionally some only)."""
    head, params = _with(filters.sql(), _LATEST, _LEVELS)
    only = ""
    if candidate_ids is not None:
        only = " WHERE att.candidate_id IN (SELECT unnest(?::BIGINT[]))"
        params = params + [[int(c) for c in candidate_ids]]
    sql = head + f"""
        SELECT att.candidate_id, att.handle, att.cohort, att.attempt_id, l.skill_id, l.level, l.overridden,
               CASE WHEN l.overridden THEN l.reason ELSE '' END AS reason
        FROM latest JOIN att USING (attempt_id) JOIN levels l USING (attempt_id){only}
        ORDER BY att.handle, att.cohort, l.skill_id"""
    return _df(store, sql, params)


def skill_shares(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per skill, how many latest attempts sit at each level (the heatmap's summary for big cohorts)."""
    head, params = _with(filters.sql(), _LATEST, _LEVELS)
    sql = head + """
        SELECT l.skill_id, COUNT(*) FILTER (WHERE l.level = 'strong') AS strong,
               COUNT(*) FILTER (WHERE l.level = 'ok') AS ok, COUNT(*) FILTER (WHERE l.level = 'weak') AS weak,
               COUNT(*) FILTER (WHERE l.overridden) AS overridden
        FROM latest JOIN levels l USING (attempt_id) GROUP BY l.skill_id ORDER BY l.skill_id"""
    return _df(store, sql, params)


# -- questions ------------------------------------------------------------------------------
# Per graded numeric question, in one pass: skips and guesses side by side (FILTER), error quantiles
# over the guesses; truths of zero are kept out of the ratios.
_QUESTION_STATS = """
        SELECT an.question_id, ANY_VALUE(k.truth) AS truth, ANY_VALUE(k.position) AS position,
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
        FROM answers an JOIN att USING (attempt_id) JOIN qkey k USING (question_id)
        WHERE k.graded_numeric AND k.truth <> 0
        GROUP BY an.question_id HAVING COUNT(*) FILTER (WHERE NOT an.skipped) > 0
        ORDER BY median_abs_error DESC NULLS LAST, an.question_id"""


def question_errors(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per numeric question: the cohort's guesses as % of the truth (quantiles), hit rate, ranked by error."""
    head, params = _with(filters.sql(), _key(store, key))
    df = _df(store, head + _QUESTION_STATS, params)
    if not df.empty:
        quantiles = df.pop("pct_quantiles").apply(lambda q: list(q) if q is not None else [None] * 5)
        for i, name in enumerate(("p5", "p25", "p50", "p75", "p95")):
            df[name] = quantiles.apply(lambda q, i=i: q[i])
    return df


def question_sample(store: AttemptStore, key: DrillKey, filters: Filters, attempts: int = 60) -> pd.DataFrame:
    """Every numeric guess from a stable pseudo-random pick of `attempts` attempts, to draw as points."""
    head, params = _with(filters.sql(), _key(store, key))
    sql = head + """,
        picked AS (SELECT attempt_id, handle FROM att ORDER BY hash(attempt_id), attempt_id LIMIT ?)
        SELECT an.question_id, p.handle, 100 * an.value / k.truth AS pct,
               CASE WHEN abs(an.value - k.truth) <= k.full_band THEN 1.0
                    WHEN abs(an.value - k.truth) <= k.half_band THEN 0.5 ELSE 0.0 END AS score
        FROM answers an JOIN picked p USING (attempt_id) JOIN qkey k USING (question_id)
        WHERE k.graded_numeric AND NOT an.skipped AND k.truth <> 0
        ORDER BY an.question_id, hash(an.attempt_id)"""
    return _df(store, sql, params + [attempts])


# -- time -----------------------------------------------------------------------------------
def time_per_part(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per part, minutes candidates spent (from each 'opened' to the next) against the suggested pacing.

    The last part opened runs to the finish; in an unfinished attempt it is not counted (no end yet).
    """
    # Only the drill's own parts are reported (the pacing table below), so spans are numbered by their
    # place in the drill and grouped on integers; every 'opened' still ends the span before it.
    part_ids = [p for p, _, _ in key.part_titles]
    head, params = _with(filters.sql(), _TIMING)
    sql = head + """,
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
        ),
        per_part AS (
            SELECT part_no, COUNT(*) AS attempts, quantile_cont(seconds, [0.5, 0.25, 0.75]) AS q
            FROM spent GROUP BY part_no
        )
        SELECT (?::VARCHAR[])[part_no] AS part_id, attempts, q[1] / 60 AS median_min, q[2] / 60 AS p25_min,
               q[3] / 60 AS p75_min
        FROM per_part"""
    df = _df(store, sql, params + [part_ids, part_ids])
    pacing = pd.DataFrame(key.part_titles, columns=["part_id", "title", "suggested_min"])
    out = pacing.merge(df, on="part_id", how="left")
    out["attempts"] = out["attempts"].fillna(0).astype(int)
    return out


# -- calibration ----------------------------------------------------------------------------
def calibration_by_skill(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    """Per skill, how often the stated 80% ranges held; a question counts once per skill it links to."""
    head, params = _with(filters.sql(), _key(store, key))
    sql = head + """,
        per_question AS (
            SELECT an.question_id, COUNT(*) AS ranges,
                   COUNT(*) FILTER (WHERE an.low <= k.truth AND k.truth <= an.high) AS hits
            FROM answers an JOIN att USING (attempt_id) JOIN qkey k USING (question_id)
            WHERE k.graded_numeric AND NOT an.skipped AND an.low IS NOT NULL
            GROUP BY an.question_id
        )
        SELECT s.skill_id, SUM(p.ranges) AS ranges, SUM(p.hits) AS hits, SUM(p.hits) / SUM(p.ranges) AS hit_rate
        FROM per_question p JOIN qskill s USING (question_id) GROUP BY s.skill_id"""
    df = _df(store, sql, params)
    names = pd.DataFrame({"skill_id": key.skill_ids, "skill": key.skill_names})
    out = names.merge(df, on="skill_id", how="left")
    out[["ranges", "hits"]] = out[["ranges", "hits"]].fillna(0).astype(int)
    return out


# -- exports --------------------------------------------------------------------------------
def export_answers(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    head, params = _with(filters.sql(), _key(store, key), _RATINGS, _GRADED)
    sql = head + """
        SELECT att.attempt_id, att.handle, att.cohort, g.part_id, g.question_id, g.kind, g.value, g.low, g.high,
               g.choice, g.notes, g.skipped, to_timestamp(g.locked_at) AS locked_at, g.truth,
               COALESCE(g.score, r.note_score) AS score, g.in_range
        FROM graded g JOIN att USING (attempt_id)
        LEFT JOIN rated r ON r.attempt_id = g.attempt_id AND r.question_id = g.question_id
        ORDER BY att.started_at, att.attempt_id, g.position"""
    return _df(store, sql, params)


def export_attempts(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    df = attempt_summary(store, key, filters)
    for column in ("started_at", "finished_at"):
        df[column] = pd.to_datetime(df[column], unit="s", utc=True)
    return df


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def to_csv_bytes(df: pd.DataFrame) -> bytes:
    """CSV with text cells that a spreadsheet would run as a formula prefixed by an apostrophe."""
    safe = df.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v)
    return safe.to_csv(index=False).encode("utf-8")


def to_parquet_bytes(df: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    df.to_parquet(buffer, index=False)
    return buffer.getvalue()


# -- one attempt in detail ------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineRow:
    at: float
    kind: str
    part_id: str | None
    what: str
    early: bool           # flagged: a reveal before its questions were locked or skipped, or a simulation
                          # opened while questions it answers were still open
    flag: str = ""        # why it is flagged, in a few words


def timeline(loaded: LoadedDrill, events: Sequence[Event], answers: dict[str, LockedAnswer]) -> list[TimelineRow]:
    """Each event of an attempt in order, flagging reveals that came before their questions' lock-ins and
    simulations opened while questions they answer were open."""
    drill = loaded.drill
    rows = []
    for e in events:
        detail = dict(e.detail)
        early = False
        flag = ""
        if e.kind in ("locked", "skipped"):
            what = str(detail.get("question", ""))
        elif e.kind == "revealed":
            section = str(detail.get("section", ""))
            what = section
            try:
                part = drill.part(e.part_id or "")
            except KeyError:
                part = None
            if part is not None:
                gating = part.followup.questions if section == "followup" and part.followup else part.questions
                early = any(q.id not in answers or answers[q.id].locked_at > e.at for q in gating)
                flag = "revealed before lock-in" if early else ""
        elif e.kind == EventKind.SIM_OPENED:
            questions = [str(q) for q in detail.get("questions", [])]
            what = f"{detail.get('page', '')} while open: {', '.join(questions)}"
            early = bool(questions)
            flag = "simulation opened before lock-in" if early else ""
        elif e.kind == "scored":
            what = f"{detail.get('skill', '')}: {detail.get('level', '')} ({detail.get('scorer', '')})"
        elif e.kind == "extra_time":
            what = f"+{float(detail.get('seconds', 0)) / 60:g} min by {detail.get('by', '')}"
        else:
            what = json.dumps(detail) if detail else ""
        rows.append(TimelineRow(e.at, e.kind, e.part_id, what, early, flag))
    return rows


def override_history(history: Sequence[RubricScore]) -> list[RubricScore]:
    return [row for row in history if row.scorer == "instructor"]


# -- instructor writes: checked here, stored through the store --------------------------------
def instructor_name_entry(text: object) -> str:
    cleaned = str(text or "").strip()
    if not cleaned:
        raise checks.InputError("Enter your name so overrides and grants say who made them.")
    if len(cleaned) > MAX_INSTRUCTOR_NAME:
        raise checks.InputError(f"Keep your name under {MAX_INSTRUCTOR_NAME} characters.")
    if not checks.HANDLE_RE.match(cleaned):
        raise checks.InputError("Use letters, digits, spaces, dots, dashes or underscores in your name.")
    return cleaned


def extra_minutes_entry(value: object) -> float:
    """Minutes of extra time: a finite number from 1 to 240."""
    minutes = checks._finite(value, "the extra time")  # noqa: SLF001 - the shared number check
    if minutes < MIN_EXTRA_MIN:
        raise checks.InputError(f"Extra time must be at least {MIN_EXTRA_MIN} minute (it cannot take time away).")
    if minutes > MAX_EXTRA_MIN:
        raise checks.InputError(f"Extra time is capped at {MAX_EXTRA_MIN} minutes per grant.")
    return minutes


def override_skill(store: AttemptStore, attempt: Attempt, loaded: LoadedDrill, skill_id: str, level: str,
                   comment: object, instructor: str) -> None:
    """Append an instructor score; the comment is required and checked before anything is stored."""
    if skill_id not in {s.id for s in loaded.drill.rubric}:
        raise checks.InputError("Pick one of the drill's skills.")
    if level not in LEVEL_VALUE:
        raise checks.InputError("Pick Strong, OK or Weak.")
    reason = checks.reason_entry(comment, required=True)
    name = instructor_name_entry(instructor)
    store.add_rubric_score(attempt.id, skill_id, level, scorer="instructor", scorer_name=name, reason=reason)


def check_grantable(attempt: Attempt) -> None:
    """Raise InputError when the attempt cannot be given more time (it is already finished)."""
    if attempt.finished_at is not None:
        raise checks.InputError("This attempt is already finished, so extra time would change nothing; "
                                "nothing was granted.")


def grant_extra_time(store: AttemptStore, attempt: Attempt, minutes: object, instructor: str,
                     reason: object = "") -> float:
    """Check the minutes, the name and the attempt as stored now (the candidate may have finished since
    the board loaded), then append one grant; returns the minutes granted."""
    clean = extra_minutes_entry(minutes)
    name = instructor_name_entry(instructor)
    current = store.attempt_by_id(attempt.id)
    if current is None:
        raise checks.InputError("That attempt no longer exists; nothing was granted.")
    check_grantable(current)
    store.grant_time(attempt.id, clean * 60, granted_by=name, reason=checks.reason_entry(reason, required=False))
    return clean
