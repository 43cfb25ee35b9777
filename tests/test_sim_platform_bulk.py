"""The platform's calm stretch drawn in bulk (sims.platform.bulk) gives exactly the run the loop gives.

Every figure of a seeded run is a graded truth somewhere, so "the same" means every field of the result.
"""
from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sims import platform
from sims.platform import Params, bulk, run


def _with_and_without_bulk(p: Params, seed: int, monkeypatch) -> tuple[platform.Result, platform.Result]:
    drawn = run(p, seed)
    with monkeypatch.context() as patch:
        patch.setattr(platform.calm, "BULK", False)
        looped = run(p, seed)
    assert drawn == looped
    return drawn, looped


def _spy(monkeypatch) -> dict[str, int]:
    """How often each way out of a bulk stretch was taken."""
    seen = {"settled": 0, "handed_over": 0, "gave_up": 0}
    settle, hand_over, queue = bulk.BulkStretch.settle, bulk.BulkStretch.hand_over, bulk.BulkStretch.queue

    def settled(self, until):
        seen["settled"] += 1
        return settle(self, until)

    def handed_over(self):
        seen["handed_over"] += 1
        return hand_over(self)

    def queued(self):
        ok = queue(self)
        seen["gave_up"] += not ok
        return ok

    monkeypatch.setattr(bulk.BulkStretch, "settle", settled)
    monkeypatch.setattr(bulk.BulkStretch, "hand_over", handed_over)
    monkeypatch.setattr(bulk.BulkStretch, "queue", queued)
    return seen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stream_holds_the_deviates_random_draws(seed):
    rng = random.Random(seed)
    rng.random()                                    # any position in the stream
    stream = bulk.Stream(rng.getstate(), 4000)
    mu, sigma = math.log(8.0) - 0.08, 0.4
    at, drawn = 0, []
    for _ in range(1000):
        at = int(stream.first[at])
        drawn.append(math.exp(mu + float(stream.z[at]) * sigma))
        at += 2
    assert drawn == [rng.lognormvariate(mu, sigma) for _ in range(1000)]
    assert int(stream.after4[0]) == int(stream.first[int(stream.first[int(stream.first[int(stream.first[0]) + 2]) + 2])
                                                     + 2]) + 2


@pytest.mark.parametrize("scenario, overrides, way", [
    ("baseline", dict(window_min=10.0), "settled"),                                  # the page default, shorter
    ("baseline", dict(window_min=6.0, workers=30), "settled"),                       # jobs wait for a slot now and then
    ("baseline", dict(window_min=4.0, workers=2, peak_jobs_per_s=1.0), "settled"),   # a queue that never empties
    ("break1_fifo", dict(window_min=8.0), "settled"),                                # Acme's surge inside the stretch
    ("break1_fair", dict(window_min=18.0), "handed_over"),                           # the clock takes over at minute 15
    ("break1_round_robin", dict(window_min=16.0, sample_s=7.0), "handed_over"),
])
def test_a_stretch_drawn_in_bulk_is_the_loops_stretch(scenario, overrides, way, monkeypatch):
    seen = _spy(monkeypatch)
    _with_and_without_bulk(Params.for_scenario(scenario, **overrides), 5, monkeypatch)
    assert seen[way] == 1 and seen["gave_up"] == 0


def test_a_stretch_that_meets_the_outage_is_given_back_to_the_loop(monkeypatch):
    seen = _spy(monkeypatch)
    monkeypatch.setattr(bulk, "worth_trying", lambda pf, stop: True)
    _with_and_without_bulk(Params.for_scenario("break2", window_min=12.0), 3, monkeypatch)
    assert seen["gave_up"] == 1


def test_a_stream_drawn_too_short_is_drawn_again_longer(monkeypatch):
    monkeypatch.setattr(bulk, "KM_ACCEPTED", 1e9)        # far too few numbers drawn at first
    seen = _spy(monkeypatch)
    _with_and_without_bulk(Params(window_min=5.0), 2, monkeypatch)
    assert seen["settled"] == 1


def test_a_stretch_likely_to_fail_is_left_to_the_loop():
    pf = platform.model.Platform(Params(), random.Random(1))
    pf.first_arrivals()
    assert bulk.worth_trying(pf, 3600.0)
    pf = platform.model.Platform(Params.for_scenario("break2"), random.Random(1))
    pf.first_arrivals()
    assert not bulk.worth_trying(pf, 3300.0)
    pf = platform.model.Platform(Params(call_sigma=1.2, total_timeout_s=25.0), random.Random(1))
    pf.first_arrivals()
    assert not bulk.worth_trying(pf, 3600.0)


SMALL = dict(tenants=40, peak_jobs_per_s=2.0, acme_normal_jobs_per_s=0.05, window_min=3.0,
             break_at_min=1.0, sample_s=5.0, call_mean_s=4.0)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), workers=st.integers(1, 8), multiplier=st.sampled_from([1.0, 20.0]),
       sigma=st.sampled_from([0.0, 0.4, 1.2]), timeout=st.sampled_from([60.0, 12.0]),
       outage=st.sampled_from([0.0, 1.0]), mitigations=st.sampled_from([0.0, 2.0]),
       claim=st.sampled_from(sorted(platform.CLAIM_RULES)), fixes=st.booleans(), always=st.booleans())
def test_drawing_in_bulk_never_changes_a_run(seed, workers, multiplier, sigma, timeout, outage, mitigations, claim,
                                             fixes, always, monkeypatch):
    p = Params(**SMALL, workers=workers, acme_multiplier=multiplier, acme_resubmit_share=0.5, call_sigma=sigma,
               total_timeout_s=timeout, outage_min=outage, mitigations_from_min=mitigations, claim=claim,
               rate_limit=fixes, idempotency=fixes)
    with monkeypatch.context() as patch:
        if always:                                   # even where it is likely to fail and be given back
            patch.setattr(bulk, "worth_trying", lambda pf, stop: True)
        _with_and_without_bulk(p, seed, monkeypatch)
