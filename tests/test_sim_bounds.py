"""Every model finishes at the corners of its parameter ranges, or refuses them with one line.

The corners are the all-low and all-high settings, each number alone at its low and high bound
(the rest at the defaults), and a seeded sample of mixed corners. Each case has its own time
limit: a run that never ends (time standing still, retries multiplying) fails instead of hanging.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import random

import pytest

from sims.__main__ import main as sims_main

MODELS = ("hot_shard", "concurrency_pool", "retry_storm", "partitions", "platform")
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


@pytest.mark.timeout(20)
@pytest.mark.parametrize("model, values", CASES)
def test_every_corner_finishes_or_is_refused_in_one_line(model, values):
    module = importlib.import_module(f"sims.{model}")
    try:
        params = module.Params(**values)
        result = module.run(params, 7)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    out = module.summary(result)
    json.dumps(out, allow_nan=False)            # plain, finite figures only
    signed = {k for k in out if "growth" in k or k.startswith("extra_")}   # differences may be negative
    assert all(x >= 0 for k, v in out.items() if k not in signed for x in _numbers(v))
    assert result.params == params and result.seed == 7


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


@pytest.mark.timeout(20)
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
