"""Tests for sims.hot_shard: drill 13's celebrity-key figures, queueing theory and properties.

Figures come from drill 13, break 1 follow-up: 153% on 4 shards and 127% on 6, each within 3 points.
"""
from __future__ import annotations

import math
import random
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import hot_shard
from sims.hot_shard import Params, run, summary
from sims.stable_hash import jump_bucket, pick_groups, stable_hash
from tests.sim_reference import assert_same_as_simpy

ROOT = Path(__file__).resolve().parents[1]


def test_celebrity_on_four_shards_runs_at_about_153_pct():
    out = summary(run(hot_shard.celebrity(shards=4), seed=1))
    assert out["hot_shard_load_pct"] == pytest.approx(153, abs=3)
    assert out["fleet_utilisation_pct"] == pytest.approx(80.0)
    assert out["shards"] == 4


def test_adding_two_shards_only_brings_it_to_about_127_pct():
    out = summary(run(hot_shard.celebrity(shards=6), seed=1))
    assert out["hot_shard_load_pct"] == pytest.approx(127, abs=3)


def test_the_figures_do_not_depend_on_the_seed():
    loads = {summary(run(hot_shard.celebrity(), seed))["hot_shard_load_pct"] for seed in range(5)}
    assert len(loads) == 1


def test_more_shards_never_go_below_the_hot_keys_own_load():
    floor = hot_shard.hot_key_floor_pct(hot_shard.celebrity())
    assert floor == pytest.approx(96.0)                   # 30% of 32 req/s over 10 req/s
    loads = [summary(run(hot_shard.celebrity(shards=s), 1))["hot_shard_load_pct"]
             for s in range(1, hot_shard.MAX_SHARDS + 1)]
    assert all(load >= floor - 1e-9 for load in loads)
    assert loads[-1] < loads[3]


def test_hot_key_stays_on_shard_zero_across_the_allowed_range():
    # precondition of the monotone property: jump hashing only moves keys onto new shards
    assert {jump_bucket(hot_shard.HOT_KEY, s) for s in range(1, hot_shard.MAX_SHARDS + 1)} == {0}


def test_stable_hash_is_the_same_in_another_process():
    code = "from sims.stable_hash import stable_hash; print(stable_hash('celebrity'))"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout) == stable_hash("celebrity")


def test_pick_groups_gives_distinct_sorted_groups():
    for name in ("a", "b", "tenant-7"):
        groups = pick_groups(name, 8, 2)
        assert len(set(groups)) == 2 and list(groups) == sorted(groups)
        assert pick_groups(name, 8, 1) == (jump_bucket(name, 8),)


def test_seeded_trace_is_exact():
    result = run(hot_shard.celebrity(), seed=7)
    assert result.placement[:6] == ((0,), (3,), (2,), (0,), (2,), (2,))
    first = result.jobs[0]
    assert first[:2] == (0, 0)
    assert first[2] == pytest.approx(0.01222858888233763, rel=1e-12)
    assert first[4] == pytest.approx(0.11747815068943032, rel=1e-12)
    assert result.jobs[2][3] == pytest.approx(0.06009997267633159, rel=1e-12)   # waited for key-7
    assert run(hot_shard.celebrity(), seed=7) == result
    assert run(hot_shard.celebrity(), seed=8).jobs != result.jobs


def test_capacity_sum_offered_load_adds_up_to_the_arrival_rate():
    for params in (hot_shard.celebrity(), hot_shard.tenant_groups(), hot_shard.shuffle_sharding()):
        offered = hot_shard.offered_rps(params, hot_shard.place_keys(params))
        assert sum(offered) == pytest.approx(params.arrival_rps)


def test_littles_law_holds_on_every_shard():
    params = Params(shards=4, duration_s=300.0, arrival_rps=24.0, sample_every_s=0.05)
    result = run(params, seed=3)
    for shard in range(params.shards):
        sampled, lam_w = hot_shard.littles_law(result, shard)
        assert sampled == pytest.approx(lam_w, rel=0.05, abs=0.02)


def test_single_shard_wait_matches_erlang_c_over_seeds():
    # M/M/3 at 80%: Erlang C gives a mean wait of 1.08 s; allow 10% on the mean of five runs
    params = Params(shards=1, hot_key_share=0.0, ordinary_keys=1, arrival_rps=2.4,
                    servers_per_shard=3, service_s=1.0, duration_s=5_000.0, sample_every_s=50.0)
    expected = hot_shard.erlang_c_wait_s(3, 2.4, 1.0)
    assert expected == pytest.approx(1.0787, abs=1e-3)
    means = [hot_shard.mean_wait_s(run(params, seed)) for seed in range(5)]
    assert sum(means) / len(means) == pytest.approx(expected, rel=0.10)


def test_erlang_c_is_infinite_when_overloaded():
    assert math.isinf(hot_shard.erlang_c_wait_s(2, 3.0, 1.0))


def test_tenant_groups_hurt_about_500_neighbours_and_nobody_else():
    out = summary(run(hot_shard.tenant_groups(), seed=1))
    assert 450 <= out["neighbour_keys"] <= 550
    assert out["neighbour_mean_wait_s"] > 50 * max(out["other_mean_wait_s"], 1.0)


