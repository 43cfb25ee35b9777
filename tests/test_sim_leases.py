"""Tests for sims.leases against the lease arithmetic worked by hand, a seeded trace and properties.

Figures from the lease drill: a 10 s lease renewed every 3 s; a pause 1.5 s after the renewal at 6 s lapses the
lease at 6 + 10 = 16 s (8.5 s into the pause); the standby polls every 1 s, so it leads by 17 s at the latest;
an 18 s pause wakes A at 25.5 s. A clock stepped back 4 s keeps A writing until 20 s, 4 s x 2 writes a second =
8 batches after the lapse.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sims import leases as ls
from sims.leases import Params, run, summary


def test_a_healthy_leader_keeps_its_lease_and_nobody_else_writes():
    result = run(Params(fault_s=0.0), seed=1)
    assert result.b_acquired_s is None and result.lease_lapsed_s is None
    assert {node for _, node, _, _ in result.writes} == {"A"}
    assert len(result.writes) == 40 * 2          # every 0.5 s for 40 s


@pytest.mark.parametrize("seed", range(6))
def test_the_lease_lapses_a_lease_after_the_last_renewal_and_the_standby_follows_within_a_poll(seed):
    result = run(Params(fault_s=18.0), seed)
    assert result.lease_lapsed_s == pytest.approx(6.0 + 10.0)
    assert 16.0 <= result.b_acquired_s < 16.0 + 1.0
    assert ls.wake_after_takeover_s(result) == pytest.approx(7.5 + 18.0 - result.b_acquired_s)


def test_the_paused_write_lands_after_the_takeover_and_fencing_refuses_it():
    plain, fenced = run(Params(fault_s=18.0), 0), run(Params(fault_s=18.0, fencing=True), 0)
    [late] = ls.stale_writes(plain)
    assert late[0] == pytest.approx(7.5 + 18.0 + 0.05) and late[3]
    assert ls.stale_accepted(fenced) == 0 and summary(fenced)["stale_refused"] == 1
    # A stops as soon as it wakes: its own clock says the lease ended at 16 s
    assert plain.a_stopped_s == pytest.approx(25.5)


def test_a_pause_shorter_than_the_rest_of_the_lease_costs_nothing():
    result = run(Params(fault_s=8.0), seed=2)       # lapses 8.5 s into a pause: never
    assert result.b_acquired_s is None and ls.stale_writes(result) == []


@pytest.mark.parametrize("step, rate", [(4.0, 2.0), (3.0, 4.0), (6.0, 5.0)])
def test_a_clock_set_back_keeps_the_leader_writing_by_the_step_times_the_rate(step, rate):
    result = run(Params(fault="partition", fault_s=30.0, clock_step_s=step, write_every_s=1.0 / rate), seed=0)
    # A notices at its next check, which comes within one write interval of the end by its clock
    assert 16.0 + step - 1e-9 <= result.a_stopped_s <= 16.0 + step + 1.0 / rate + 1e-9
    after_lapse = [w for w in result.writes if w[1] == "A" and w[0] >= 16.0]
    assert len(after_lapse) == pytest.approx(step * rate, abs=1)
    # those landing after B's first write are the split brain
    first_b = result.b_acquired_s + 0.05
    expected = math.ceil((16.0 + step - first_b) * rate - 1e-9)
    assert ls.stale_accepted(result) == pytest.approx(expected, abs=1)


def test_a_margin_at_least_the_step_closes_the_window():
    result = run(Params(fault="partition", fault_s=30.0, clock_step_s=4.0, margin_s=4.0), seed=0)
    assert ls.stale_writes(result) == [] and result.a_stopped_s == pytest.approx(16.0)


def test_seeded_trace_is_exact():
    result = run(Params(fault_s=18.0), seed=7)
    assert result.b_acquired_s == pytest.approx(16.323832764833163, rel=1e-12)
    assert result.writes[:3] == ((0.05, "A", 1, True), (0.55, "A", 1, True), (1.05, "A", 1, True))
    assert sum(1 for w in result.writes if w[1] == "B") == 48
    assert run(Params(fault_s=18.0), seed=7) == result


@pytest.mark.parametrize("field, value", [("lease_s", 0.0), ("renew_every_s", 10.0), ("fault", "crash"),
                                          ("fencing", "yes"), ("poll_s", float("nan"))])
def test_bad_params_raise_one_line(field, value):
    with pytest.raises(ValueError) as err:
        Params(**{field: value})
    assert "\n" not in str(err.value)


@settings(max_examples=30, deadline=None)
@given(lease=st.floats(2.0, 20.0), fault=st.sampled_from(ls.FAULTS), fault_s=st.floats(0.0, 30.0),
       step=st.floats(0.0, 6.0), margin=st.floats(0.0, 3.0), seed=st.integers(0, 1_000))
def test_fencing_never_accepts_a_stale_write_and_never_loses_a_current_one(lease, fault, fault_s, step, margin, seed):
    base = dict(lease_s=lease, renew_every_s=lease / 3, fault=fault, fault_at_s=lease / 3 + 0.4, fault_s=fault_s,
                clock_step_s=step, margin_s=margin, duration_s=60.0)
    plain, fenced = run(Params(**base), seed), run(Params(**base, fencing=True), seed)
    assert plain.writes == tuple((t, n, k, True) for t, n, k, _ in fenced.writes)   # same writes, same order
    assert ls.stale_accepted(fenced) == 0
    assert all(accepted for _, node, _, accepted in fenced.writes if node == "B")
    # nobody but A writes before the lease lapses
    if plain.b_acquired_s is not None:
        assert plain.b_acquired_s >= plain.lease_lapsed_s
