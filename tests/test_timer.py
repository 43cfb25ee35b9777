"""The sidebar clock's server side: the numbers it hands the browser, and when the server runs it again."""
from __future__ import annotations

import re

import pytest

from drills.store import AttemptStore
from drills.timebox import Clock
from ui.drill.browser_clock import ANNOUNCE_AT_S, ClockView, clock_markup, next_server_run_s, rendered_time_left

STARTED = 1_790_000_000.0


def _clock(limit: float, elapsed: float, finished: bool = False) -> Clock:
    return Clock(limit_s=limit, elapsed_s=elapsed, remaining_s=limit - elapsed, finished=finished)


def _markup(limit: float, elapsed: float, *, extra: float = 0.0, finished: bool = False) -> str:
    return clock_markup(ClockView(STARTED, limit, extra, STARTED + elapsed, _clock(limit, elapsed, finished)))


def test_the_markup_carries_the_stored_start_limit_and_server_time():
    body = _markup(2700, 600.4)
    assert f'data-started="{STARTED:.3f}"' in body and 'data-limit="2700.000"' in body
    assert f'data-server-now-ms="{(STARTED + 600.4) * 1000:.0f}"' in body
    assert rendered_time_left(body) == "34:59"
    assert 'aria-valuenow="22"' in body and "10:00</span> of 45:00" in body
    assert re.search(r'data-testid="fl-over-time" hidden', body)


def test_over_time_is_drawn_by_the_server_too():
    body = _markup(2700, 2790, extra=0)
    assert re.search(r'data-testid="fl-time-left" hidden', body)
    assert "Over time by <strong class=\"fl-overtime\">01:30</strong>" in body


def test_extra_time_and_a_finished_attempt():
    assert "(incl. 10:00 extra)" in _markup(3300, 60, extra=600)
    finished = _markup(2700, 1200, finished=True)
    assert 'data-finished="1"' in finished and "Time left when you finished" in finished


def test_the_script_announces_ten_five_and_one_minutes_politely():
    body = _markup(2700, 0)
    assert ANNOUNCE_AT_S == (600, 300, 60)
    assert "const MARKS = [600, 300, 60];" in body
    assert '"aria-live", "polite"' in body


@pytest.mark.parametrize("limit, elapsed, finished, expected", [
    (2700, 0, False, 2701),        # once, a second after the limit passes
    (2700, 2690, False, 30),       # seconds before the limit: floored, since Streamlit repeats the interval
    (2700, 2800, False, 3600),     # over time: nothing left to wait for
    (2700, 100, True, 3600),       # finished
])
def test_the_server_reruns_the_clock_only_when_the_limit_passes(limit, elapsed, finished, expected):
    assert next_server_run_s(_clock(limit, elapsed, finished)) == pytest.approx(expected)


def test_the_sidebar_draws_the_clock_with_numbers_only(app_test, db_path):
    store = AttemptStore(db_path)
    attempt = store.start_attempt("one_tenant", "<script>alert(1)</script>", "", 45 * 60)
    store.close()
    at = app_test("app.py")
    at.query_params["attempt"] = attempt.token
    at.run()
    assert not at.exception, at.exception
    bodies = [h.value for h in at.sidebar.html]
    shown = [rendered_time_left(b) for b in bodies if rendered_time_left(b)]
    assert len(shown) == 1
    minutes, seconds = (int(v) for v in shown[0].split(":"))
    assert 44 * 60 <= minutes * 60 + seconds <= 45 * 60
    assert not any("alert(1)" in b for b in bodies), "the handle never goes into the HTML"
    assert any("alert" in m.value for m in at.sidebar.markdown), "the handle is shown as escaped markdown"
