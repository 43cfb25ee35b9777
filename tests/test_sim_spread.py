"""Seed spreads in worker processes (sims.spread): the same figures as running each seed here.

The platform page runs its spread this way; its AppTest checks the chart against direct runs.
"""
from __future__ import annotations

import json

import pytest

from sims import concurrency_pool, platform, spread
from tests.test_sim_pages import lock_and_play
from ui import keys
from ui.sims.spread import spread_button

SHORT = platform.Params(window_min=5.0)


def test_worker_processes_give_the_figures_of_runs_made_here():
    seeds = range(1, 5)
    here = [platform.summary(platform.run(SHORT, seed))["jobs_in_flight"] for seed in seeds]
    assert spread.figures("platform", SHORT, seeds, "jobs_in_flight", processes=2) == here
    assert spread.figures("platform", SHORT, seeds, "jobs_in_flight", processes=1) == here


def test_progress_counts_every_run_and_the_order_follows_the_seeds():
    seen: list[tuple[int, int]] = []
    found = spread.figures("concurrency_pool", concurrency_pool.Params(pool_size=10), [3, 1, 2],
                           "pool.rejected", processes=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert found == [float(concurrency_pool.run(concurrency_pool.Params(pool_size=10), s).pool.rejected)
                     for s in (3, 1, 2)]


def test_figure_paths():
    summary = {"pool": {"rejected": 20}, "recovery": None, "name": "x"}
    assert spread.figure_of(summary, "pool.rejected") == 20.0
    assert spread.figure_of(summary, "recovery") is None         # the run never reached it
    with pytest.raises(KeyError, match="pool.missing"):
        spread.figure_of(summary, "pool.missing")
    with pytest.raises(TypeError):
        spread.figure_of(summary, "name")
    assert spread.processes_for(1) == 1 and spread.processes_for(20) >= 1


def test_the_platform_page_spread_runs_in_workers_and_matches_runs_made_here(app_test):
    at = app_test("pages/sim_platform.py").run()
    at.slider(key=keys.platform_key("baseline", "window_min")).set_value(10.0).run()
    at = lock_and_play(at, "platform::baseline", 160.0)
    at.number_input(key=keys.sim_setting("pf_baseline", "n")).set_value(5).run()
    at.button(key=spread_button("platform::baseline")).click().run()
    assert not at.exception
    chart = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if "5 seeds" in json.loads(c.proto.spec)["layout"].get("title", {}).get("text", ""))
    expected = [platform.summary(platform.run(platform.Params(window_min=10.0), s))["jobs_in_flight"]
                for s in range(1, 6)]
    assert sorted(chart["data"][0]["x"]) == sorted(expected)
    assert any("Over 5 seeds the median is" in m.value for m in at.markdown)


two_cores = pytest.mark.skipif(spread.processes_for(2) < 2, reason="a warm pool needs two cores to fork two workers")


@two_cores
def test_workers_stay_warm_from_one_spread_to_the_next():
    spread.close_pools()
    spread.figures("platform", SHORT, range(1, 3), "jobs_in_flight", processes=2)
    pool = spread._POOLS[2]
    workers = set(pool._processes)
    assert len(workers) == 2
    again = spread.figures("platform", SHORT, range(3, 5), "jobs_in_flight", processes=2)
    assert spread._POOLS[2] is pool and set(pool._processes) == workers     # no new fork
    assert again == [platform.summary(platform.run(SHORT, seed))["jobs_in_flight"] for seed in range(3, 5)]


@two_cores
def test_a_spread_after_a_worker_died_forks_afresh_and_gives_every_figure():
    import os
    import signal
    import time

    spread.close_pools()
    spread.figures("concurrency_pool", concurrency_pool.Params(), [1, 2], "pool.rejected", processes=2)
    pool = spread._POOLS[2]
    os.kill(next(iter(pool._processes)), signal.SIGKILL)
    for _ in range(1_000):                  # until the pool's manager thread has seen it die (a bounded wait)
        if pool._broken:
            break
        time.sleep(0.01)
    assert pool._broken, "the pool never noticed its worker died"
    seeds = range(1, 7)
    figures = spread.figures("concurrency_pool", concurrency_pool.Params(), seeds, "pool.rejected", processes=2)
    assert figures == [concurrency_pool.summary(concurrency_pool.run(concurrency_pool.Params(), s))["pool"]["rejected"]
                       for s in seeds]
    assert spread._POOLS[2] is not pool
    spread.close_pools()
