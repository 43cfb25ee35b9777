"""Extra-time grants: raw minutes checked from text, finished attempts refused, history read back in order."""
from __future__ import annotations

import pytest

from drills import instructor_actions as actions
from drills.answers import InputError
from drills.reports.timeline import grant_history
from drills.store import AttemptStore


@pytest.fixture
def store(tmp_path):
    ticks = iter(range(1_000, 100_000, 10))
    s = AttemptStore(tmp_path / "grants.duckdb", clock=lambda: float(next(ticks)))
    yield s
    s.close()


def test_grants_are_stored_and_read_back_oldest_first(store):
    attempt = store.start_attempt("one_tenant", "zed", "north", 45 * 60)
    other = store.start_attempt("one_tenant", "amy", "north", 45 * 60)
    assert grant_history(store, attempt.id) == []
    assert actions.grant_extra_time(store, attempt, "15", "Prof Ada", "fire alarm") == 15
    assert actions.grant_extra_time(store, attempt, " 2.5 ", "Prof Bo") == 2.5
    actions.grant_extra_time(store, other, "5", "Prof Ada", "<b>not html</b>")
    history = grant_history(store, attempt.id)
    assert [(g.granted_by, g.minutes, g.reason) for g in history] == [("Prof Ada", 15.0, "fire alarm"),
                                                                      ("Prof Bo", 2.5, "")]
    assert history[0].granted_at < history[1].granted_at
    assert store.attempt_by_id(attempt.id).extra_s == 17.5 * 60
    assert [g.reason for g in grant_history(store, other.id)] == ["<b>not html</b>"]


@pytest.mark.parametrize("raw", ["1e400", "nan", "NaN", "inf", "-inf", "-5", "0", "241", "1e9", "", "  ", "ten", None])
def test_bad_minutes_are_refused_and_nothing_is_stored(store, raw):
    attempt = store.start_attempt("one_tenant", "zed", "north", 45 * 60)
    with pytest.raises(InputError):
        actions.grant_extra_time(store, attempt, raw, "Prof Ada")
    assert grant_history(store, attempt.id) == []
    assert store.attempt_by_id(attempt.id).extra_s == 0


def test_a_finished_attempt_is_refused(store):
    attempt = store.start_attempt("one_tenant", "zed", "north", 45 * 60)
    store.finish(attempt.id)
    finished = store.attempt_by_id(attempt.id)
    with pytest.raises(InputError, match="already finished"):
        actions.grant_extra_time(store, finished, "10", "Prof Ada")
    assert grant_history(store, attempt.id) == []
