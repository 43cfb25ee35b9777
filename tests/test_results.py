"""The results view: readable guess chart, a table that fits, calibration and verdict in the drill's words."""
from __future__ import annotations

import math

import pytest

from drills import scoring
from drills.loader import load_catalogue
from drills.store import AttemptStore
from ui.drill import results as view_results
from ui.drill.attempt_view import AttemptView


@pytest.fixture
def hot_tenant():
    return load_catalogue().drills["hot_tenant"]


def _attempt(db_path, loaded, factors: dict[str, float], *, with_range=True, scores=None):
    """An attempt whose numeric guesses are the truth times a factor, each with a range of half to twice it."""
    store = AttemptStore(db_path)
    attempt = store.start_attempt(loaded.drill.id, "ada", "", 2700)
    probe = AttemptView.load(store, attempt, loaded)
    parts = scoring._part_of(loaded.drill)
    for question_id, factor in factors.items():
        truth = loaded.truth(question_id, probe.sim_values)
        guess = truth * factor
        store.lock_answer(attempt.id, question_id, parts[question_id], "numeric", value=guess,
                          low=guess / 2 if with_range else None, high=guess * 2 if with_range else None)
    for skill_id, level in (scores or {}).items():
        store.add_rubric_score(attempt.id, skill_id, level)
    store.finish(attempt.id)
    return store, store.attempt_by_id(attempt.id)


@pytest.mark.parametrize("low, high", [(0, 4), (1.3, 2.7), (-3, 6.5), (1.85, 2.15)])
def test_tick_labels_say_percent_and_never_repeat(low, high):
    ticks = view_results.percent_ticks(low, high)
    labels = [view_results.percent_text(t) for t in ticks]
    assert all(label.endswith("%") for label in labels)
    assert len(set(labels)) == len(labels), labels          # "2" can no longer mean 20% and 2000%
    assert all(low <= math.log10(t) <= high for t in ticks)


def test_short_spans_tick_symmetrically_about_the_truth():
    labels = [view_results.percent_text(t) for t in view_results.percent_ticks(math.log10(15), math.log10(700))]
    assert labels == ["20%", "50%", "100%", "200%", "500%"]
    assert view_results.percent_text(0.05) == "0.05%" and view_results.percent_text(10_000) == "10,000%"


def test_guess_chart_labels_ticks_and_keeps_a_guess_100_times_too_high_on_the_axis(db_path, hot_tenant):
    store, attempt = _attempt(db_path, hot_tenant, {"b_deficit": 1.0, "b_fleet_util": 100.0, "b_hot_load": 0.2})
    view = AttemptView.load(store, attempt, hot_tenant)
    results = view.results()
    fig = view_results.guess_figure(view, results)
    axis = fig.layout.xaxis
    assert axis.type == "log" and "% of the truth" in axis.title.text
    assert list(axis.ticktext) == [view_results.percent_text(v) for v in axis.tickvals]
    assert "100%" in axis.ticktext and "10,000%" in axis.ticktext
    low, high = axis.range
    assert low < math.log10(20 / 2) and high > math.log10(10_000 * 2)   # the far guess and its range fit
    guesses = fig.data[0]
    numbers = {r.question_id: n for n, r in enumerate(results, start=1)}
    table = view_results.results_table(view, results)
    labels = [a.text for a in fig.layout.annotations]
    assert list(guesses.y) == [0, 1, 2] and [a.y for a in fig.layout.annotations] == [0, 1, 2]
    assert fig.layout.yaxis.showticklabels is False, "labels sit above their rows, not in a margin"
    for label, hover, question_id in zip(labels, guesses.hovertext, ("b_deficit", "b_fleet_util", "b_hot_load")):
        number = numbers[question_id]
        assert label.startswith(f"{number}. ") and len(label) <= 64
        assert table.loc[table["#"] == number, "Question"].item().startswith(label.split(". ", 1)[1].rstrip("…"))
        assert "vs truth" in hover
    prompt = view.text(hot_tenant.drill.question("b_fleet_util").prompt)
    assert prompt.split()[-1] in guesses.hovertext[1]                        # the full prompt is in the hover
    assert "100× the truth" in guesses.hovertext[1]
    assert all(a.font.size >= 12 for a in fig.layout.annotations)


