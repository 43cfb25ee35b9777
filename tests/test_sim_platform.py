"""Tests for sims.platform: board arithmetic, Break 1 and Break 2 presets, theory checks, properties.

Figures come from brief 000 (drill 13: one tenant takes everyone down): the board table, Break 1, Break 2.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import statistics

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims import platform
from sims.__main__ import main as sims_main
from sims.platform import FINISHED, Params, run, summary

SEED = 1


@functools.lru_cache(maxsize=None)
def preset(name: str, **overrides: object) -> dict[str, object]:
    return summary(run(Params.for_scenario(name, **overrides), SEED))


# --- the board: figures that follow from the params alone -------------------------------------

def test_board_arithmetic_from_params():
    p = Params()
    assert p.job_s == 32.0                                    # 4 calls x 8 s
    assert p.slots == 200                                     # 40 processes x 5
    assert p.capacity_jobs_per_s == pytest.approx(6.25)       # 200 / 32
    assert p.provider_concurrency == (400, 80, 40)            # Little's law on 3,000, 600, 300 a minute
    fallback_calls_per_s = sum(p.provider_concurrency[1:]) / p.call_mean_s
    assert fallback_calls_per_s / (p.peak_jobs_per_s * 4) == pytest.approx(0.75)


def test_tenant_mix_adds_up_to_the_peak_and_respects_caps():
    p = Params()
    plans, rates = platform.tenant_mix(p)
    assert len(plans) == len(rates) == 2000
    assert sum(rates) == pytest.approx(5.0)
    assert rates[platform.ACME] == pytest.approx(0.05) and plans[platform.ACME] == platform.ENTERPRISE
    free_share = sum(r for r, plan in zip(rates, plans) if plan == 0) / sum(rates)
    assert free_share == pytest.approx(0.30, abs=0.01)
    # skewed, yet no normal tenant needs more than half of its running cap or bucket
    for rate, plan in zip(rates[1:], plans[1:]):
        assert rate * p.job_s < 0.5 * platform.PLAN_RUNNING_CAP[plan]
        assert rate < 0.5 * platform.PLAN_BUCKET_RATE[plan]
    top_tenth = sorted(rates, reverse=True)[:200]
    assert sum(top_tenth) / sum(rates) > 0.25


# --- presets: the brief's figures, measured on the model's output ------------------------------

def test_baseline_peak_matches_the_board():
    out = preset("baseline")
    assert out["jobs_in_flight"] == pytest.approx(160, rel=0.05)
    assert out["llm_calls_per_s"] == pytest.approx(20, rel=0.05)
    assert out["utilisation_pct"] == pytest.approx(80, abs=4)
    assert out["backlog_growth_jobs_per_s"] == pytest.approx(0, abs=0.05)
    assert out["spend_usd_total"] == pytest.approx(360, rel=0.05)      # 5 x 3,600 x $0.02
    assert out["jobs_failed"] == 0 and out["wait_p95_s_others"] < 1.0


def test_break1_fifo_arrivals_growth_and_acme_share():
    out = preset("break1_fifo")
    assert out["arrivals_jobs_per_s"] == pytest.approx(9.95, rel=0.04)
    assert out["capacity_jobs_per_s"] == pytest.approx(6.25)
    assert out["backlog_growth_jobs_per_s"] == pytest.approx(3.7, rel=0.1)
    assert out["acme_slot_share_pct"] == pytest.approx(50, abs=5)
    assert out["utilisation_pct"] == pytest.approx(100, abs=0.5)


def _board_recovery_min(out: dict[str, object], slots_for_others: int) -> float:
    spare = slots_for_others / 32.0 - 4.95
    return out["others_backlog_at_mitigation"] / spare / 60.0


def test_break1_capped_recovery_is_about_28_minutes():
    out = preset("break1_fair")
    assert out["others_backlog_at_mitigation"] == pytest.approx(1125, rel=0.12)
    # the board's formula applied to the model's own backlog, and the brief's headline figure
    assert out["others_recovery_min"] == pytest.approx(_board_recovery_min(out, 180), rel=0.12)
    assert out["others_recovery_min"] == pytest.approx(28, rel=0.2)
    assert out["rejected_429_others"] == 0 and out["rejected_429_acme"] > 0
    assert out["deduplicated"] > 0


def test_break1_paused_recovery_is_about_14_minutes_and_half_the_capped_one():
    paused, capped = preset("break1_paused"), preset("break1_fair")
    assert paused["others_recovery_min"] == pytest.approx(_board_recovery_min(paused, 200), rel=0.15)
    assert paused["others_recovery_min"] == pytest.approx(14, rel=0.2)
    assert 0.35 < paused["others_recovery_min"] / capped["others_recovery_min"] < 0.65


def test_round_robin_recovers_others_about_as_fast_as_a_pause():
    # while many tenants have queued work, the least recently served rule gives Acme few turns
    rr, paused = preset("break1_round_robin"), preset("break1_paused")
    assert rr["others_recovery_min"] <= 1.2 * paused["others_recovery_min"]


@pytest.mark.parametrize("switch, arrivals", [("idempotency", 5.05), ("rate_limit", 5.95)])
def test_either_admission_fix_from_the_start_stops_the_growth(switch, arrivals):
    # keys leave Acme 2% of 5/s as new jobs; the bucket lets 1/s through: both stay under 6.25
    out = preset("break1_fifo", window_min=12.0, **{switch: True})
    assert out["arrivals_jobs_per_s"] == pytest.approx(arrivals, rel=0.05)
    assert abs(out["backlog_growth_jobs_per_s"]) < 0.2


def test_a_cap_from_the_start_protects_everyone_else_but_not_acme():
    out = preset("break1_fifo", window_min=12.0, claim="capped")
    assert out["acme_slot_share_pct"] == pytest.approx(10, abs=0.5)        # 20 of 200 slots
    assert out["wait_p95_s_others"] < 5.0
    assert out["backlog_growth_jobs_per_s"] == pytest.approx(5.0 - 20 / 32, rel=0.1)


def test_break2_without_polish_switch_backlog_grows_1_25_per_s():
    out = preset("break2_polish_off", window_min=45.0)
    assert out["fallback_share_of_peak_pct"] == pytest.approx(75, abs=2)
    assert out["backlog_growth_jobs_per_s"] == pytest.approx(1.25, rel=0.12)
    assert out["jobs_degraded"] == 0


def test_break2_with_polish_switch_backlog_stops_growing():
    out = preset("break2", window_min=45.0)
    assert abs(out["backlog_growth_jobs_per_s"]) < 0.15
    assert out["jobs_degraded"] > 0 and out["jobs_failed"] == 0


def test_break2_extra_provider_spend_is_about_135_dollars():
    out = preset("break2")
    assert out["extra_provider_spend_usd"] == pytest.approx(135, rel=0.1)


def test_short_timeouts_cut_the_hang_before_failover():
    short, long = preset("break2", window_min=12.0), preset("break2", window_min=12.0, short_timeouts=False)
    assert long["hung_call_max_s"] == pytest.approx(60.0)
    assert short["hung_call_max_s"] == pytest.approx(30.0)
    assert short["breaker_a_opened_after_s"] <= 5.0 < 30.0 <= long["breaker_a_opened_after_s"]
    assert long["hung_calls"] >= 190          # every slot ends up stuck on a silent provider


def test_without_pools_fallback_overflow_turns_into_429s_and_failures():
    out = preset("break2_polish_off", window_min=20.0, provider_pools=False)
    assert out["provider_429s_B"] > 0 and out["provider_429s_C"] > 0
    assert out["jobs_failed"] > 0


# --- theory ----------------------------------------------------------------------------------------

def test_littles_law_on_the_baseline_output():
    result = run(Params(window_min=30.0), SEED)
    start, end = platform.focus_window(result.params)
    inside = [s for s in result.samples if start <= s.t <= end]
    in_flight = statistics.fmean(s.running_acme + s.running_others for s in inside)
    done = [j for j in result.jobs if j.state == FINISHED and start <= j.started and j.ended <= end]
    throughput = len(done) / (end - start)
    mean_job_s = statistics.fmean(j.ended - j.started for j in done)
    assert in_flight == pytest.approx(throughput * mean_job_s, rel=0.03)
    assert mean_job_s == pytest.approx(32.0, rel=0.03)


def test_slot_and_pool_capacity_sums_hold_in_every_sample():
    result = run(Params.for_scenario("break2_polish_off", window_min=12.0), SEED)
    for s in result.samples:
        assert s.running_acme + s.running_others <= 200
        assert all(n <= cap for n, cap in zip(s.inflight, result.params.provider_concurrency))
        assert sum(s.inflight) <= s.running_acme + s.running_others


# --- exact trace, params, runner ------------------------------------------------------------------

TINY = dict(tenants=20, peak_jobs_per_s=0.5, acme_normal_jobs_per_s=0.05, window_min=2.0,
            workers=2, slots_per_worker=2, sample_s=30.0)


def test_seeded_trace_is_exact():
    result = run(Params(**TINY), seed=7)
    assert result == run(Params(**TINY), seed=7)
    assert len(result.jobs) == 54
    first = result.jobs[0]
    assert (first.tenant, first.plan, first.state, first.steps_done) == (15, 1, FINISHED, 4)
    assert first.arrived == first.started == pytest.approx(0.86959, abs=1e-5)
    assert first.ended - first.started == pytest.approx(25.07757, abs=1e-5)
    assert [s.t for s in result.samples] == [0.0, 30.0, 60.0, 90.0, 120.0]
    assert [s.running_others + s.running_acme for s in result.samples] == [0, 4, 4, 4, 4]
    assert [s.queued_others for s in result.samples] == [0, 12, 20, 25, 31]


def test_explicit_params_override_the_scenario():
    p = Params(scenario="break1_fair", claim="fifo", rate_limit=False)
    assert (p.claim, p.rate_limit, p.idempotency, p.acme_multiplier) == ("fifo", False, True, 100.0)
    assert Params.for_scenario("break2").outage_min == 40.0
    assert Params() == Params(scenario="baseline")


@pytest.mark.parametrize("bad, message", [
    (dict(scenario="break9"), "scenario must be one of"),
    (dict(claim="lifo"), "claim must be one of"),
    (dict(window_min=0.0), "window_min"),
    (dict(window_min=float("nan")), "finite"),
    (dict(peak_jobs_per_s=1e9), "peak_jobs_per_s"),
    (dict(acme_resubmit_share=1.0), "acme_resubmit_share"),
    (dict(workers=2.5), "whole number"),
    (dict(rate_limit="yes"), "true or false"),
    (dict(break_at_min=-1.0), "break_at_min"),
])
def test_bad_params_get_one_clear_message(bad, message):
    with pytest.raises(ValueError, match=message):
        Params(**bad)


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(Params) if f.type in ("int", "float", "bool")])
def test_every_number_and_switch_is_checked_at_the_front_door(field):
    bad = "yes" if Params.__dataclass_fields__[field].type == "bool" else float("nan")
    with pytest.raises(ValueError, match=field) as err:
        Params(**{field: bad})
    assert "\n" not in str(err.value)


def test_headless_runner_prints_one_json_object(capsys):
    code = sims_main(["platform", "scenario=break1_fifo", "window_min=8", "seed=3"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["scenario"] == "break1_fifo" and out["seed"] == 3
    for key in ("jobs_in_flight", "llm_calls_per_s", "utilisation_pct", "backlog_growth_jobs_per_s",
                "others_recovery_min"):
        assert key in out


def test_runner_rejects_a_bad_scenario(capsys):
    assert sims_main(["platform", "scenario=nope"]) == 2
    assert "scenario must be one of" in capsys.readouterr().err


@pytest.mark.parametrize("scenario", sorted(platform.SCENARIOS))
def test_every_scenario_summarises_even_a_few_seconds(scenario):
    out = summary(run(Params.for_scenario(scenario, window_min=0.1, break_at_min=0.05), SEED))
    assert out["scenario"] == scenario
    json.dumps(out)


def test_progress_is_reported_in_order_up_to_one():
    seen: list[float] = []
    run(Params(window_min=6.0), SEED, progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert seen == sorted(seen) and all(0.0 <= x <= 1.0 for x in seen)


# --- properties ------------------------------------------------------------------------------------

SMALL = dict(tenants=40, peak_jobs_per_s=1.0, acme_normal_jobs_per_s=0.05, window_min=4.0,
             break_at_min=1.0, sample_s=5.0, call_mean_s=4.0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), workers=st.integers(1, 6), multiplier=st.sampled_from([1.0, 20.0, 60.0]),
       claim=st.sampled_from(sorted(platform.CLAIM_RULES)), outage=st.sampled_from([0.0, 2.0]),
       pools=st.booleans(), short=st.booleans(), polish=st.booleans(), limits=st.booleans(),
       pause=st.booleans())
def test_no_job_is_lost(seed, workers, multiplier, claim, outage, pools, short, polish, limits, pause):
    p = Params(**SMALL, workers=workers, acme_multiplier=multiplier, acme_resubmit_share=0.5,
               claim=claim, outage_min=outage, provider_pools=pools, short_timeouts=short,
               polish_switch=polish, rate_limit=limits, idempotency=limits, pause_acme=pause,
               mitigations_from_min=2.0, limit_b_per_min=60.0, limit_c_per_min=30.0)
    result = run(p, seed)
    out = summary(result)
    assert (out["jobs_finished"] + out["jobs_failed"] + out["jobs_queued"] + out["jobs_running"]
            == out["jobs_submitted"])
    assert (out["jobs_submitted"] + out["rejected_429_acme"] + out["rejected_429_others"]
            + out["deduplicated"] == out["submissions"])
    last = result.samples[-1]
    assert last.queued_acme + last.queued_others == out["jobs_queued"]
    assert last.running_acme + last.running_others == out["jobs_running"]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), workers=st.integers(1, 5), extra=st.integers(1, 5),
       multiplier=st.sampled_from([1.0, 30.0]))
def test_more_capacity_never_grows_the_backlog(seed, workers, extra, multiplier):
    base = dict(SMALL, acme_multiplier=multiplier)
    fewer = run(Params(**base, workers=workers), seed)
    more = run(Params(**base, workers=workers + extra), seed)
    assert len(fewer.jobs) == len(more.jobs)
    for a, b in zip(fewer.samples, more.samples):
        assert platform.backlog(b) <= platform.backlog(a)


# --- the calm shortcut ------------------------------------------------------------------------------

def _same_run(p: Params, seed: int, monkeypatch) -> tuple[platform.Result, platform.Result]:
    """The run with calm jobs planned whole, and again with every job as its own process."""
    fast = run(p, seed)
    with monkeypatch.context() as patch:
        patch.setattr(platform.calm, "CALM_SHORTCUT", False)
        slow = run(p, seed)
    assert dataclasses.replace(fast, events=0) == dataclasses.replace(slow, events=0)
    return fast, slow


@pytest.mark.parametrize("scenario, overrides, calm_to_the_end", [
    ("baseline", dict(window_min=10.0), True),
    ("break1_fair", dict(window_min=18.0), True),                           # caps and keys from minute 15
    ("break2", dict(window_min=12.0), False),                               # calm until A is about to stop
    ("break2_polish_off", dict(window_min=12.0, provider_pools=False, breaker_failures=1), False),
    ("baseline", dict(window_min=10.0, call_sigma=1.0, total_timeout_s=25.0), False),   # ended by a timeout
    ("baseline", dict(window_min=5.0, limit_a_per_min=600.0), False),        # A too small to start calm
])
def test_planning_calm_jobs_whole_gives_the_same_run_as_a_process_per_job(scenario, overrides, calm_to_the_end,
                                                                           monkeypatch):
    fast, slow = _same_run(Params.for_scenario(scenario, **overrides), 3, monkeypatch)
    if calm_to_the_end:
        assert fast.events < slow.events / 3       # one event per job and one per arrival, not seven


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), workers=st.integers(1, 6), outage=st.sampled_from([0.0, 2.0]),
       sigma=st.sampled_from([0.4, 1.2]), timeout=st.sampled_from([60.0, 12.0]), pools=st.booleans(),
       short=st.booleans(), polish=st.booleans(), breaker_failures=st.sampled_from([1, 5]),
       claim=st.sampled_from(sorted(platform.CLAIM_RULES)), hang=st.sampled_from([0.0, 20.0]))
def test_the_calm_shortcut_never_changes_a_run(seed, workers, outage, sigma, timeout, pools, short, polish,
                                                breaker_failures, claim, hang, monkeypatch):
    p = Params(**SMALL, workers=workers, acme_multiplier=20.0, acme_resubmit_share=0.5, claim=claim,
               outage_min=outage, provider_pools=pools, short_timeouts=short, polish_switch=polish,
               rate_limit=True, idempotency=True, mitigations_from_min=2.0, call_sigma=sigma,
               total_timeout_s=timeout, breaker_failures=breaker_failures, hang_s=hang,
               limit_b_per_min=60.0, limit_c_per_min=30.0)
    _same_run(p, seed, monkeypatch)
