"""The board's issue-22 tabs in AppTest (Items, Integrity, Time per candidate, Grader gap), drawn for a demo
class through the board's own Board object, and the reports behind Integrity, Time and Grader gap.
"""
from __future__ import annotations

import shutil

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from drills.demo import SECOND_INSTRUCTOR, populate
from drills.loader import load_catalogue
from drills.reports import aggregates, grader_gap
from drills.reports.grading_key import DrillKey
from drills.reports.integrity import integrity
from drills.reports.source import Filters
from drills.reports.timeline import timeline
from drills.schema import NumericQuestion
from drills.store import AttemptStore, open_store

LOADED = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 100.0 for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
NOW = 1_790_000_000.0


@pytest.fixture(scope="module")
def class_template(tmp_path_factory):
    path = tmp_path_factory.mktemp("tabs") / "class.duckdb"
    store = AttemptStore(path)
    populate(store, LOADED, candidates=43, cohorts=("north", "south"), seed=7, now=NOW, sim_truths=SIM_TRUTHS)
    store.close()
    return path


@pytest.fixture
def class_db(db_path, class_template):
    shutil.copy(class_template, db_path)
    return db_path


def _tab(module: str, function: str, cohort) -> None:
    """The script AppTest runs: one tab of the board for one_tenant, as render_board would draw it."""
    import importlib

    from drills.reports.source import Filters
    from ui.context import get_catalogue, get_store
    from ui.instructor import Board

    board = Board(get_store(), get_catalogue().drills["one_tenant"], Filters("one_tenant", cohort), "Prof Test")
    getattr(importlib.import_module(module), function)(board)


def _run(module: str, function: str, cohort=None) -> AppTest:
    at = AppTest.from_function(_tab, args=(module, function, cohort), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _frame_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


# -- items ------------------------------------------------------------------------------------
def test_items_tab_shows_a_row_per_question_alpha_and_the_options_chart(class_db):
    at = _run("ui.instructor_items", "render_items")
    table = _frame_with(at, "Discrimination")
    graded = [q for q in LOADED.drill.all_questions() if not (isinstance(q, NumericQuestion) and q.sim)]
    assert len(table) == len(graded) + len(SIM_TRUTHS) and set(table["Numbers"]) == {"All numbers"}
    assert table["Facility %"].between(0, 100).all()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Cronbach's alpha"].endswith("%") and int(metrics["Attempts counted"]) > 30
    assert any(c.proto.spec for c in at.get("plotly_chart"))
    at.toggle[0].set_value(True).run()
    assert len(_frame_with(at, "Discrimination")) > len(table)      # the variants' rows join in
    at.radio[0].set_value("all").run()
    assert not at.exception
    assert int({m.label: m.value for m in at.metric}["Attempts counted"]) > int(metrics["Attempts counted"])