def test_the_truth_line_spans_the_chart_with_a_single_guess(db_path, hot_tenant):
    store, attempt = _attempt(db_path, hot_tenant, {"b_deficit": 3.0})
    view = AttemptView.load(store, attempt, hot_tenant)
    fig = view_results.guess_figure(view, view.results())
    truth = fig.data[1]
    assert list(truth.x) == [100, 100] and truth.yaxis == "y2" and list(fig.layout.yaxis2.range) == [0, 1]
    assert {"50%", "100%", "200%"} <= set(fig.layout.xaxis.ticktext)


def test_results_table_fits_1300_px_and_keeps_every_column(db_path, hot_tenant):
    store, attempt = _attempt(db_path, hot_tenant, {"b_deficit": 1.0})
    view = AttemptView.load(store, attempt, hot_tenant)
    table = view_results.results_table(view, view.results())
    assert list(table.columns) == ["#", "Part", "Question", "Your answer", "Truth", "Score", "Range held"]
    widths = [view_results.RESULTS_COLUMNS[c]["width"] for c in table.columns]
    assert all(isinstance(w, int) for w in widths)
    # the main column is about 840 px wide beside the sidebar at a 1300 px window
    assert sum(widths) <= 820, sum(widths)
    assert view_results.RESULTS_ROW_HEIGHT > 64            # Streamlit wraps text only above 4rem rows
    assert table["#"].tolist() == list(range(1, len(table) + 1))


def test_results_table_says_why_a_mark_is_blank_instead_of_none(db_path, hot_tenant):
    store = AttemptStore(db_path)
    attempt = store.start_attempt(hot_tenant.drill.id, "ada", "", 2700)
    parts = scoring._part_of(hot_tenant.drill)
    notes = next(q for q in hot_tenant.drill.all_questions() if q.kind == "notes")
    store.lock_answer(attempt.id, notes.id, parts[notes.id], "notes", notes="spread the tenant, then drain")
    store.lock_answer(attempt.id, "b_deficit", parts["b_deficit"], "numeric", value=1.0)
    store.finish(attempt.id)
    view = AttemptView.load(store, store.attempt_by_id(attempt.id), hot_tenant)
    table = view_results.results_table(view, view.results())
    scores = dict(zip(table["#"], table["Score"]))
    numbers = {q.id: n for n, q in enumerate(hot_tenant.drill.all_questions(), start=1)}
    assert scores[numbers[notes.id]] == "not rated"
    assert scores[numbers["b_deficit"]] == "0"
    assert "None" not in set(table["Score"]) and all(isinstance(v, str) for v in table["Score"])


def _open_results(app_test, token):
    at = app_test("app.py")
    at.query_params["attempt"] = token
    at.run()
    at.switch_page("pages/results.py").run()
    assert not at.exception, at.exception
    return at


def test_results_page_uses_the_drills_level_names_and_holds_back_calibration(app_test, db_path, hot_tenant):
    skills = [s.id for s in hot_tenant.drill.rubric]
    scores = {sid: ("strong" if i == 0 else "ok") for i, sid in enumerate(skills)}
    store, attempt = _attempt(db_path, hot_tenant, {"b_deficit": 3.0}, scores=scores)
    store.close()
    at = _open_results(app_test, attempt.token)
    verdicts = [w.value for w in at.warning] + [s.value for s in at.success]
    assert any(v.startswith("Staff on 1 skill; 3 needed.") for v in verdicts), verdicts
    assert not any("strong of" in v for v in verdicts)
    captions = [c.value for c in at.caption]
    assert any("Too few ranges to judge calibration: 1 range was given" in c for c in captions), captions
    assert not any("too narrow" in c for c in captions)
    held = next(m for m in at.metric if m.label == "80% ranges that held")
    assert held.value == "0 of 1"
    table = next(d.value for d in at.dataframe if "Range held" in d.value.columns)
    assert table.loc[table["Question"].str.startswith("How many write units"), "Range held"].item() == "no"