def test_shuffle_sharding_exact_chance_is_one_in_28():
    out = summary(run(hot_shard.shuffle_sharding(), seed=1))
    assert out["exact_share_all_pct"] == pytest.approx(100 / 28, abs=0.01)
    assert 2.0 <= out["cut_off_keys_pct"] <= 5.5
    assert out["hurt_keys_pct"] == pytest.approx(out["cut_off_keys_pct"], abs=1.5)


def test_plain_hashing_cuts_off_a_whole_group():
    out = summary(run(hot_shard.shuffle_sharding(per_tenant=1), seed=1))
    assert out["cut_off_keys_pct"] == pytest.approx(12.5, abs=3)


@pytest.mark.parametrize("field, value", [("shards", 0), ("shards", 17), ("hot_key_share", 1.0),
                                          ("service_s", float("nan")), ("ordinary_keys", 2.5),
                                          ("groups_per_key", 5), ("duration_s", 7_000.0)])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value) and err.value.args[0]


@settings(max_examples=40, deadline=None)
@given(low=st.integers(1, 15), extra=st.integers(1, 15), share=st.floats(0.0, 0.95),
       ordinary=st.integers(1, 300))
def test_more_shards_never_raise_the_hot_shards_load(low, extra, share, ordinary):
    high = min(low + extra, hot_shard.MAX_SHARDS)
    loads = [hot_shard.hot_shard_load_pct(run(Params(shards=s, hot_key_share=share, ordinary_keys=ordinary,
                                                       duration_s=1.0), 1)) for s in (low, high)]
    assert loads[1] <= loads[0] + 1e-9


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), shards=st.integers(1, 8), per_key=st.integers(1, 3),
       bad=st.booleans())
def test_no_request_is_lost(seed, shards, per_key, bad):
    per_key = min(per_key, shards)
    params = Params(shards=shards, groups_per_key=per_key, bad_key_breaks_groups=bad, duration_s=20.0)
    result = run(params, seed)
    for key, shard, arrive, start, end in result.jobs:
        assert shard in result.placement[key]
        if shard in result.down_shards:
            assert start is None and end is None
        else:
            assert arrive <= start < end
    last = {s: row for row in result.samples for s in [row[1]]}
    assert sum(w + b for _, _, w, b in last.values()) <= len(result.jobs)


def test_busiest_shard_is_the_real_maximum_even_when_the_celebrity_is_small():
    # no celebrity, 5 shards: the hash piles ordinary keys on a shard other than the celebrity's
    result = run(hot_shard.celebrity(shards=5, hot_key_share=0.0), 1)
    loads = hot_shard.shard_load_pct(result)
    assert hot_shard.busiest_shard_load_pct(result) == max(loads)
    assert hot_shard.busiest_shard(result) == loads.index(max(loads)) != hot_shard.hot_shard(result)
    out = summary(result)
    assert out["busiest_shard_load_pct"] == round(max(loads), 1) > out["hot_shard_load_pct"]


# ---- the clockless run equals the SimPy processes, event for event ------------------------------

EQUIVALENCE_CASES = [
    hot_shard.celebrity(), hot_shard.celebrity(shards=12, hot_key_share=0.6), hot_shard.tenant_groups(),
    hot_shard.tenant_groups(groups=8, multiplier=200.0), hot_shard.shuffle_sharding(),
    hot_shard.shuffle_sharding(groups=16, per_tenant=3), hot_shard.shuffle_sharding(per_tenant=1),
    Params(shards=8, groups_per_key=2, duration_s=60.0),
    Params(shards=1, hot_key_share=0.0, arrival_rps=2.4, servers_per_shard=3, service_s=1.0, duration_s=300.0),
    Params(arrival_rps=200.0, duration_s=10.0, sample_every_s=0.05),   # ticks closer than the arrivals
    Params(arrival_rps=0.5, duration_s=20.0, sample_every_s=0.25),     # many ticks with nothing between
]


@pytest.mark.parametrize("params", EQUIVALENCE_CASES)
def test_the_clockless_run_is_the_simpy_run(params):
    assert_same_as_simpy(run, hot_shard.run_on_simpy, params)


def test_a_tie_between_an_arrival_and_a_tick_goes_to_the_event_scheduled_first(monkeypatch):
    # Whole-second gaps put every arrival on a tick: SimPy runs the one whose event is older first.
    every = 1.0 - math.exp(-1.0)                # -log(1 - every) is exactly 1.0
    monkeypatch.setattr(random.Random, "random", lambda self: every)

    class Constant:                             # the clockless run's block draws, the same number each time
        def __init__(self, bits):
            pass

        def random(self, size=None):
            return every if size is None else np.full(size, every)

    monkeypatch.setattr(hot_shard.np.random, "Generator", Constant)
    params = Params(shards=2, hot_key_share=0.0, ordinary_keys=2, arrival_rps=1.0, duration_s=6.0)
    assert run(params, 1) == hot_shard.run_on_simpy(params, 1)
    assert [row[2] for row in run(params, 1).jobs] == pytest.approx([1.0, 2.0, 3.0, 4.0, 5.0])


def test_draws_in_blocks_of_any_size_give_the_same_run(monkeypatch):
    original = hot_shard._Draws.__init__

    def small_blocks(self, *args):
        original(self, *args)
        self.block = self.more = 7              # many blocks, each ending mid-stream

    monkeypatch.setattr(hot_shard._Draws, "__init__", small_blocks)
    for params in (hot_shard.celebrity(), hot_shard.shuffle_sharding()):
        assert run(params, 3) == hot_shard.run_on_simpy(params, 3)
