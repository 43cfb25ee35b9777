"""Tests for sims.retry_storm: drill 13's synchronised failback, conservation and properties.

Figure from drill 13, break 2 follow-up: 40 processes x 9 calls = 360 calls in the same second
without jitter; with jittered probes, a shared breaker and a staged ramp, under 50 calls/s.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import retry_storm as rs
from sims.retry_storm import Params, run, summary
from tests.sim_reference import assert_same_as_simpy


def test_without_jitter_360_parked_calls_land_in_one_second():
    out = summary(run(Params(), seed=1))
    assert out["parked_calls_in_peak_second"] == 360
    assert out["peak_at_s_after_recovery"] == 0.0
    assert out["peak_calls_per_s"] >= 360
    assert out["peak_calls_per_s"] > 7 * out["provider_limit_per_s"]


@pytest.mark.parametrize("seed", range(5))
def test_the_three_fixes_keep_every_second_within_the_limit(seed):
    out = summary(run(Params(jitter=True), seed=seed))
    assert out["peak_calls_per_s"] <= out["provider_limit_per_s"] == 50
    assert out["seconds_over_limit"] == 0


def test_seeded_trace_is_exact():
    result = run(Params(jitter=True), seed=7)
    assert result.calls[0][1:] == (8, "probe", True, False)
    assert result.calls[0][0] == pytest.approx(16.124869753259546, rel=1e-12)
    assert result.calls[1][:2] == pytest.approx((31.432333971286734, 32))
    assert result.recovered_at_s == pytest.approx(2344.146241112082, rel=1e-12)
    assert run(Params(jitter=True), seed=7) == result


def test_without_jitter_every_probe_lands_on_the_schedule():
    result = run(Params(), seed=1)
    probe_times = {t for t, _, kind, _, _ in result.calls if kind == "probe"}
    assert probe_times == {30.0 * k for k in range(1, 79)}
    assert result.recovered_at_s == pytest.approx(2_340.0)


def test_littles_law_on_the_recovered_provider():
    for jitter in (False, True):
        sampled, lam_w = rs.littles_law(run(Params(jitter=jitter), seed=2))
        assert sampled == pytest.approx(lam_w, rel=1e-9)


def test_capacity_sum_every_call_goes_somewhere_once():
    for jitter in (False, True):
        result = run(Params(jitter=jitter), seed=4)
        out = summary(result)
        assert out["calls_to_provider"] + out["calls_to_fallback"] == len(result.calls)
        assert rs.parked_sent(result) == rs.parked_total(result.params) == 360


@pytest.mark.parametrize("field, value", [("processes", 0), ("in_flight_per_process", 101),
                                          ("probe_interval_s", 0.0), ("demand_per_s", -1.0)])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value)


def test_jitter_must_be_a_bool():
    with pytest.raises(ValueError, match="true or false"):
        Params(jitter="yes")


@settings(max_examples=30, deadline=None)
@given(processes=st.integers(1, 80), in_flight=st.integers(1, 20), jitter=st.booleans(),
       seed=st.integers(0, 1_000), outage=st.floats(0.0, 600.0))
def test_no_parked_call_is_lost(processes, in_flight, jitter, seed, outage):
    params = Params(processes=processes, in_flight_per_process=in_flight, jitter=jitter,
                    outage_s=outage, demand_per_s=5.0, after_s=300.0)
    result = run(params, seed)
    assert rs.parked_sent(result) == processes * in_flight
    if not jitter:
        # every breaker closes on the same schedule, so every parked call lands in one second
        burst = rs.per_second(result, ("probe", "parked"))[int(result.recovered_at_s)]
        assert burst == processes * in_flight


# ---- the run without SimPy's machinery equals the SimPy processes, event for event -----------------

EQUIVALENCE_CASES = [
    Params(), Params(jitter=True), Params(processes=200, in_flight_per_process=20),
    Params(processes=200, in_flight_per_process=20, jitter=True), Params(demand_per_s=0.0),
    Params(demand_per_s=0.0, jitter=True), Params(outage_s=30.0),           # demand from before the breakers
    Params(outage_s=0.0, jitter=True),                                        # A is back at once
    Params(outage_s=45.0, probe_interval_s=15.0, jitter=True, stage_s=5.0),   # late parked calls overlap
    Params(processes=3, in_flight_per_process=1, jitter=True, after_s=10.0),
    Params(outage_s=90.0, probe_interval_s=30.0, demand_per_s=0.0),          # probes land on the recovery
]


@pytest.mark.parametrize("params", EQUIVALENCE_CASES)
def test_the_run_is_the_simpy_run(params):
    assert_same_as_simpy(run, rs.run_on_simpy, params)
