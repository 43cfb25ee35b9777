"""Per-attempt tallies kept in attempt_tallies (migration 2), so the board reads one row per attempt
instead of grading a million answers on every new lock-in.
"""
from __future__ import annotations

from drills.reports import source
from drills.reports.grading_key import IN_RANGE, KEY_JOIN, NOTE_SCORE_SQL, SCORE, DrillKey, ensure_key, stored_key_ctes
from drills.store import AttemptStore

# Per attempt, the sums attempt_summary needs. Answers, rubric scores and note ratings are append-only,
# so (a) their row counts say whether anything was added at all, and (b) rows added since the last
# refresh sit at or past the rowid it recorded: only the attempts those rows belong to are tallied again.
_TABLE_ENDS = """
        SELECT (SELECT COUNT(*) FROM answers), (SELECT COUNT(*) FROM rubric_scores),
               (SELECT COUNT(*) FROM note_ratings), (SELECT COALESCE(MAX(rowid) + 1, 0) FROM answers),
               (SELECT COALESCE(MAX(rowid) + 1, 0) FROM rubric_scores),
               (SELECT COALESCE(MAX(rowid) + 1, 0) FROM note_ratings)"""


def _tally_insert(key: DrillKey, todo: list[int]) -> tuple[str, list]:
    """Tallies for the attempts in `todo` (none of which has a row for this key)."""
    # The id range as constants lets the answers scan skip row groups by their min/max attempt ids.
    chosen = (f"""
        att AS (SELECT unnest(?::BIGINT[]) AS attempt_id),
        mine AS (
            SELECT an.*, a.variant, {source.GRADED_SEED} AS graded_seed
            FROM answers an JOIN attempts a ON a.id = an.attempt_id {source.GRADED_SEED_JOIN}
            WHERE an.attempt_id BETWEEN ? AND ? AND an.attempt_id IN (SELECT attempt_id FROM att)
        )""", [todo, min(todo), max(todo)])
    head, params = source.with_ctes(chosen, stored_key_ctes(key), source.LEVELS)
    # As grading_key.RATINGS, but joined to this refresh's own answers instead of the whole table.
    sql = "INSERT INTO attempt_tallies " + head + f""",
        ratings AS (
            SELECT n.attempt_id, n.question_id, arg_max(n.rating, (n.rated_at, n.id)) AS rating
            FROM note_ratings n WHERE n.attempt_id IN (SELECT attempt_id FROM att) GROUP BY ALL
        ),
        rated AS (
            SELECT r.attempt_id, r.question_id, CASE r.rating {NOTE_SCORE_SQL} END AS note_score
            FROM ratings r JOIN mine an USING (attempt_id, question_id) WHERE NOT an.skipped
        ),
        rows_n AS (SELECT attempt_id, COUNT(*) AS n FROM mine GROUP BY attempt_id),
        per_attempt AS (
            SELECT an.attempt_id, COALESCE(SUM({SCORE}), 0) AS earned, COUNT(*) AS answered,
                   COUNT({IN_RANGE}) AS ranges, COUNT(*) FILTER (WHERE {IN_RANGE}) AS hits,
                   MAX(an.locked_at) AS last_at
            FROM mine an {KEY_JOIN} GROUP BY an.attempt_id
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
    counts = source.one(store, _TABLE_ENDS)[:3]
    mark = source.one(store, "SELECT answer_rows, score_rows, rating_rows FROM tally_marks WHERE key_id = ?",
                      [key.fingerprint])
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

    source.rewrite(store, write)
