"""The instructor benchmark's bulk writer keeps up with the schema: its rows read back as the store's own."""
from __future__ import annotations

from bench.bench_instructor import build
from drills.loader import load_catalogue
from drills.reports import aggregates
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.store import AttemptStore


def test_the_bulk_writer_fills_every_column_and_mixes_variants(tmp_path):
    db = tmp_path / "bench.duckdb"
    made = build(db, answers=3_000, candidates=20)
    store = AttemptStore(db)
    attempts = store.attempts(drill_id="one_tenant")
    assert len(attempts) == made["attempts"] and {a.variant for a in attempts} - {0}, "retakes on variants"
    loaded = load_catalogue().drills["one_tenant"]
    key = DrillKey.from_loaded(loaded, {q.id: 100.0 for q in loaded.drill.all_questions() if getattr(q, "sim", None)},
                               {a.variant for a in attempts})   # the key holds the draws the attempts made
    summary = aggregates.attempt_summary(store, key, Filters("one_tenant"))
    assert len(summary) == made["attempts"] and summary["answered"].sum() == made["answers"]
