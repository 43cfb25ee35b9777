"""Exports of the filtered cohort: every graded answer, or one row per attempt, as CSV or Parquet bytes."""
from __future__ import annotations

import io

import pandas as pd

from drills.reports import source
from drills.reports.aggregates import attempt_summary
from drills.reports.grading_key import GRADED, RATINGS, DrillKey, key_ctes
from drills.reports.source import Filters, with_ctes
from drills.store import AttemptStore


def export_answers(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    head, params = with_ctes(filters.sql(), key_ctes(store, key), RATINGS, GRADED)
    sql = head + """
        SELECT att.attempt_id, att.handle, att.cohort, att.variant, g.part_id, g.question_id, g.kind, g.value, g.low, g.high,
               g.choice, g.notes, g.skipped, to_timestamp(g.locked_at) AS locked_at, g.truth,
               COALESCE(g.score, r.note_score) AS score, g.in_range
        FROM graded g JOIN att USING (attempt_id)
        LEFT JOIN rated r ON r.attempt_id = g.attempt_id AND r.question_id = g.question_id
        ORDER BY att.started_at, att.attempt_id, g.position"""
    return _with_numbers(source.frame(store, sql, params), key)


def _with_numbers(df: pd.DataFrame, key: DrillKey) -> pd.DataFrame:
    """Beside each row's `variant`, the numbers that attempt drew (every attempt draws its own)."""
    if "variant" in df.columns:
        df.insert(df.columns.get_loc("variant") + 1, "numbers", df["variant"].map(dict(key.numbers)))
    return df


def export_attempts(store: AttemptStore, key: DrillKey, filters: Filters) -> pd.DataFrame:
    df = attempt_summary(store, key, filters)
    for column in ("started_at", "finished_at"):
        df[column] = pd.to_datetime(df[column], unit="s", utc=True)
    return _with_numbers(df, key)


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
