"""Item analysis: which questions are bad questions (too easy, too hard, not separating strong candidates
from weak ones) and whether seeded variants are equally hard, computed as Moodle's quiz statistics do.

Per question, over the whole selection and per variant: n, facility, standard deviation, the discrimination
index (100 · correlation of the item's mark with the rest of the attempt's marks), the discriminative
efficiency (100 · that covariance over the largest the two mark lists allow, both sorted), and Cronbach's
alpha per drill (each scope is a drill id of its own). Moodle's conventions, kept here:

- only finished attempts count; by default each candidate's first attempt at the drill (a retake builds on
  the first), or every finished attempt, each as if by a different candidate;
- a question the attempt left unanswered (or skipped) scores 0; every graded question is worth 1 (numeric:
  1 within tolerance, 0.5 within twice it, less the share given up to hints; choice: 1 or 0; notes: the
  candidate's latest rating); a simulation question without a reference run is not an item;
- a variant's rows compare the item with the rest of the same attempts, so a variant's facility sits
  beside the others on the same footing.

`python -m drills.reports.items --db URL_OR_FILE --drill ID [--all-attempts] --csv`
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Callable

import pandas as pd

from drills.loader import LoadedDrill
from drills.reports import source
from drills.reports.grading_key import RATINGS, SCORE, DrillKey, key_ctes
from drills.reports.source import Filters, with_ctes
from drills.schema import ChoiceQuestion
from drills.store import AttemptStore

ALL = "all"                 # the variant column of a question's row over every variant
DUBIOUS_BELOW = 15.0        # discriminative efficiency (%) under which Moodle calls a question dubious
TOO_HARD_BELOW = 10.0       # facility (%)
TOO_EASY_ABOVE = 95.0
VARIANT_GAP = 20.0          # facility points between two variants of a question
VARIANT_MIN_N = 5           # attempts a variant needs before its facility is compared (one scores 0% or 100%)
FLAG_MIN_N = 5              # graded answers a row needs before it is flagged at all: two marks make no facility
NO_ANSWER = "(no answer)"   # the option column of attempts that chose nothing (skipped, or never reached)
# Variances this small are rounding left over from marks that are all equal: Moodle tests for exactly zero,
# but an average of 0.9s is not exactly 0.9 in floating point.
_ZERO = 1e-12

FLAG_DUBIOUS, FLAG_HARD, FLAG_EASY, FLAG_VARIANTS = "dubious", "too hard", "too easy", "variants differ"

# Who counts: finished attempts in the filters; `first` keeps each candidate's first attempt at the drill
# (under any filters: a retake inside the dates is still a retake).
_SELECTION = """
        firsts AS (
            SELECT candidate_id, arg_min(id, (started_at, id)) AS attempt_id FROM attempts
            WHERE drill_id = ? GROUP BY candidate_id
        ),
        sel AS (
            SELECT att.attempt_id, att.variant, att.graded_seed,
                   EXISTS (SELECT 1 FROM attempt_events e WHERE e.attempt_id = att.attempt_id AND e.kind = 'live')
                       AS live
            FROM att
            WHERE EXISTS (SELECT 1 FROM attempt_events e WHERE e.attempt_id = att.attempt_id AND e.kind = 'finished')
              AND (NOT ? OR att.attempt_id IN (SELECT attempt_id FROM firsts))
        )"""

# One mark per (selected attempt, graded question of its variant), 0 where nothing was locked; then each
# mark once in its variant's group and once in the whole (group -1), beside the rest of its attempt.
_MARKS = f"""
        marks AS (
            SELECT s.attempt_id, s.variant, s.live, k.question_id, k.position, k.kind, k.truth, an.value, an.low, an.high,
                   an.choice, COALESCE(an.skipped, FALSE) AS skipped,
                   COALESCE(CASE WHEN k.kind = 'notes' THEN r.note_score ELSE {SCORE} END, 0.0) AS mark,
                   -- a note nobody rated has no mark yet (its 0 above only keeps the attempt's total whole)
                   (k.kind <> 'notes' OR r.note_score IS NOT NULL) AS graded
            FROM sel s JOIN qkey k ON (k.key_variant, k.key_seed) = (s.variant, s.graded_seed)
            LEFT JOIN answers an ON an.attempt_id = s.attempt_id AND an.question_id = k.question_id
            LEFT JOIN rated r ON r.attempt_id = s.attempt_id AND r.question_id = k.question_id
            WHERE k.graded_numeric OR k.graded_choice OR k.kind = 'notes'
        ),
        totals AS (SELECT attempt_id, SUM(mark) AS total FROM marks GROUP BY attempt_id),
        scored AS (
            SELECT m.variant AS grp, m.*, t.total, t.total - m.mark AS rest FROM marks m JOIN totals t USING (attempt_id)
            UNION ALL
            SELECT -1 AS grp, m.*, t.total, t.total - m.mark AS rest FROM marks m JOIN totals t USING (attempt_id)
        )"""

_STATS = f"""
        moments AS (
            SELECT grp, question_id, ANY_VALUE(position) AS position, ANY_VALUE(kind) AS kind, COUNT(*) AS n,
                   COUNT(*) FILTER (WHERE live) AS live_n, COUNT(*) FILTER (WHERE graded) AS graded_n,
                   AVG(mark) AS facility, stddev_samp(mark) AS sd, var_samp(mark) AS mark_var,
                   var_samp(rest) AS rest_var, covar_samp(mark, rest) AS cov,
                   quantile_cont((value - truth) / abs(truth), 0.5)
                       FILTER (WHERE kind = 'numeric' AND NOT skipped AND value IS NOT NULL AND truth <> 0)
                       AS median_signed_error,
                   COUNT(*) FILTER (WHERE kind = 'numeric' AND NOT skipped AND low IS NOT NULL) AS ranges,
                   AVG((low <= truth AND truth <= high)::INTEGER)
                       FILTER (WHERE kind = 'numeric' AND NOT skipped AND low IS NOT NULL) AS range_held
            FROM scored GROUP BY grp, question_id
        ),
        sorted_lists AS (   -- each group's marks and rests, each list sorted on its own
            SELECT grp, question_id, list_sort(list(mark)) AS marks, list_sort(list(rest)) AS rests
            FROM scored GROUP BY grp, question_id
        ),
        paired AS (SELECT grp, question_id, unnest(marks) AS mark, unnest(rests) AS rest FROM sorted_lists),
        most AS (   -- the covariance if the marks and the rests were in the same order: Moodle's covariancemax
            SELECT grp, question_id, covar_samp(mark, rest) AS cov_max FROM paired GROUP BY grp, question_id
        )
        SELECT m.grp, m.question_id, m.position, m.kind, m.n, m.live_n, m.graded_n, 100 * m.facility AS facility_pct,
               100 * m.sd AS sd_pct,
               CASE WHEN m.mark_var * m.rest_var > {_ZERO} THEN 100 * m.cov / sqrt(m.mark_var * m.rest_var) END
                   AS discrimination_index,
               CASE WHEN abs(x.cov_max) > {_ZERO} THEN 100 * m.cov / x.cov_max END AS discriminative_efficiency_pct,
               100 * m.median_signed_error AS median_signed_error_pct, m.ranges, 100 * m.range_held AS range_held_pct
        FROM moments m JOIN most x USING (grp, question_id)
        ORDER BY m.position, m.grp"""

_CHOICES = """
        SELECT grp, question_id, COALESCE(CASE WHEN NOT skipped THEN choice END, ?) AS option, COUNT(*) AS picked
        FROM scored WHERE kind = 'choice' GROUP BY ALL"""

# Cronbach's alpha as Moodle's coefficient of internal consistency: p/(p-1) · (1 - Σ item variance /
# variance of the attempt totals), sample variances, as a percentage.
_ALPHA = """,
        per_attempt AS (SELECT DISTINCT grp, attempt_id, total FROM scored),
        spread AS (SELECT grp, COUNT(*) AS n, var_samp(total) AS total_var FROM per_attempt GROUP BY grp),
        items AS (SELECT grp, COUNT(*) AS p, SUM(v) AS item_var FROM (
                      SELECT grp, question_id, var_samp(mark) AS v FROM scored GROUP BY grp, question_id) GROUP BY grp)
        SELECT s.grp, s.n, i.p AS items,
               CASE WHEN s.n > 1 AND i.p > 1 AND abs(s.total_var) > {zero}
                    THEN 100.0 * i.p / (i.p - 1) * (1 - i.item_var / s.total_var) END AS alpha_pct
        FROM spread s JOIN items i USING (grp) ORDER BY s.grp"""


def _head(store: AttemptStore, key: DrillKey, filters: Filters, first_only: bool) -> tuple[str, list]:
    head, params = with_ctes(filters.sql(), key_ctes(store, key), RATINGS,
                             (_SELECTION, [filters.drill_id, bool(first_only)]), (_MARKS, []))
    return head, params


def _variant_column(groups: pd.Series) -> pd.Series:
    return groups.map(lambda g: ALL if g < 0 else int(g)).astype(object)


def item_stats(store: AttemptStore, key: DrillKey, filters: Filters, first_only: bool = True,
               loaded: LoadedDrill | None = None, variant_min_n: int = VARIANT_MIN_N) -> pd.DataFrame:
    """One row per question over every variant (variant "all"), then, when the selection drew more than one
    variant, one per (question, variant); with option shares for choice questions and the flags.

    `loaded` names each choice question's options, so an option nobody chose shows as 0.
    """
    head, params = _head(store, key, filters, first_only)
    stats = source.frame(store, head + "," + _STATS, params)
    columns = ["drill_id", "question_id", "position", "kind", "variant", "n", "live_n", "graded_n", "facility_pct",
               "sd_pct", "discrimination_index", "discriminative_efficiency_pct", "median_signed_error_pct", "ranges",
               "range_held_pct", "option_shares", "flags"]
    if stats.empty:
        return pd.DataFrame(columns=columns)
    picks = source.frame(store, head + _CHOICES, params + [NO_ANSWER])
    stats["option_shares"] = _option_shares(stats, picks, loaded)
    variants = sorted(g for g in stats["grp"].unique() if g >= 0)
    if len(variants) < 2:
        stats = stats[stats["grp"] < 0]
    stats = stats.copy()
    stats["flags"] = _flags(stats, variant_min_n)
    stats.insert(0, "drill_id", key.drill_id)
    stats["variant"] = _variant_column(stats["grp"])
    stats["ranges"] = stats["ranges"].astype(int)
    stats["n"] = stats["n"].astype(int)
    stats["live_n"] = stats["live_n"].astype(int)
    stats["graded_n"] = stats["graded_n"].astype(int)
    order = stats.assign(_g=stats["grp"]).sort_values(["position", "_g"], kind="stable")
    return order[columns].reset_index(drop=True)


def _option_shares(stats: pd.DataFrame, picks: pd.DataFrame, loaded: LoadedDrill | None) -> list[str]:
    """Per row, the share of its attempts choosing each option as JSON (option id -> share of n), in the
    drill's option order, then nothing chosen; "" for questions that are not choice questions."""
    options: dict[str, list[str]] = {}
    if loaded is not None:
        options = {q.id: [o.id for o in q.options] for q in loaded.drill.all_questions()
                   if isinstance(q, ChoiceQuestion)}
    counts: dict[tuple[int, str], dict[str, int]] = {}
    for row in picks.itertuples(index=False):
        counts.setdefault((int(row.grp), row.question_id), {})[row.option] = int(row.picked)
    out = []
    for row in stats.itertuples(index=False):
        if row.kind != "choice":
            out.append("")
            continue
        got = counts.get((int(row.grp), row.question_id), {})
        names = options.get(row.question_id, sorted(o for o in got if o != NO_ANSWER))
        names = names + sorted(o for o in got if o not in names and o != NO_ANSWER) + [NO_ANSWER]
        out.append(json.dumps({o: got.get(o, 0) / row.n for o in names}))
    return out


def _flags(stats: pd.DataFrame, variant_min_n: int = VARIANT_MIN_N) -> list[str]:
    """Each row's flags, "; "-joined: dubious (below 15% efficiency), too hard or too easy by facility, and,
    on the whole row and on each variant more than 20 points from another, variants differ (only variants
    with `variant_min_n` attempts or more are compared). A row with fewer than FLAG_MIN_N graded answers (a
    note counts once it is rated) gets no flag: its facility says nothing yet."""
    variant_rows = stats[(stats["grp"] >= 0) & (stats["n"] >= variant_min_n)]
    spread = variant_rows.groupby("question_id")["facility_pct"].agg(["min", "max"])
    out = []
    for row in stats.itertuples(index=False):
        flags = []
        if row.graded_n < FLAG_MIN_N:
            out.append("")
            continue
        if pd.notna(row.discriminative_efficiency_pct) and row.discriminative_efficiency_pct < DUBIOUS_BELOW:
            flags.append(FLAG_DUBIOUS)
        if row.facility_pct < TOO_HARD_BELOW:
            flags.append(FLAG_HARD)
        elif row.facility_pct > TOO_EASY_ABOVE:
            flags.append(FLAG_EASY)
        if row.question_id in spread.index:
            low, high = spread.loc[row.question_id]
            far = high - low if row.grp < 0 else max(row.facility_pct - low, high - row.facility_pct)
            if far > VARIANT_GAP and (row.grp < 0 or row.n >= variant_min_n):
                flags.append(FLAG_VARIANTS)
        out.append("; ".join(flags))
    return out


def alpha(store: AttemptStore, key: DrillKey, filters: Filters, first_only: bool = True) -> pd.DataFrame:
    """Cronbach's alpha (%) over the selection (variant "all") and within each variant drawn: n, items."""
    head, params = _head(store, key, filters, first_only)
    df = source.frame(store, head + _ALPHA.format(zero=_ZERO), params)
    out = pd.DataFrame({"drill_id": key.drill_id, "variant": _variant_column(df["grp"]),
                        "n": df["n"].astype(int), "items": df["items"].astype(int), "alpha_pct": df["alpha_pct"]})
    return out


# -- drills and scopes -----------------------------------------------------------------------
def scoped_drill_ids(store: AttemptStore, base_id: str) -> list[str]:
    """The drill ids with attempts that are `base_id` itself or one of its scopes (drills.scope)."""
    from drills.scope import SEPARATOR

    return [r[0] for r in source.rows(
        store, "SELECT DISTINCT drill_id FROM attempts WHERE drill_id = ? OR starts_with(drill_id, ?) ORDER BY 1",
        [base_id, base_id + SEPARATOR])]


def loaded_for(catalogue_drills, drill_id: str) -> LoadedDrill | None:
    """The LoadedDrill an attempt at `drill_id` took: a catalogue drill, or one of its scopes."""
    from drills.scope import scope_drill, split_id

    base, scope = split_id(drill_id)
    loaded = catalogue_drills.get(base)
    if loaded is None:
        return None
    try:
        return scope_drill(loaded, scope)
    except KeyError:
        return None


def key_for(store: AttemptStore, loaded: LoadedDrill,
            sim_truths: Callable[[LoadedDrill], dict] | None) -> DrillKey:
    """The grading key for the variants `loaded`'s attempts drew (their simulations run once each)."""
    from drills.reports.aggregates import variants_drawn

    return DrillKey.from_loaded(loaded, sim_truths, variants_drawn(store, loaded.drill.id))


def alpha_by_scope(store: AttemptStore, catalogue_drills, base_id: str, filters: Filters,
                   sim_truths: Callable[[LoadedDrill], dict] | None, first_only: bool = True) -> pd.DataFrame:
    """Cronbach's alpha over every variant for the drill and each of its scopes that has attempts."""
    frames = []
    for drill_id in scoped_drill_ids(store, base_id):
        loaded = loaded_for(catalogue_drills, drill_id)
        if loaded is None:
            continue
        scoped = Filters(drill_id, filters.cohort, filters.since, filters.until)
        table = alpha(store, key_for(store, loaded, sim_truths), scoped, first_only)
        frames.append(table[table["variant"] == ALL])
    columns = ["drill_id", "variant", "n", "items", "alpha_pct"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


# -- command line ----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m drills.reports.items", description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a DuckDB file or a postgresql:// URL")
    parser.add_argument("--drill", required=True, help="drill id, or a scope of one (one_tenant~essentials)")
    parser.add_argument("--cohort", default=None, help="only candidates of this cohort")
    parser.add_argument("--all-attempts", action="store_true",
                        help="every finished attempt, each as if by a different candidate (default: first attempts)")
    parser.add_argument("--csv", action="store_true", help="CSV on stdout, one row per question and variant")
    args = parser.parse_args(argv)

    from drills.demo import open_problem, reference_sim_truths
    from drills.loader import load_catalogue
    from drills.reports.exports import to_csv_bytes
    from drills.backends import open_store

    catalogue = load_catalogue()
    loaded = loaded_for(catalogue.drills, args.drill)
    if loaded is None:
        parser.error(f"no drill {args.drill!r}; installed: {', '.join(catalogue.drills) or 'none'}")
    try:
        store = open_store(args.db)
    except Exception as problem:   # one line, not a traceback: a locked file or an unreachable server
        print(f"python -m drills.reports.items: {open_problem(args.db, problem)}", file=sys.stderr)
        return 1
    try:
        key = key_for(store, loaded, reference_sim_truths)
        filters = Filters(loaded.drill.id, args.cohort)
        first_only = not args.all_attempts
        table = item_stats(store, key, filters, first_only, loaded)
        alphas = alpha(store, key, filters, first_only)
    finally:
        store.close()
    which = "every finished attempt" if args.all_attempts else "first attempts"
    for row in alphas.itertuples(index=False):
        value = "n/a" if pd.isna(row.alpha_pct) else f"{row.alpha_pct:.1f}%"
        print(f"# {row.drill_id} variant {row.variant}: Cronbach's alpha {value} over {row.n} {which}, "
              f"{row.items} questions", file=sys.stderr)
    if args.csv:
        sys.stdout.buffer.write(to_csv_bytes(table))
    else:
        print(table.to_string(index=False) if not table.empty else f"No finished attempts at {args.drill}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
