"""Tests for sims.concurrency_pool: drill 13's fan-out and pool figures, capacity and properties.

Figures come from drill 13, break 2: 30 calls, R = 5, Retry-After 1 s; fan-out 75 429s / 6.1 s,
pool of 5 none / 4.5 s, pool of 10 about 19 / 5.2 s (within 1 rejection and 0.2 s).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import concurrency_pool as cp
from sims.concurrency_pool import Params, run, summary
from tests.sim_reference import assert_same_as_simpy


def test_fanout_collects_75_429s_and_takes_6_1_s():
    out = summary(run(Params(), seed=1))["fanout"]
    assert out["rejected"] == 75
    assert out["makespan_s"] == pytest.approx(6.1, abs=0.2)


def test_pool_of_five_gets_no_429_and_takes_4_5_s():
    out = summary(run(Params(pool_size=5), seed=1))["pool"]
    assert out["rejected"] == 0
    assert out["makespan_s"] == pytest.approx(4.5, abs=0.2)


def test_pool_of_ten_gets_about_19_429s_and_takes_about_5_2_s():
    out = summary(run(Params(pool_size=10), seed=1))["pool"]
    assert out["rejected"] == pytest.approx(19, abs=1)
    assert out["makespan_s"] == pytest.approx(5.2, abs=0.2)


def test_seeded_trace_is_exact():
    result = run(Params(pool_size=10, service_jitter=0.2), seed=7)
    assert result.pool.segments[0] == pytest.approx((0, "service", 0.0, 0.7916740406778552))
    assert result.pool.segments[1][3] == pytest.approx(0.7117192628177194, rel=1e-12)
    assert (result.fanout.rejected, round(result.fanout.makespan_s, 2)) == (75, 6.19)
    assert (result.pool.rejected, round(result.pool.makespan_s, 2)) == (20, 5.11)
    assert run(Params(pool_size=10, service_jitter=0.2), seed=7) == result
    assert run(Params(pool_size=10, service_jitter=0.2), seed=8) != result


def test_default_run_has_no_randomness():
    first, other = run(Params(), seed=1), run(Params(), seed=99)
    assert (first.fanout, first.pool) == (other.fanout, other.pool)


def test_fanout_timeline_of_the_last_call():
    # call 29 is refused five times (t = 0, 1.07, 2.14, 3.21, 4.28) and served from 5.35 s
    segments = [s for s in run(Params(), 1).fanout.segments if s[0] == 29]
    assert [s[1] for s in segments].count("429") == 5
    assert segments[-1][1:] == pytest.approx(("service", 5.35, 6.1))


@pytest.mark.parametrize("pool_size", [1, 3, 5, 10, 30])
def test_littles_law_and_the_capacity_floor(pool_size):
    params = Params(pool_size=pool_size)
    for lane in (run(params, 1).fanout, run(params, 1).pool):
        # time-average in service x makespan = total service time (Little's law on the slots)
        assert cp.mean_in_service(lane) * lane.makespan_s == pytest.approx(cp.service_seconds(lane))
        assert cp.service_seconds(lane) == pytest.approx(params.calls * params.service_s)
        # R slots working flat out is the best any schedule can do
        assert lane.makespan_s >= cp.capacity_floor_s(params) - 1e-9
        assert cp.peak_in_service(lane) <= params.provider_limit


@pytest.mark.parametrize("field, value", [("calls", 0), ("provider_limit", 0), ("pool_size", 501),
                                          ("retry_after_s", -1.0), ("service_s", float("inf"))])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value)


def test_event_budget_refuses_huge_fanouts():
    with pytest.raises(ValueError, match="fan-out retries"):
        Params(calls=500, provider_limit=1)


@settings(max_examples=40, deadline=None)
@given(calls=st.integers(1, 60), limit=st.integers(1, 12), pool=st.integers(1, 60),
       jitter=st.floats(0.0, 0.5), seed=st.integers(0, 1_000))
def test_no_call_is_lost_and_small_pools_never_see_a_429(calls, limit, pool, jitter, seed):
    params = Params(calls=calls, provider_limit=limit, pool_size=pool, service_jitter=jitter)
    result = run(params, seed)
    for lane in (result.fanout, result.pool):
        served = [s[0] for s in lane.segments if s[1] == "service"]
        assert sorted(served) == list(range(calls))
        assert lane.rejected == sum(1 for s in lane.segments if s[1] == "429")
    if pool <= limit:
        assert result.pool.rejected == 0


# ---- the run without SimPy's machinery equals the SimPy processes, event for event -----------------

EQUIVALENCE_CASES = [
    Params(), Params(calls=40, provider_limit=1, pool_size=30, retry_after_s=0.5), Params(pool_size=10),
    Params(service_jitter=0.3), Params(pool_size=1), Params(calls=1), Params(pool_size=500, calls=50),
    Params(calls=100, provider_limit=7, pool_size=9, service_jitter=0.5),
    Params(retry_after_s=0.0, rejection_rtt_s=0.01),
    # retries land on the very moment slots free: who is first decides who is served
    Params(calls=37, provider_limit=3, pool_size=4, retry_after_s=0.75, service_s=0.75, rejection_rtt_s=0.0),
]


@pytest.mark.parametrize("params", EQUIVALENCE_CASES)
def test_the_run_is_the_simpy_run(params):
    assert_same_as_simpy(run, cp.run_on_simpy, params)
