"""The board's Across drills tab in AppTest: its tables say what drills.reports.across computes, handles stay
plain text, and a cohort with no attempts gets the empty state instead of a chart."""
from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from drills.demo import populate
from drills.loader import load_catalogue
from drills.reports import across, aggregates
from drills.reports.grading_key import DrillKey
from drills.schema import NumericQuestion
from drills.scope import ScopedDrills
from drills.store import AttemptStore
from ui.drill.attempt_view import sim_truths_of

DRILLS = ScopedDrills(load_catalogue().drills)
IDS = ("one_tenant", "retry_chain~essentials")
NOW = 1_790_000_000.0


def _truths(drill_id):
    return {q.id: 100.0 for q in DRILLS[drill_id].drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("across_tab") / "class.duckdb"
    store = AttemptStore(path)
    for seed, drill_id in enumerate(IDS):
        populate(store, DRILLS[drill_id], candidates=6, cohorts=("north", "south"), seed=5 + seed, now=NOW,
                 sim_truths=_truths(drill_id))
    store.close()
    return path


def _tab(cohort) -> None:
    from drills.reports.source import Filters
    from ui.context import get_catalogue, get_store
    from ui.instructor.across import render_across
    from ui.instructor.board import Board

    render_across(Board(get_store(), get_catalogue().drills["one_tenant"], Filters("one_tenant", cohort), "Prof"))


def _run(cohort) -> AppTest:
    at = AppTest.from_function(_tab, args=(cohort,), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_tab_shows_each_drill_and_the_shared_skills(db_path, template):
    shutil.copy(template, db_path)
    at = _run("north")
    drills = next(d.value for d in at.dataframe if "Median score %" in d.value.columns)
    assert sorted(drills["Drill id"]) == ["one_tenant", "retry_chain"]   # the essentials path rolled up
    store = AttemptStore(db_path)
    try:
        ids = [d for d in aggregates.drills_by_activity(store)]
        expected = across.across_drills(
            store, ids, lambda d: DrillKey.from_loaded(DRILLS[d], sim_truths_of, aggregates.variants_drawn(store, d)),
            "north", {d: [s.id for s in DRILLS[d].drill.rubric] for d in ("one_tenant", "retry_chain")}).drills
    finally:
        store.close()
    assert list(drills["Drill id"]) == list(expected["drill_id"])
    assert list(drills["Started"]) == list(expected["started"])
    assert list(drills["Finished"]) == list(expected["finished"])
    assert list(drills["Median score %"]) == pytest.approx(list(expected["median_score_pct"].round(1)), abs=0.051)   # as the board grades: sims by their reference run
    skills = next(d.value for d in at.dataframe if "Mean level" in d.value.columns)
    # Every skill two installed drills share is listed; only the two these drills teach have candidates.
    assert list(skills["Candidates"] > 0) == [False, True, True] and len(skills) == 3
    assert len(at.get("plotly_chart")) == 2 and len(at.get("download_button")) == 2
    assert not [m for m in at.markdown if "<" in m.value]


def test_a_cohort_without_attempts_gets_the_empty_state(db_path, template):
    shutil.copy(template, db_path)
    at = _run("nobody")
    assert any("nothing to compare" in i.value for i in at.info)
    assert not at.get("plotly_chart") and not at.dataframe
