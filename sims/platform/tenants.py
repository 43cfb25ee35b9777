"""Who sends the platform's work: the tenant mix by plan, each tenant's token bucket, and the two
Poisson arrival streams (everyone else merged, and Acme with its surge).
"""
from __future__ import annotations

import bisect
import functools

import simpy

from sims.platform.params import (ACME, ENTERPRISE, PLAN_BUCKET_BURST, PLAN_BUCKET_RATE, PLAN_JOB_SHARE,
                                  PLAN_TENANT_SHARE, SKEW_EXPONENT, Params)
from sims.platform.records import At


def tenant_mix(p: Params) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Plans and normal rates of every tenant; tenant 0 is Acme. Deterministic, no seed: shared by every
    seed of the same settings."""
    return _mix(p.tenants, p.peak_jobs_per_s, p.acme_normal_jobs_per_s)


@functools.lru_cache(maxsize=64)
def _mix(tenants: int, peak_jobs_per_s: float,
         acme_normal_jobs_per_s: float) -> tuple[tuple[int, ...], tuple[float, ...]]:
    counts = [max(1, round(tenants * share)) for share in PLAN_TENANT_SHARE[:2]]
    counts.append(tenants - sum(counts))
    plans: list[int] = []
    rates: list[float] = []
    # Acme first, then the rest of Enterprise, then Free and Pro.
    plans.append(ENTERPRISE)
    rates.append(acme_normal_jobs_per_s)
    budget = peak_jobs_per_s - acme_normal_jobs_per_s
    shares = list(PLAN_JOB_SHARE)
    for plan in (ENTERPRISE, 0, 1):
        n = counts[plan] - (1 if plan == ENTERPRISE else 0)
        if n <= 0:
            continue
        weights = [(k + 1) ** -SKEW_EXPONENT for k in range(n)]
        total_weight = sum(weights)
        plan_rate = budget * shares[plan]
        plans.extend([plan] * n)
        rates.extend(plan_rate * w / total_weight for w in weights)
    scale = budget / sum(rates[1:])
    return tuple(plans), tuple([rates[0]] + [r * scale for r in rates[1:]])


class TokenBuckets:
    """One bucket per tenant, sized by its plan (PLAN_BUCKET_BURST), refilled at PLAN_BUCKET_RATE."""

    def __init__(self, plans: tuple[int, ...]) -> None:
        self.plans = plans
        self.tokens = [PLAN_BUCKET_BURST[plan] for plan in plans]
        self.refilled_at = [0.0] * len(plans)

    def take(self, tenant: int, now: float) -> bool:
        """Whether ``tenant`` may submit at ``now`` (spending a token when it may)."""
        plan = self.plans[tenant]
        tokens = min(PLAN_BUCKET_BURST[plan],
                     self.tokens[tenant] + (now - self.refilled_at[tenant]) * PLAN_BUCKET_RATE[plan])
        self.refilled_at[tenant] = now
        if tokens < 1.0:
            self.tokens[tenant] = tokens
            return False
        self.tokens[tenant] = tokens - 1.0
        return True


class Arrivals:
    """The arrival streams of the platform model (mixed into it: it uses ``env``, ``rng`` and ``submit``)."""

    # Two arrival streams: everyone else merged, and Acme. Each draws its next gap when an arrival
    # has been submitted. Under the clock they are chains of timeouts with a callback (the same draws
    # in the same order at the same times as a process, for less work than resuming a generator).
    def first_arrivals(self) -> None:
        """The first draws, in the order the streams make them at time 0: everyone else, then Acme."""
        cumulative = []
        total = 0.0
        for rate in self.rates[1:]:
            total += rate
            cumulative.append(total)
        self.others_cumulative, self.others_rate = cumulative, total
        self.next_others = 0 + self.rng.expovariate(total)
        self.next_acme = self._acme_draw(0)

    def _acme_draw(self, now: float) -> tuple[float, bool | None]:
        """When Acme's next event is, and whether the surge was on (None: the draw restarts then)."""
        p = self.p
        surging = now >= self.break_s
        rate = p.acme_normal_jobs_per_s * (p.acme_multiplier if surging else 1.0)
        gap = self.rng.expovariate(rate)
        if not surging and now + gap > self.break_s:
            # Memoryless arrivals: restart the draw at the moment the rate changes.
            return now + (self.break_s - now), None
        return now + gap, surging

    def _schedule_arrivals(self) -> None:
        At(self.env, self.next_others, None, self._others_arrive)
        self._schedule_acme()

    def _others_arrive(self, event: simpy.Event) -> None:
        rng, total = self.rng, self.others_rate
        self.submit(1 + bisect.bisect_left(self.others_cumulative, rng.random() * total), False)
        At(self.env, self.env.now + rng.expovariate(total), None, self._others_arrive)

    def _schedule_acme(self) -> None:
        when, surging = self.next_acme
        if surging is None:
            At(self.env, when, None, self._acme_restart)
        else:
            At(self.env, when, surging, self._acme_arrive)

    def _acme_restart(self, event: simpy.Event) -> None:
        self.next_acme = self._acme_draw(self.env.now)
        self._schedule_acme()

    def _acme_arrive(self, event: simpy.Event) -> None:
        surging = event._value         # whether the surge was on when this gap was drawn
        self.submit(ACME, surging and self.rng.random() < self.p.acme_resubmit_share)
        self.next_acme = self._acme_draw(self.env.now)
        self._schedule_acme()

