"""Tests for sims.cache_stampede against arithmetic worked by hand, a seeded trace and properties.

Figures from the cache-stampede drill, break 1: 2,400 requests/s on one key, a 0.6 s rebuild query and 40
database slots, so about 2,400 x 0.6 = 1,440 misses and at least 1,440 x 0.6 / 40 = 21.6 s of database time.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import cache_stampede as cs
from sims.cache_stampede import Params, run, summary


def _first_arrival_after_expiry(result) -> float:
    return min(arrived for arrived, *_ in result.misses)


def test_every_request_that_arrives_while_the_key_is_missing_sends_a_query():
    result = run(Params(), seed=3)
    first = _first_arrival_after_expiry(result)
    assert first >= 1.0          # the key expires one second in
    # the first query ends 0.6 s after the first miss; every request in between misses and queries
    in_window = [m for m in result.misses if first <= m[0] < first + 0.6]
    assert len(result.queries) == len(in_window) == len(result.misses)
    assert all(outcome == "query" for _, _, outcome, _ in result.misses)


def test_misses_average_rate_times_query_time():
    counts = [len(run(Params(duration_s=3.0, db_slots=1_000), seed).queries) for seed in range(20)]
    mean = sum(counts) / len(counts)
    # Poisson: one miss starts the rebuild, then 2,400 x 0.6 = 1,440 more arrive on average
    assert mean == pytest.approx(1 + 2_400 * 0.6, rel=0.02)


def test_the_database_needs_queries_times_query_time_over_slots():
    result = run(Params(), seed=1)
    n = len(result.queries)
    floor = n * 0.6 / 40
    # every slot is busy from the first query on; the last batch may start up to one query late
    assert floor <= cs.db_busy_s(result) <= floor + 0.6
    assert summary(result)["db_busy_s"] == pytest.approx(21.6, rel=0.05)


def test_a_full_database_starts_each_query_when_a_slot_frees():
    result = run(Params(db_slots=4, request_rate_per_s=200.0, duration_s=10.0), seed=2)
    starts = sorted(started for _, _, started, _ in result.queries)
    # slot by slot, a query starts only once the one four places ahead of it has ended
    for earlier, later in zip(starts, starts[4:]):
        assert later >= earlier + 0.6 - 1e-9


def test_coalescing_sends_one_query_per_expiry_and_stale_makes_nobody_wait():
    none, coalesced, stale = (run(Params(policy=policy), seed=5) for policy in cs.POLICIES)
    assert len(coalesced.queries) == len(stale.queries) == 1
    assert cs.requests_waiting(coalesced) == len(none.misses)     # the same requests, now waiting on one query
    assert max(m[3] for m in coalesced.misses) == pytest.approx(0.6)
    assert cs.requests_waiting(stale) == 0 and summary(stale)["served_stale"] == len(none.misses)
    assert none.arrivals == coalesced.arrivals == stale.arrivals  # one arrival stream for every policy


def test_keys_written_together_are_rebuilt_in_waves_of_the_slots():
    params = Params(keys=320, request_rate_per_s=1_500.0, policy="coalesce", duration_s=10.0)
    result = run(params, seed=0)
    assert len(result.queries) == 320
    ends = sorted(ended for *_, ended in result.queries)
    first = min(started for _, _, started, _ in result.queries)
    # 320 keys over 40 slots: eight waves of 0.6 s after the first request, plus the slowest key's first request
    assert ends[-1] - first >= math.ceil(320 / 40) * 0.6 - 1e-9
    assert cs.peak_db_in_flight(result) > 40 * 5


def test_jitter_spreads_the_rebuilds_to_about_keys_times_query_over_window():
    means = []
    for seed in range(6):
        result = run(Params(keys=320, request_rate_per_s=1_500.0, policy="coalesce", jitter_s=20.0,
                            duration_s=24.0), seed)
        sampled, _ = cs.littles_law(result)
        means.append(sampled)
        assert cs.peak_db_in_flight(result) < 320 * 0.6 / 20 * 4
    # 320 x 0.6 / 20 = 9.6 rebuilds at the database on average while the expiries come in
    assert sum(means) / len(means) == pytest.approx(320 * 0.6 / 20, rel=0.15)


def test_littles_law_at_the_database():
    for policy, seed in (("none", 2), ("coalesce", 4)):
        sampled, lam_w = cs.littles_law(run(Params(policy=policy, keys=50, request_rate_per_s=800.0), seed))
        assert sampled == pytest.approx(lam_w, rel=1e-9)


def test_seeded_trace_is_exact():
    result = run(Params(request_rate_per_s=300.0, duration_s=3.0), seed=7)
    # 166 requests miss; the 120 queries that finish inside the 3 s window are recorded, 46 are still queued
    assert (result.arrivals, result.hits, len(result.misses), len(result.queries)) == (911, 745, 120, 120)
    assert result.queries[0] == pytest.approx((0, 1.0026501878734104, 1.0026501878734104, 1.6026501878734103))
    assert result.queries[-1] == pytest.approx((0, 1.4320511052576155, 2.349496718540314, 2.9494967185403143))
    assert summary(result)["unanswered_at_end"] == 46
    assert run(Params(request_rate_per_s=300.0, duration_s=3.0), seed=7) == result


def test_a_cold_cache_makes_the_first_requests_wait_even_with_stale_allowed():
    result = run(Params(start="cold", policy="stale", keys=10, request_rate_per_s=500.0, duration_s=2.0), seed=1)
    assert len(result.queries) == 10
    assert cs.requests_waiting(result) > 0 and summary(result)["served_stale"] == 0


@pytest.mark.parametrize("field, value", [("keys", 0), ("db_slots", 1_001), ("recompute_s", 0.0),
                                          ("request_rate_per_s", float("nan")), ("policy", "lock"),
                                          ("start", "hot")])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value)


def test_a_run_too_big_for_the_budget_is_refused():
    with pytest.raises(ValueError, match="limit is 250,000"):
        Params(request_rate_per_s=5_000.0, duration_s=60.0)


@settings(max_examples=25, deadline=None)
@given(rate=st.floats(50.0, 1_500.0), keys=st.integers(1, 40), slots=st.integers(1, 30),
       query=st.floats(0.05, 1.0), jitter=st.floats(0.0, 5.0), seed=st.integers(0, 1_000),
       cold=st.booleans())
def test_no_request_is_lost_and_coalescing_never_adds_queries(rate, keys, slots, query, jitter, seed, cold):
    runs = {policy: run(Params(request_rate_per_s=rate, keys=keys, db_slots=slots, recompute_s=query,
                               jitter_s=jitter, start="cold" if cold else "warm", policy=policy,
                               duration_s=4.0), seed) for policy in cs.POLICIES}
    for result in runs.values():
        out = summary(result)
        assert out["hits"] + len(result.misses) + out["unanswered_at_end"] == out["requests"]
        assert out["unanswered_at_end"] >= 0
    # the first expiry sees the same requests under every policy; one query per key is never more
    assert len(runs["coalesce"].queries) <= len(runs["none"].queries)
    assert cs.requests_waiting(runs["stale"]) <= cs.requests_waiting(runs["coalesce"])
