"""Tests for sims.partitions: the hot-tenant figures, a capacity-sum theory check and properties.

Figures come from brief 004 (hot tenant): 4 x 100 units/s, 250 units/s on one partition.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import partitions
from sims.__main__ import main as sims_main
from sims.partitions import Params, run, summary

ROOT = Path(__file__).resolve().parents[1]


def test_defaults_reproduce_the_skew_figures():
    # brief 004: 250 units/s on partition A leaves 150 units/s unserved at 62.5% fleet utilisation
    out = summary(run(Params(), seed=1))
    assert out["backlog_growth_per_s"] == pytest.approx(150.0)
    assert out["fleet_utilisation_pct"] == pytest.approx(62.5)
    assert out["max_bucket_rate_per_s"] == pytest.approx(250.0)
    assert out["hottest_partition_load_pct"] == pytest.approx(250.0)
    assert out["replay_drain_s"] is None  # partition A never has spare capacity for the replay


def test_four_buckets_give_62_5_each_and_drain_in_60_s():
    # brief 004: four ideal buckets get 62.5 units/s; 9,000 pending over 150 units/s spare is 60 s
    out = summary(run(Params(buckets=4), seed=1))
    assert out["backlog_growth_per_s"] == pytest.approx(0.0)
    assert out["max_bucket_rate_per_s"] == pytest.approx(62.5)
    assert out["replay_drain_s"] == pytest.approx(60.0)
    assert out["replay_drain_floor_s"] == pytest.approx(60.0)


def test_seeded_trace_is_exact():
    result = run(Params(buckets=2, pending=1_000.0, horizon_s=1.0), seed=7)
    assert result.bucket_partition == (0, 1)
    assert result.times_s == tuple(0.125 * k for k in range(1, 9))
    # each of A and B receives 125 units/s and serves 100: 3.125 units of backlog per tick
    assert result.fresh_backlog[0] == (3.125, 3.125, 0.0, 0.0)
    assert result.fresh_backlog[-1] == (25.0, 25.0, 0.0, 0.0)
    assert result.replay_left == (1_000.0,) * 8
    assert run(Params(buckets=5, placement="hashed"), seed=3) == run(Params(buckets=5, placement="hashed"), seed=3)


def test_uneven_placement_drains_slower_than_the_floor():
    # three buckets on four partitions leave 3 x 16.7 = 50 units/s spare, not 150
    out = summary(run(Params(buckets=3, horizon_s=240.0), seed=1))
    assert out["replay_drain_s"] == pytest.approx(180.0, abs=0.125)
    assert out["replay_drain_s"] > out["replay_drain_floor_s"]


@pytest.mark.parametrize("bad, message", [
    ({"buckets": 0}, "buckets"),
    ({"partitions": 1000}, "partitions"),
    ({"hot_rate": float("nan")}, "hot_rate"),
    ({"partition_capacity": 0.0}, "partition_capacity"),
    ({"pending": -1.0}, "pending"),
    ({"placement": "random"}, "placement"),
    ({"horizon_s": 3_600.0, "partitions": 64}, "horizon_s"),
])
def test_bad_params_are_refused_with_a_named_field(bad, message):
    with pytest.raises(ValueError, match=message):
        Params(**bad)


def test_runner_prints_the_named_figures(capsys):
    assert sims_main(["partitions", "buckets=4", "hot_rate=250", "partition_capacity=100", "pending=9000"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("backlog_growth_per_s", "fleet_utilisation_pct", "max_bucket_rate_per_s", "replay_drain_s"):
        assert key in out
    assert out["replay_drain_s"] == pytest.approx(60.0)


def test_runner_exits_2_on_bad_value():
    proc = subprocess.run([sys.executable, "-m", "sims", "partitions", "buckets=-3"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "buckets" in proc.stderr and "\n" == proc.stderr[-1] and proc.stderr.count("\n") == 1


params_strategy = st.builds(
    Params,
    partitions=st.integers(1, 8),
    partition_capacity=st.floats(10.0, 500.0),
    hot_rate=st.floats(0.0, 2_000.0),
    buckets=st.integers(1, 16),
    pending=st.floats(0.0, 20_000.0),
    horizon_s=st.sampled_from([10.0, 30.0, 90.0]),
    placement=st.sampled_from(partitions.PLACEMENTS),
)


@settings(max_examples=60, deadline=None)
@given(params=params_strategy, seed=st.integers(0, 10_000))
def test_nothing_is_lost(params, seed):
    result = run(params, seed)
    offered = sum(result.partition_offered)
    assert offered == pytest.approx(params.hot_rate * params.ticks * partitions.TICK_S, rel=1e-9, abs=1e-6)
    # capacity sum: every offered unit is either served or still in a backlog
    assert sum(result.partition_served) + sum(result.fresh_backlog[-1]) == pytest.approx(offered, rel=1e-9, abs=1e-6)
    assert sum(result.replay_served) + result.replay_left[-1] == pytest.approx(params.pending, rel=1e-9, abs=1e-6)
    for served, fresh, replayed in zip(result.partition_served, result.partition_offered, result.replay_served):
        assert served <= fresh + 1e-6
        assert served + replayed <= params.partition_capacity * params.ticks * partitions.TICK_S + 1e-6


@settings(max_examples=60, deadline=None)
@given(params=params_strategy, seed=st.integers(0, 10_000))
def test_replay_never_beats_the_ideal_floor(params, seed):
    result = run(params, seed)
    floor = partitions.replay_drain_floor_s(params)
    if result.replay_drain_s is not None:
        assert floor is not None
        assert result.replay_drain_s >= floor - partitions.TICK_S


@settings(max_examples=40, deadline=None)
@given(buckets=st.integers(1, 12), hot_rate=st.floats(0.0, 1_000.0))
def test_more_capacity_never_grows_the_backlog(buckets, hot_rate):
    small = summary(run(Params(buckets=buckets, hot_rate=hot_rate, horizon_s=10.0), 1))
    big = summary(run(Params(buckets=buckets, hot_rate=hot_rate, partition_capacity=150.0, horizon_s=10.0), 1))
    assert big["backlog_growth_per_s"] <= small["backlog_growth_per_s"] + 1e-9
