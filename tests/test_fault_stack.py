"""Faults on the served stack (deploy/ under supervisord), with candidates locking in over the websocket protocol.

A killed app process comes back and its candidates carry on through another one; a hung one (SIGSTOP) is found
by the watchdog, replaced, and its candidates carry on likewise; PostgreSQL stopped for 15 s, or hung for 12 s,
gives the outage page, not an exception, and every acknowledged lock-in is stored; a DuckDB app restarted
between two lock-ins stores (or visibly refuses) the first press after it. Drivers: bench/bench_faults.py.
"""
from __future__ import annotations

import shutil

import pytest

from bench.bench_faults import hang_one_app, hang_postgres, kill_one_app, restart_duckdb_app, stop_postgres
from deploy.stack import NGINX, Stack

pytestmark = pytest.mark.browser   # a real stack of processes: run with the heavy tests


def _no_candidate_saw_a_problem(report) -> None:
    for seen in report.sessions:
        assert seen.error == "", seen
        assert seen.exceptions == [], seen.exceptions
        assert seen.silent == 0, seen
    assert report.stored == report.acknowledged, "an acknowledged lock-in is missing from the store"


def _the_victims_moved_and_the_others_kept_serving(report, facts) -> None:
    assert [len(s.acknowledged) for s in report.sessions] == [4] * 3, "every candidate finished, none lost"
    on_the_victim = [s for s in report.sessions if s.cookie in facts["victim_cookies"]]
    assert on_the_victim and all(s.reconnects >= 1 for s in on_the_victim), "they were moved, not left waiting"
    assert all(s.reconnects == 0 for s in report.sessions if s not in on_the_victim), "the others kept serving"


def _the_plain_page_came_and_went(report) -> None:
    _no_candidate_saw_a_problem(report)
    assert [len(s.acknowledged) for s in report.sessions] == [4] * 2, "every candidate carried on after it"
    # The plain page: on a press the store did not take, or pushed to the page before the next press came.
    assert all(s.outage_pages >= 1 and s.told_at for s in report.sessions), "every candidate was shown the plain page"
    assert all(s.back_at for s in report.sessions), "the page came back on its own, with no reload"


@pytest.fixture
def stack():
    """A stack of three app processes for each fault: after the SIGKILL test, the outage test run on the same
    stack timed out in the full suite (it passes on a fresh one), so each fault starts from a clean stack."""
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    with Stack(3) as running:
        yield running


@pytest.mark.timeout(420)
def test_a_killed_app_process_is_restarted_and_its_candidates_go_on_through_a_live_one(stack):
    report, facts = kill_one_app(stack, sessions_per_app=1, lockins=4, think_s=1.0)
    assert stack.pid_of(facts["victim"]) == facts["new_pid"] != facts["old_pid"]
    _no_candidate_saw_a_problem(report)
    _the_victims_moved_and_the_others_kept_serving(report, facts)
    # supervisord's own record of the new process's start (whole seconds), not this test's clock
    assert facts["new_start"] <= facts["killed_at"] + 10


@pytest.mark.timeout(480)
def test_postgresql_stopped_for_15_s_is_a_plain_page_and_nothing_acknowledged_is_lost(stack):
    """15 s: each candidate presses every 3 s, so each meets the outage more than once, and a press is told
    within 5 s; the outage is still three times that."""
    report, facts = stop_postgres(stack, 15, sessions=2, lockins=4, think_s=3.0)
    _the_plain_page_came_and_went(report)


@pytest.mark.timeout(420)
def test_a_hung_app_process_is_found_and_replaced_and_its_candidates_go_on_through_a_live_one(stack):
    report, facts = hang_one_app(stack, sessions_per_app=1, lockins=4, think_s=1.0)
    assert facts["new_pid"] != facts["old_pid"], "the watchdog killed it and supervisord started it again"
    assert "did not answer /_stcore/health" in stack.log_tail("watchdog"), "the watchdog, not the test, found it"
    _no_candidate_saw_a_problem(report)
    _the_victims_moved_and_the_others_kept_serving(report, facts)


@pytest.mark.timeout(480)
def test_postgresql_hung_for_12_s_is_the_plain_page_and_nothing_acknowledged_is_lost(stack):
    """SIGSTOP: the server's statement limit cannot fire; each press must still come back, as the outage page.
    12 s: a page nobody presses on is told within 5 s, so it is told while the store is still hung."""
    report, facts = hang_postgres(stack, 12, sessions=2, lockins=4, think_s=3.0, idle=2)
    _the_plain_page_came_and_went(report)
    # Two candidates read a question and press nothing: the server tells their pages by itself, while the
    # store is still hung, and gives them the drill back after it, with no reload.
    readers = facts["idle_sessions"]
    assert [s.error for s in readers] == ["", ""], readers
    assert all(s.told_at and min(s.told_at) < facts["started_at"] for s in readers), \
        "a page nobody pressed on was told of the hung store while it was hung"
    assert all(s.back_at and s.exceptions == [] for s in readers), "and came back on its own"


@pytest.mark.timeout(300)
def test_the_first_lock_in_after_a_duckdb_app_restarts_is_stored():
    report, facts = restart_duckdb_app()
    _no_candidate_saw_a_problem(report)
    (seen,) = report.sessions
    assert seen.reconnects >= 1, "the restart happened under the session"
    assert len(seen.acknowledged) == 2 and report.stored == 2
