"""AppTest runs of the PostgreSQL lab page: empty state, guess then Play on a live server, ?experiment=.

The page uses the session's embedded server (FAULTLINES_PG_URL) instead of starting its own.
"""
from __future__ import annotations

import json

import pytest

from tests.test_sim_pages import lock_and_play
from ui.labs.pg_lab import EXPERIMENT, PG_URL_ENV


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "error")
                     for e in getattr(at, kind))


@pytest.fixture
def lab_page(app_test, pg_url, monkeypatch):
    monkeypatch.setenv(PG_URL_ENV, pg_url)

    def open_page(**query):
        at = app_test("pages/pg_lab.py")   # standalone, as st.navigation loads it (see tests/test_sim_pages.py)
        for key, value in query.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        return at

    return open_page


def test_page_opens_on_an_empty_state_with_play_locked(lab_page):
    at = lab_page()
    assert "Nothing has run yet" in _texts(at)
    assert at.button(key="play::pg_lab.cap_race").disabled
    assert not [c for c in at.get("plotly_chart") if json.loads(c.proto.spec).get("data")]


def test_cap_race_guess_then_play_shows_the_distribution_and_verdict(lab_page):
    at = lab_page()
    at.slider(key="pg_lab::cap_race::runs").set_value(2).run()
    at.slider(key="pg_lab::cap_race::workers").set_value(6).run()
    lock_and_play(at, "pg_lab.cap_race", 21)
    text = _texts(at)
    assert "The counter row stopped at **20** every time" in text
    assert [m.label for m in at.metric][:2] == ["Your guess", "Simulation"]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = {trace.get("name") for spec in charts for trace in spec.get("data", [])}
    assert {"count in a subquery", "counter row"} <= names


def test_a_link_opens_the_refund_experiment_and_runs_it(lab_page):
    at = lab_page(**{EXPERIMENT: "refunds"})
    assert at.selectbox(key=EXPERIMENT).value == "refunds"
    at.slider(key="pg_lab::refunds::jobs").set_value(3).run()
    lock_and_play(at, "pg_lab.refunds", 12)
    assert "the four paths paid **3** refunds for 3 failed jobs" in _texts(at)
