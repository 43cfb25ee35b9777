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


# -- time an outage of the store cost, given back by the system -------------------------------------------
from drills.timebox import clock_for, outage_spans  # noqa: E402 (the outage half of this file)


def test_an_outage_is_owed_only_where_the_attempt_was_running_through_it():
    # started at 100 with a 45-minute box; the store away from 1000 to 1300
    assert outage_spans(100, None, 2700, 1000, 1300, []) == [(1000, 1300)]
    assert outage_spans(1100, None, 2700, 1000, 1300, []) == [(1100, 1300)], "started during it: from its start"
    assert outage_spans(100, 1200, 2700, 1000, 1300, []) == [(1000, 1200)], "finished during it: to its finish"
    assert outage_spans(100, 900, 2700, 1000, 1300, []) == [], "finished before it"
    assert outage_spans(1400, None, 2700, 1000, 1300, []) == [], "started after it"
    assert outage_spans(100, None, 600, 1000, 1300, []) == [], "its time box ran out before the outage began"


def test_what_another_process_gave_back_is_not_given_again():
    assert outage_spans(100, None, 2700, 1000, 1300, [(1000, 1300)]) == []
    assert outage_spans(100, None, 2700, 1000, 1300, [(990, 1200)]) == [(1200, 1300)]
    assert outage_spans(100, None, 2700, 1000, 1300, [(1050, 1100), (1200, 1250)]) == [
        (1000, 1050), (1100, 1200), (1250, 1300)]


def test_an_outage_is_given_back_once_as_a_grant_by_the_system_and_shown_with_the_others(store):
    running = store.start_attempt("one_tenant", "zed", "north", 45 * 60)
    finished = store.start_attempt("one_tenant", "amy", "north", 45 * 60)
    store.finish(finished.id)
    down_at = store.clock() + 100
    up_at = down_at + 31
    assert store.give_back_outage(down_at, up_at) == 1
    (grant,) = grant_history(store, running.id)
    assert grant.granted_by == "system" and grant.minutes * 60 == pytest.approx(31)
    assert "could not be reached" in grant.reason and "00:31 given back" in grant.reason
    assert store.attempt_by_id(running.id).extra_s == pytest.approx(31)
    assert grant_history(store, finished.id) == [], "a finished attempt lost nothing"

    # the same outage again (another process saw it a little longer): only the extra 4 s
    assert store.give_back_outage(down_at - 4, up_at) == 1
    assert store.give_back_outage(down_at - 4, up_at) == 0
    assert store.attempt_by_id(running.id).extra_s == pytest.approx(35)
    clock = clock_for(store.attempt_by_id(running.id), up_at)
    assert clock.limit_s == pytest.approx(45 * 60 + 35)
    assert [event.kind for event in store.events(running.id)].count("extra_time") == 2


def test_two_processes_giving_back_one_outage_at_once_give_its_union(pg_url):
    """Two stores (two pools, as two app processes) on one PostgreSQL, each with its own view of the outage."""
    import threading

    from drills.backends import open_store

    first, second = open_store(pg_url), open_store(pg_url)
    try:
        attempt = first.start_attempt("one_tenant", "zed", "north", 45 * 60)
        down_at = attempt.started_at + 60
        barrier = threading.Barrier(2)

        def give(store, low, high):
            barrier.wait()
            store.give_back_outage(low, high)

        threads = [threading.Thread(target=give, args=(first, down_at, down_at + 30)),
                   threading.Thread(target=give, args=(second, down_at + 3, down_at + 32))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert first.attempt_by_id(attempt.id).extra_s == pytest.approx(32), "the union of both views, once"
        assert {g.granted_by for g in grant_history(first, attempt.id)} == {"system"}
    finally:
        first.close()
        second.close()
