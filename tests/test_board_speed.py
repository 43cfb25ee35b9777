"""The instructor board stays quick with variants: answers meet the grading key already carrying their
attempt's variant, and the board's key runs the simulations of the variants attempts drew, no others.
"""
from __future__ import annotations

import json

import pytest

from bench.bench_instructor import build
from drills.loader import load_catalogue
from drills.reports import aggregates, source
from drills.reports.exports import export_answers
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.schema import NumericQuestion
from drills.store import AttemptStore

ONE_TENANT = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 100.0 for q in ONE_TENANT.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}


def _joins(plan) -> list[list[str]]:
    """The conditions of every join in a DuckDB JSON plan."""
    out = []
    for node in plan if isinstance(plan, list) else [plan]:
        conditions = node.get("extra_info", {}).get("Conditions")
        if conditions:
            out.append(conditions if isinstance(conditions, list) else [conditions])
        out.extend(_joins(node.get("children", [])))
    return out


def test_no_grading_report_joins_the_attempts_to_the_key_on_the_variant_alone(tmp_path, monkeypatch):
    # Joined on the variant alone, every attempt meets every key row of its variant (680k rows on the
    # million-answer board) before the answers come in: question_errors took twice as long.
    db = tmp_path / "board.duckdb"
    build(db, answers=3_000, candidates=20)
    store = AttemptStore(db)
    key = DrillKey.from_loaded(ONE_TENANT, SIM_TRUTHS)
    sent = []
    real_frame = source.frame
    monkeypatch.setattr(source, "frame", lambda s, sql, params=None: sent.append((sql, params)) or real_frame(
        s, sql, params))
    everyone = Filters("one_tenant")
    for report in (aggregates.question_errors, aggregates.question_sample, aggregates.calibration_by_skill,
                   export_answers):
        report(store, key, everyone)
    grading = [(sql, params) for sql, params in sent if "qkey" in sql]
    assert len(grading) == 4
    for sql, params in grading:
        joins = _joins(json.loads(store.query("EXPLAIN (FORMAT json) " + sql, params).fetchone()[1]))
        on_variant = [c for c in joins if any("variant" in part for part in c)]
        assert on_variant, "answers are graded against their attempt's variant"
        assert all(any("question_id" in part for part in c) for c in on_variant), on_variant
    store.close()
