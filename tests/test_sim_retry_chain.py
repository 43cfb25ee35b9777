"""Tests for sims.retry_chain against the retry arithmetic worked by hand, a seeded trace and properties.

Figures from the retry-chain drill: three layers retrying three times each send (1 + 3) ** 3 = 64 calls to a
failing partner per search; a 10% budget in every layer bounds that by 1.1 ** 3 = 1.331; a hanging partner
behind 1 s timeouts gets its last new call 3 x 3 x 1 = 9 s after the search, and with the user gone at 2.5 s,
54 of the 64 calls (84.375%) start after the user gave up.
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import retry_chain as rc
from sims.retry_chain import Params, run, summary


@pytest.mark.parametrize("depth, retries", [(1, 3), (2, 2), (3, 3), (4, 2)])
def test_every_failing_search_sends_one_plus_retries_to_the_power_depth(depth, retries):
    result = run(Params(depth=depth, retries=retries, deadline_s=60.0), seed=2)
    assert rc.attempts_per_request(result) == (1 + retries) ** depth


def test_budgets_bound_the_amplification_by_one_plus_the_ratio_to_the_power_depth():
    for ratio in (0.1, 0.2):
        result = run(Params(budget=True, budget_ratio=ratio, duration_s=20.0), seed=1)
        per_request = rc.attempts_per_request(result)
        assert 1.0 < per_request <= (1 + ratio) ** 3
        assert per_request == pytest.approx((1 + ratio) ** 3, rel=0.03)
        # no layer's retries pass its share of the calls it handled
        for calls, retried in zip(result.calls_by_layer, result.retries_by_layer):
            assert retried <= ratio * calls


def _orphaned_by_hand(depth: int, retries: int, timeout_s: float, deadline_s: float) -> float:
    # a call reaches the partner after sum(k) timeouts, one k in 0..retries per layer
    starts = [timeout_s * sum(ks) for ks in itertools.product(range(retries + 1), repeat=depth)]
    return 100.0 * sum(1 for s in starts if s >= deadline_s) / len(starts)


@pytest.mark.parametrize("depth, retries, timeout_s, deadline_s", [(3, 3, 1.0, 2.5), (3, 2, 0.8, 3.3),
                                                                   (4, 2, 1.2, 2.5), (2, 4, 1.5, 3.3)])
def test_a_hanging_partner_gets_calls_long_after_the_user_left(depth, retries, timeout_s, deadline_s):
    result = run(Params(depth=depth, retries=retries, timeout_s=timeout_s, deadline_s=deadline_s, fault="slow"), 3)
    assert rc.orphaned_pct(result) == pytest.approx(_orphaned_by_hand(depth, retries, timeout_s, deadline_s))
    assert rc.last_attempt_after_s(result) == pytest.approx(depth * retries * timeout_s)


def test_the_drills_default_is_84_percent_orphaned():
    assert _orphaned_by_hand(3, 3, 1.0, 2.5) == 84.375   # 64 calls, 1 + 3 + 6 of them before 2.5 s
    assert summary(run(Params(fault="slow", deadline_s=2.5), 0))["orphaned_pct"] == 84.375


def test_a_propagated_deadline_starts_nothing_after_it_and_ends_every_call_by_it():
    result = run(Params(fault="slow", propagate=True, deadline_s=2.5), seed=4)
    assert rc.orphaned_pct(result) == 0.0
    # only the calls that start before 2.5 s: sum(k) <= 2 of three layers, 1 + 3 + 6 = 10 a search
    assert rc.attempts_per_request(result) == 10
    for request, started, ended, _ in result.attempts:
        assert ended <= result.requests[request] + 2.5 + 1e-9


def test_littles_law_at_the_partner():
    for fault in rc.FAULTS:
        sampled, lam_w = rc.littles_law(run(Params(fault=fault, slow_s=3.0), seed=5))
        assert sampled == pytest.approx(lam_w, rel=1e-9)


def test_seeded_trace_is_exact():
    result = run(Params(depth=2, retries=1, request_rate_per_s=2.0, duration_s=2.0), seed=7)
    assert len(result.requests) == 9
    assert result.requests[0] == pytest.approx(0.19565742211740214, rel=1e-12)
    # (1 + 1) ** 2 = 4 calls a search; the top layer retried once per search, the one below once per call
    assert [a[0] for a in result.attempts] == [n for n in range(9) for _ in range(4)]
    assert result.retries_by_layer == (9, 18)
    assert run(Params(depth=2, retries=1, request_rate_per_s=2.0, duration_s=2.0), seed=7) == result


@pytest.mark.parametrize("field, value", [("depth", 0), ("retries", 7), ("timeout_s", 0.0), ("fault", "flaky"),
                                          ("budget", 1), ("deadline_s", float("inf"))])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value)


def test_a_run_too_big_for_the_budget_is_refused():
    with pytest.raises(ValueError, match="limit is 200,000"):
        Params(depth=6, retries=6, request_rate_per_s=10.0)


@settings(max_examples=25, deadline=None)
@given(depth=st.integers(1, 4), retries=st.integers(0, 3), fault=st.sampled_from(rc.FAULTS),
       timeout=st.floats(0.1, 2.0), deadline=st.floats(0.1, 5.0), ratio=st.floats(0.0, 0.5),
       seed=st.integers(0, 1_000))
def test_budgets_and_deadlines_never_add_calls(depth, retries, fault, timeout, deadline, ratio, seed):
    base = dict(depth=depth, retries=retries, fault=fault, timeout_s=timeout, deadline_s=deadline,
                budget_ratio=ratio, slow_s=10.0, request_rate_per_s=5.0, duration_s=2.0)
    plain = run(Params(**base), seed)
    assert len(plain.attempts) == len(plain.requests) * (1 + retries) ** depth   # every attempt fails
    for extra in (dict(budget=True), dict(propagate=True), dict(budget=True, propagate=True)):
        fixed = run(Params(**base, **extra), seed)
        assert fixed.requests == plain.requests
        assert len(fixed.requests) <= len(fixed.attempts)          # every search makes its first call
        assert len(fixed.attempts) <= len(plain.attempts)
