"""AppTest runs of the drill library's simulation pages: each loads alone, asks for a guess before Play, and
grades the guess against the run, with the page's text following the run.
"""
from __future__ import annotations

import pytest

from tests.test_sim_pages import drawn_charts, lock_and_play

PAGES = {
    "pages/sim_cache_stampede.py": ["One hot key", "Many keys"],
    "pages/sim_retry_chain.py": ["Partner fails fast", "Partner hangs"],
    "pages/sim_leases.py": ["Stop-the-world pause", "Clock set back"],
}


@pytest.mark.parametrize("script, tabs", PAGES.items())
def test_page_loads_alone_with_its_tabs_and_nothing_drawn_before_a_guess(app_test, script, tabs):
    at = app_test(script).run()
    assert not at.exception
    assert [t.label for t in at.tabs] == tabs
    assert all(b.disabled for b in at.button if b.key and b.key.startswith("play::"))
    assert not drawn_charts(at) and len(at.get("plotly_chart")) == len(tabs)


def test_hot_key_guess_then_play_grades_against_the_busy_time(app_test):
    at = app_test("pages/sim_cache_stampede.py").run()
    at.slider(key="cs_hot_rate").set_value(1_200).run()
    at = lock_and_play(at, "cache_stampede.hot_key", 10.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Your guess"].startswith("10")
    # 1,200 req/s x 0.6 s = 720 misses; 720 x 0.6 / 40 = 10.8 s of database time at least
    busy = float(metrics["Simulation"].split()[0])
    assert 10.8 <= busy <= 10.8 + 0.6
    text = " ".join(m.value for m in at.markdown)
    assert "about 1,200 × 0.6 requests each sent a query" in text
    assert len(drawn_charts(at)) == 1


def test_coalescing_leaves_one_query_for_the_database(app_test):
    at = app_test("pages/sim_cache_stampede.py").run()
    at.radio(key="cs_hot_policy").set_value("one query per key").run()
    at = lock_and_play(at, "cache_stampede.hot_key", 1.0)
    assert any("**1 query** reached the database" in m.value for m in at.markdown)


def test_many_keys_with_jitter_states_the_mean_and_the_peak(app_test):
    at = app_test("pages/sim_cache_stampede.py").run()
    at.slider(key="cs_many_jitter").set_value(20).run()
    at = lock_and_play(at, "cache_stampede.many_keys", 12.0)
    text = " ".join(m.value for m in at.markdown)
    assert "the mean is 320 × 0.6 ÷ 20 = 9.6" in text


def test_retry_chain_guess_then_play_counts_the_multiplication(app_test):
    at = lock_and_play(app_test("pages/sim_retry_chain.py").run(), "retry_chain.errors", 64.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Simulation"].startswith("64")
    assert any("4 to the power 3 = 64" in m.value for m in at.markdown)


def test_a_propagated_deadline_leaves_no_call_for_a_user_who_left(app_test):
    at = app_test("pages/sim_retry_chain.py").run()
    at.toggle(key="rc_hang_propagate").set_value(True).run()
    at = lock_and_play(at, "retry_chain.slow", 0.0)
    assert any(m.value.startswith("**0.0%** of the") for m in at.markdown)


def test_a_pause_past_the_lease_wakes_a_leader_after_the_takeover(app_test):
    at = lock_and_play(app_test("pages/sim_leases.py").run(), "leases.pause", 8.0)
    # 10 s lease, 1.3 s used: it lapses 8.7 s into the 18 s pause; B takes over within a 1 s poll
    wake = float({m.label: m.value for m in at.metric}["Simulation"].split()[0])
    assert 18 - 9.7 <= wake <= 18 - 8.7
    assert any("lapsed 8.7 s into the pause" in m.value for m in at.markdown)


def test_fencing_refuses_the_old_leaders_writes_after_a_clock_step(app_test):
    at = app_test("pages/sim_leases.py").run()
    at.toggle(key="ls_step_fencing").set_value(True).run()
    at = lock_and_play(at, "leases.step", 0.0)
    assert {m.label: m.value for m in at.metric}["Simulation"].startswith("0")
    assert any("**0 accepted**" in m.value for m in at.markdown)
