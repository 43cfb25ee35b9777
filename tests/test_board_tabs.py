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
from drills.backends import open_store
from drills.store import AttemptStore

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
    from ui.instructor.board import Board

    board = Board(get_store(), get_catalogue().drills["one_tenant"], Filters("one_tenant", cohort), "Prof Test")
    render = getattr(importlib.import_module(module), function)
    render(board, board.leaderboard()) if function == "render_time_heatmap" else render(board)


def _run(module: str, function: str, cohort=None) -> AppTest:
    at = AppTest.from_function(_tab, args=(module, function, cohort), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def _frame_with(at, column: str) -> pd.DataFrame:
    return next(d.value for d in at.dataframe if column in d.value.columns)


# -- items ------------------------------------------------------------------------------------
def test_items_tab_shows_a_row_per_question_alpha_and_the_options_chart(class_db):
    at = _run("ui.instructor.items", "render_items")
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


# -- integrity ----------------------------------------------------------------------------------
def test_integrity_counts_what_each_timeline_flags_and_the_demo_peeks_in_a_realistic_share(class_template):
    store = AttemptStore(class_template)
    try:
        table = integrity(store, LOADED, Filters("one_tenant"))
        assert len(table) == len(store.attempts(drill_id="one_tenant"))
        for row in table.to_dict("records"):
            rows = timeline(LOADED, store.events(row["attempt_id"]), store.answers(row["attempt_id"]))
            assert row["reveals_before_lockin"] == sum(r.early for r in rows if r.kind == "revealed")
            assert row["sims_before_lockin"] == sum(r.early for r in rows if r.kind != "revealed")
        looked = ((table["sims_before_lockin"] + table["reveals_before_lockin"]) > 0).mean()
        assert 0.03 < looked < 0.35                   # a few candidates peek; most do not
        assert table["hints_opened"].sum() > 0 and table["hint_cost"].sum() > 0
        assert table["results_views"].sum() > 0 and (table["overtime_s"] > 0).any()
        assert len(integrity(store, LOADED, Filters("one_tenant", "north"))) < len(table)
    finally:
        store.close()


@pytest.fixture(params=["duckdb", "postgres"])
def store(request, tmp_path):
    opened = (AttemptStore(tmp_path / "tabs.duckdb") if request.param == "duckdb"
              else open_store(request.getfixturevalue("pg_url")))
    yield opened
    opened.close()


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now


def test_one_attempt_counted_by_hand_on_both_backends(store):
    clock = Clock()
    store.clock = clock
    board = LOADED.drill.part("board")
    attempt = store.start_attempt("one_tenant", "ann", "north", 600, seed=1)
    store.log_event(attempt.id, "opened", "board")
    clock.now += 60
    store.log_event(attempt.id, "sim_opened", None, {"page": "sim_hot_shard", "questions": ["f1_sim_hot_4"]})
    store.log_event(attempt.id, "sim_opened", None, {"page": "sim_hot_shard", "questions": []})   # nothing open
    hinted = next(q for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.hints)
    store.open_hint(attempt.id, hinted.id, "break1", 0)
    store.lock_answer(attempt.id, hinted.id, "break1", "numeric", value=1.0,
                      hint_costs=[h.cost for h in hinted.hints])
    store.record_reveal(attempt.id, "board", board.reveal[0].stage)         # board's questions still open
    clock.now += 5
    for q in board.questions:
        store.lock_answer(attempt.id, q.id, "board", q.kind, value=1.0)
    store.record_reveal(attempt.id, "board", board.reveal[-1].stage)        # after: not early
    store.log_event(attempt.id, "results_viewed")
    clock.now += 600                                                         # 665 s in: past the 600 s box and 30 s granted
    store.lock_answer(attempt.id, "b1_arrivals", "break1", "numeric", value=2.0)
    store.grant_time(attempt.id, 30, granted_by="Prof")
    store.add_rubric_score(attempt.id, "noisy_tenant", "strong", scorer="self", scorer_name="ann")
    store.finish(attempt.id)
    row = integrity(store, LOADED, Filters("one_tenant")).iloc[0]
    assert (row["sims_before_lockin"], row["reveals_before_lockin"], row["hints_opened"], row["results_views"],
            row["late_lockins"]) == (1, 1, 1, 1, 1)
    assert row["hint_cost"] == pytest.approx(hinted.hints[0].cost)
    assert row["overtime_s"] == pytest.approx(665 - 600 - 30)
    # Time per part: the board from its opening to the next 'opened' (none), so to the finish.
    key = DrillKey.from_loaded(LOADED, SIM_TRUTHS)
    spent = aggregates.time_per_attempt(store, key, Filters("one_tenant"))
    assert list(spent["part_id"]) == ["board"] and spent["minutes"].iloc[0] == pytest.approx(665 / 60)
    # The grader gap: ann said strong; two instructors say ok, then weak (the latest counts against hers).
    clock.now += 10
    store.add_rubric_score(attempt.id, "noisy_tenant", "ok", scorer="instructor", scorer_name="Prof A", reason="a")
    clock.now += 10
    store.add_rubric_score(attempt.id, "noisy_tenant", "weak", scorer="instructor", scorer_name="Prof B", reason="b")
    gap = grader_gap.gap_by_skill(store, Filters("one_tenant")).iloc[0]
    assert (gap["skill_id"], gap["pairs"], gap["mean_gap"], gap["self_higher"]) == ("noisy_tenant", 1, -2.0, 1.0)
    two = grader_gap.instructor_agreement(store, Filters("one_tenant")).iloc[0]
    assert (two["pairs"], two["agree"], two["mean_apart"]) == (1, 0.0, 1.0)
    apart = grader_gap.instructor_disagreements(store, Filters("one_tenant")).iloc[0]
    assert (apart["first_name"], apart["first_level"], apart["second_name"], apart["second_level"]) == \
        ("Prof A", "ok", "Prof B", "weak")


def test_the_demo_moderates_some_overrides(class_template):
    store = AttemptStore(class_template)
    try:
        agreement = grader_gap.instructor_agreement(store, Filters("one_tenant"))
        assert agreement["pairs"].sum() > 0
        names = {r[0] for r in store.query("SELECT DISTINCT scorer_name FROM rubric_scores "
                                           "WHERE scorer = 'instructor'").fetchall()}
        assert SECOND_INSTRUCTOR in names
        assert len(grader_gap.gap_by_skill(store, Filters("one_tenant"))) > 0
    finally:
        store.close()


def test_integrity_tab_lists_flagged_attempts_and_opens_a_timeline(class_db):
    at = _run("ui.instructor.integrity", "render_integrity")
    table = _frame_with(at, "Reveals before lock-in")
    assert len(table) > 0 and all(link.startswith("?timeline=") for link in table["Timeline"])
    looked = table["Sims before lock-in"] + table["Reveals before lock-in"] + table["Results viewed while open"]
    assert ((looked > 0) | (table["Past the box (min)"] > 0)).all()
    # It opens on the peeks: every attempt that looked comes before every one that only ran past the box.
    assert (looked > 0).any() and (looked == 0).any()
    assert list(looked) == sorted(looked, reverse=True)
    at.toggle[0].set_value(False).run()
    assert len(_frame_with(at, "Reveals before lock-in")) > len(table)


def test_time_tab_draws_a_heatmap_with_the_median_on_top(class_db):
    at = _run("ui.instructor.times", "render_time_heatmap")
    chart = at.get("plotly_chart")[0]
    import json as _json

    spec = _json.loads(chart.proto.spec)
    heat = spec["data"][0]
    assert heat["type"] == "heatmap" and heat["y"][0] == "<b>median</b>"
    assert len(heat["x"]) == len(LOADED.drill.parts)


def test_grader_gap_tab_shows_the_gap_and_two_instructors(class_db):
    at = _run("ui.instructor.gap", "render_gap")
    assert len(_frame_with(at, "Self higher %")) > 0
    assert len(_frame_with(at, "Mean distance (levels)")) > 0



def test_a_timeline_link_opens_its_attempt_on_the_attempt_tab(class_db):
    from ui import keys

    store = AttemptStore(class_db)
    attempt = store.attempts(drill_id="one_tenant")[-1]
    store.close()
    at = AppTest.from_function(_tab, args=("ui.instructor.integrity", "follow_timeline_link", None),
                               default_timeout=120)
    at.query_params["timeline"] = str(attempt.id)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[keys.INSTRUCTOR_VIEW] == "Attempt"
    assert at.session_state[keys.INSTRUCTOR_CANDIDATE] == attempt.candidate_id
    assert at.session_state[keys.instructor_attempt(attempt.candidate_id)] == attempt.id
    assert "timeline" not in at.query_params
    stranger = AppTest.from_function(_tab, args=("ui.instructor.integrity", "follow_timeline_link", None),
                                     default_timeout=120)
    stranger.query_params["timeline"] = "999999999"
    stranger.run()
    assert any("names no attempt" in w.value for w in stranger.warning)
