"""The time box is arithmetic over stored facts: reloads, restarts, overtime and extra time."""
from __future__ import annotations

from drills.loader import load_catalogue
from drills.store import AttemptStore, Event
from drills.timebox import clock_for, format_duration, pacing, planned_part, time_per_part
from tests.clock import FakeClock



def test_reload_and_restart_keep_the_same_clock(tmp_path):
    clock = FakeClock(1_000.0)
    path = tmp_path / "t.duckdb"
    store = AttemptStore(path, clock=clock)
    attempt = store.start_attempt("one_tenant", "ada", "", 45 * 60)
    clock.t += 600
    first_view = clock_for(store.attempt_by_token(attempt.token), clock.t)
    store.close()
    restarted = AttemptStore(path, clock=clock)  # a new process would do exactly this
    again = clock_for(restarted.attempt_by_token(attempt.token), clock.t)
    assert first_view == again
    assert again.remaining_s == 45 * 60 - 600


def test_running_over_is_recorded_not_blocked(tmp_path):
    clock = FakeClock(0.0)
    store = AttemptStore(tmp_path / "t.duckdb", clock=clock)
    attempt = store.start_attempt("one_tenant", "ada", "", 45 * 60)
    clock.t = 50 * 60
    store.lock_answer(attempt.id, "q", "p", "numeric", value=1)  # still accepted
    store.finish(attempt.id)
    clock.t = 90 * 60  # time after finishing does not count
    view = clock_for(store.attempt_by_token(attempt.token), clock.t)
    assert view.over and view.overtime_s == 5 * 60 and view.finished


def test_extra_time_extends_the_box(tmp_path):
    clock = FakeClock(0.0)
    store = AttemptStore(tmp_path / "t.duckdb", clock=clock)
    attempt = store.start_attempt("one_tenant", "ada", "", 45 * 60)
    store.grant_time(attempt.id, 300, granted_by="prof", reason="late start")
    store.grant_time(attempt.id, 120, granted_by="prof", reason="network")
    clock.t = 46 * 60
    view = clock_for(store.attempt_by_token(attempt.token), clock.t)
    assert view.limit_s == 45 * 60 + 420
    assert not view.over and view.remaining_s == 420 - 60


def test_pacing_is_cumulative_and_points_at_the_right_part():
    drill = load_catalogue().drills["one_tenant"].drill
    points = pacing(drill)
    assert points[-1].planned_end_s == sum(p.minutes for p in drill.parts) * 60
    assert planned_part(drill, 0) == drill.parts[0].id
    assert planned_part(drill, points[0].planned_end_s + 1) == drill.parts[1].id
    assert planned_part(drill, 10_000_000) == drill.parts[-1].id


def test_time_per_part_sums_intervals_between_opened_events():
    events = [Event(0, "started", None, {}), Event(0, "opened", "a", {}), Event(60, "opened", "b", {}),
              Event(100, "locked", "b", {}), Event(160, "opened", "a", {})]
    assert time_per_part(events, end_at=200) == {"a": 100, "b": 100}


def test_durations_format_like_a_clock():
    assert format_duration(65) == "01:05"
    assert format_duration(-30) == "-00:30"
    assert format_duration(3725) == "1:02:05"
