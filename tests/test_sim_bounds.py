"""Every model finishes at the corners of its parameter ranges, or refuses them with one line.

The corners are the all-low and all-high settings, each number alone at its low and high bound
(the rest at the defaults), and a seeded sample of mixed corners. A corner is bounded by work, not
seconds: every SimPy run goes through its model's event budget (sims/_budget.py; the platform's calm
stretch, which has no SimPy events, is counted in Result.events), so a run that would not end (time
standing still, retries multiplying) is refused in one line instead of hanging, and a finished run
shows how much of its budget it used.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import random
import sys

import pytest

from sims import _budget
from sims.__main__ import main as sims_main

MODELS = ("hot_shard", "concurrency_pool", "retry_storm", "partitions", "platform", "cache_stampede",
          "retry_chain", "leases")
MIXED = 8                          # seeded mixed corners per model
SHORT_PLATFORM = {"window_min": 5.0}   # keeps one-at-a-time platform corners quick


def _bounds(model: str) -> dict[str, tuple[float, float]]:
    return importlib.import_module(f"sims.{model}").BOUNDS


def corners(model: str) -> list[tuple[str, dict]]:
    bounds = _bounds(model)
    cases = [("all low", {n: low for n, (low, _) in bounds.items()}),
             ("all high", {n: high for n, (_, high) in bounds.items()})]
    base = SHORT_PLATFORM if model == "platform" else {}
    for name, (low, high) in bounds.items():
        cases.append((f"{name} low", {**base, name: low}))
        cases.append((f"{name} high", {**base, name: high}))
    rng = random.Random(model)
    for i in range(MIXED):
        cases.append((f"mixed {i}", {n: rng.choice(pair) for n, pair in bounds.items()}))
    return cases


CASES = [pytest.param(model, values, id=f"{model}: {label}") for model in MODELS
         for label, values in corners(model)]


def _numbers(value) -> list[float]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


@pytest.fixture
def budgeted_runs(monkeypatch) -> list[tuple[str, int, int]]:
    """(what, events processed, budget) of every budgeted SimPy run, as the models call run_within."""
    runs: list[tuple[str, int, int]] = []

    def counted(env, max_events, what, until=None, progress=None):
        done = _budget.run_within(env, max_events, what, until, progress)
        runs.append((what, done, max_events))
        return done

    for model in MODELS:
        runner = sys.modules[importlib.import_module(f"sims.{model}").run.__module__]   # sims.platform.model
        monkeypatch.setattr(runner, "run_within", counted)
    return runs


def platform_event_ceiling() -> int:
    """The most work a finished platform run can report: each submitted job at most twice in the calm
    loop (started, ended; submissions are checked up front, with slack for Poisson noise) plus the
    SimPy events, which run within MAX_EVENTS."""
    platform = importlib.import_module("sims.platform")
    return 2 * int(1.1 * platform.MAX_SUBMISSIONS) + platform.MAX_EVENTS


@pytest.mark.parametrize("model, values", CASES)
def test_every_corner_finishes_within_its_event_budget_or_is_refused_in_one_line(model, values, budgeted_runs):
    module = importlib.import_module(f"sims.{model}")
    try:
        params = module.Params(**values)
        result = module.run(params, 7)
    except ValueError as exc:       # a bad setting, or an event budget met inside the run
        assert str(exc) and "\n" not in str(exc)
        return
    assert all(0 <= done <= budget for _, done, budget in budgeted_runs), budgeted_runs
    if model == "platform":         # a run that stays calm to the end needs no SimPy events at all
        assert 0 <= result.events <= platform_event_ceiling()
    elif hasattr(module, "run_on_simpy"):
        # A model whose run gives SimPy's run without SimPy (issue 38): its reference run on SimPy must keep
        # within the budget, and the fast run must count the very events that reference processed.
        reference = module.run_on_simpy(params, 7)
        assert budgeted_runs, f"sims.{model}.run_on_simpy ran SimPy without an event budget"
        assert all(0 <= done <= budget for _, done, budget in budgeted_runs), budgeted_runs
        assert result.events == reference.events
    else:
        assert budgeted_runs, f"sims.{model} ran SimPy without an event budget"
    out = module.summary(result)
    json.dumps(out, allow_nan=False)            # plain, finite figures only
    signed = {k for k in out if "growth" in k or k.startswith("extra_")}   # differences may be negative
    assert all(x >= 0 for k, v in out.items() if k not in signed for x in _numbers(v))
    assert result.params == params and result.seed == 7


def test_a_run_past_its_budget_is_refused_in_one_line():
    """The backstop the corners rely on: it stops a run that keeps scheduling events at one instant."""
    import simpy

    env = simpy.Environment()

    def spin():
        while True:
            yield env.timeout(0)

    env.process(spin())
    with pytest.raises(_budget.BudgetExceeded, match="more than 1,000 simulation events") as caught:
        _budget.run_within(env, 1_000, "a spinning run")
    assert "\n" not in str(caught.value) and env.now == 0


def test_the_corners_are_not_all_refused():
    """The sweep means something only if many corners really run."""
    ran = 0
    for model in ("hot_shard", "concurrency_pool", "retry_storm", "partitions"):
        module = importlib.import_module(f"sims.{model}")
        for _, values in corners(model):
            try:
                module.Params(**values)
                ran += 1
            except ValueError:
                pass
    assert ran >= 40


@pytest.mark.parametrize("args, message", [
    (("concurrency_pool", "retry_after_s=0", "rejection_rtt_s=0"), "retry_after_s + rejection_rtt_s"),
    (("concurrency_pool", "calls=140", "provider_limit=1", "retry_after_s=0.01", "rejection_rtt_s=0",
      "service_s=60"), "429s"),
    (("platform", "error_latency_s=0.000001"), "error_latency_s"),
    (("platform", "retry_after_s=0.001"), "retry_after_s"),
    (("platform", "max_call_attempts=1000000"), "max_call_attempts"),
    (("platform", "acme_multiplier=400", "acme_normal_jobs_per_s=19", "peak_jobs_per_s=20"), "submissions"),
])
def test_runaway_settings_exit_2_with_one_line(args, message, capsys):
    assert sims_main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_every_bound_names_a_real_field():
    for model in MODELS:
        module = importlib.import_module(f"sims.{model}")
        fields = {f.name for f in dataclasses.fields(module.Params)}
        assert set(_bounds(model)) <= fields
