"""The platform as a SimPy model: the queue and its claim rules, the worker slots, the LLM gateway with
its providers and breakers, and the monitor. The module docstring of sims.platform states the assumptions.
"""
from __future__ import annotations

import heapq
import math
import random
from collections import defaultdict, deque
from collections.abc import Callable

import simpy

from sims._budget import run_within
from sims.platform import calm as shortcut
from sims.platform.bulk import BulkStretch
from sims.platform.calm import CalmStretch
from sims.platform.params import (ACME, FIRST_TOKEN_TIMEOUT_S, MAX_EVENTS, PLAN_RUNNING_CAP,
                                  SHORT_TOTAL_TIMEOUT_S, STEPS, Params)
from sims.platform.records import (ERROR_503, FAILED, FINISHED, HANG, OK, QUEUED, RUNNING, TIMEOUT, At,
                                   FailedCall, Job, JobRecord, Provider, Result, Sample, job_records)
from sims.platform.tenants import Arrivals, TokenBuckets, tenant_mix

class Platform(CalmStretch, Arrivals):
    """Mutable state of one run: the calm stretch first (no clock, sims.platform.calm), then SimPy's clock."""

    def __init__(self, p: Params, rng: random.Random) -> None:
        self.p, self.rng = p, rng
        self.env: simpy.Environment | None = None       # set when the event-by-event run starts
        self.plans, self.rates = tenant_mix(p)
        n = len(self.plans)
        self.mit_from = p.mitigations_from_min * 60.0
        self.break_s = p.break_at_min * 60.0
        self.outage = (self.break_s, self.break_s + p.outage_min * 60.0) if p.outage_min > 0 else None
        self.mu = math.log(p.call_mean_s) - p.call_sigma ** 2 / 2.0
        self.free_slots = p.slots
        self.running = [0] * n
        self.queued_count = [0] * n
        self.tenant_queue: defaultdict[int, deque[Job]] = defaultdict(deque)   # made when the tenant first queues
        self.rule = "fifo"                   # becomes p.claim at mit_from
        self.caps = [n * 1000] * n           # no caps under the baseline's FIFO
        self.heap: list[tuple[int, int]] = []
        self.in_heap = [False] * n
        self.last_served = [0] * n
        self.next_seq = 1
        self.buckets = TokenBuckets(self.plans)
        self.jobs: list[Job] = []
        self.failed_calls: list[FailedCall] = []
        self.breaker_opened: list[tuple[float, int]] = []
        self.samples: list[Sample] = []
        self.waiters: deque[simpy.Event] = deque()
        self.submissions = self.deduplicated = 0
        self.rejected = [0, 0]                # 429s from the bucket: Acme, everyone else
        self.queued_acme = self.queued_others = 0
        self.running_acme = 0
        prices = (p.price_a_usd, p.price_b_usd, p.price_c_usd)
        self.providers = [Provider(i, cap, prices[i]) for i, cap in enumerate(p.provider_concurrency)]
        # Calm: no call has failed yet and A has room for every slot, so every call goes to A and its
        # outcome is known when the job starts (see _start_calm). Ends for good at the first call that
        # will not succeed.
        self.calm = shortcut.CALM_SHORTCUT and self.providers[0].capacity >= p.slots
        self.handovers: list[float] = []              # handovers inside finished calm calls (not yet counted)
        self.calm_until = math.inf                    # when the first failing call starts, once known
        self.stretch_starts: list[float] = []         # when each job of the stretch starts, were it calm
        self.failing_first: list[Job] = []           # stretch jobs started whose first call fails
        # A job that ends by then with no call longer than this cannot fail: checked without _plan_call.
        self.calm_safe_until = self.outage[0] if self.outage else math.inf
        self.calm_safe_call_s = min(p.total_timeout_s, SHORT_TOTAL_TIMEOUT_S if p.short_timeouts else math.inf)
        self.bulk: BulkStretch | None = None          # a whole run drawn as one calm stretch in bulk

    # --- switches -------------------------------------------------------------------------
    def _on(self, switch: bool) -> bool:
        return switch and self.env.now >= self.mit_from

    # --- admission --------------------------------------------------------------------------
    def submit(self, tenant: int, repeat: bool) -> None:
        self.submissions += 1
        p, now = self.p, self.env.now
        if p.rate_limit and now >= self.mit_from and not self.buckets.take(tenant, now):
            self.rejected[tenant != ACME] += 1
            return
        if repeat and self._on(p.idempotency):
            self.deduplicated += 1
            return
        draw, mu, sigma = self.rng.lognormvariate, self.mu, p.call_sigma
        # one healthy duration per step in STEPS, in step order
        job = Job(tenant, now, (draw(mu, sigma), draw(mu, sigma), draw(mu, sigma), draw(mu, sigma)))
        self.jobs.append(job)
        if self.free_slots and not self.heap and not self.queued_count[tenant] and \
                self.running[tenant] < self.caps[tenant]:
            self._start_now(job)
        else:
            self._enqueue(job)
            self.fill()


    # --- queue and claim ----------------------------------------------------------------------
    # Every rule is "pop the tenant with the smallest key among those with queued work and room
    # under their cap, run its oldest job". FIFO and capped key a tenant by its oldest job's
    # enqueue number (so the oldest job overall goes first); round-robin keys it by when it was
    # last served. Each tenant has at most one entry in the heap.
    def _key(self, tenant: int) -> int:
        if self.rule == "round_robin":
            return self.last_served[tenant]
        return self.tenant_queue[tenant][0].seq

    def _offer(self, tenant: int) -> None:
        if (not self.in_heap[tenant] and self.queued_count[tenant]
                and self.running[tenant] < self.caps[tenant]):
            self.in_heap[tenant] = True
            heapq.heappush(self.heap, (self._key(tenant), tenant))

    def _enqueue(self, job: Job) -> None:
        tenant = job.tenant
        job.state = QUEUED
        job.seq = self.next_seq
        self.next_seq += 1
        self.tenant_queue[tenant].append(job)
        self.queued_count[tenant] += 1
        if tenant == ACME:
            self.queued_acme += 1
        else:
            self.queued_others += 1
        self._offer(tenant)

    def fill(self) -> None:
        heap, in_heap, caps, running, counts = (self.heap, self.in_heap, self.caps, self.running,
                                                self.queued_count)
        while self.free_slots > 0 and heap:
            tenant = heapq.heappop(heap)[1]
            in_heap[tenant] = False
            if counts[tenant] and running[tenant] < caps[tenant]:
                self._start(self.tenant_queue[tenant].popleft())

    def _start(self, job: Job) -> None:
        tenant = job.tenant
        job.state = RUNNING
        if job.started is None:
            job.started = self.env.now
        self.free_slots -= 1
        self.running[tenant] += 1
        self.queued_count[tenant] -= 1
        self.last_served[tenant] = self.next_seq
        self.next_seq += 1
        if tenant == ACME:
            self.queued_acme -= 1
            self.running_acme += 1
        else:
            self.queued_others -= 1
        self._offer(tenant)
        if not (self.calm and self._start_calm(job)):
            self.env.process(self.work(job))

    def _start_now(self, job: Job) -> None:
        """What ``_enqueue`` then ``fill`` do for a job that finds an idle slot and nobody waiting."""
        tenant = job.tenant
        job.seq = self.next_seq
        self.last_served[tenant] = self.next_seq + 1
        self.next_seq += 2
        job.state = RUNNING
        job.started = self.env.now
        self.free_slots -= 1
        self.running[tenant] += 1
        if tenant == ACME:
            self.running_acme += 1
        if not (self.calm and self._start_calm(job)):
            self.env.process(self.work(job))

    def _release_slot(self, job: Job) -> None:
        tenant = job.tenant
        self.free_slots += 1
        self.running[tenant] -= 1
        if tenant == ACME:
            self.running_acme -= 1
        self._offer(tenant)

    def switch_on(self, event: simpy.Event | None = None) -> None:
        """At ``mitigations_from_min``: change the claim rule and caps, then rebuild the heap."""
        self.rule = self.p.claim
        if self.rule != "fifo":
            self.caps = [PLAN_RUNNING_CAP[plan] for plan in self.plans]
            self.caps[ACME] = self.p.acme_cap
        if self.p.pause_acme:
            self.caps[ACME] = 0
        self.heap.clear()
        self.in_heap = [False] * len(self.plans)
        for tenant in range(len(self.plans)):
            self._offer(tenant)
        self.fill()


    # --- workers --------------------------------------------------------------------------------
    def work(self, job: Job):
        p = self.p
        a = self.providers[0]
        while job.steps_done < len(STEPS):
            if job.steps_done == len(STEPS) - 1 and not a.closed and self._on(p.polish_switch):
                job.degraded = True
                break
            served = yield from self.call(job.call_s[job.steps_done])
            if not served:
                self._release_slot(job)
                job.interruptions += 1
                if job.interruptions >= p.max_job_attempts:
                    job.state, job.ended = FAILED, self.env.now
                else:
                    self._enqueue(job)      # resumes later at job.steps_done
                self.fill()
                return
            job.steps_done += 1
        job.state, job.ended = FINISHED, self.env.now
        self._release_slot(job)
        self.fill()

    # --- LLM gateway ----------------------------------------------------------------------------
    def _pick(self, tried: set[int], pools: bool) -> tuple[Provider | None, bool]:
        """First provider not tried for this step whose breaker allows and that has room.

        Returns (provider, any_allowed). A half-open breaker lets exactly one probe through.
        """
        any_allowed = False
        for provider in self.providers:
            if provider.index in tried:
                continue
            probe = not provider.closed
            if probe and (provider.probing or self.env.now < provider.reopen_at):
                continue
            any_allowed = True
            if provider.inflight < provider.capacity:
                provider.probing = probe
                return provider, True
            if not pools:
                provider.refused += 1      # a 429 straight back; try the next provider
                tried.add(provider.index)
        return None, any_allowed

    def call(self, healthy_s: float):
        """One step's LLM call through the gateway; returns True when a provider answered.

        ``healthy_s`` is how long the first try takes on a healthy provider; it is drawn with the
        job so that runs differing only in capacity see the same work (common random numbers).
        """
        env, p = self.env, self.p
        pools = self._on(p.provider_pools)
        tried: set[int] = set()
        attempts = 0
        woken = False
        while True:
            provider, any_allowed = self._pick(tried, pools)
            if provider is None:
                if pools and any_allowed:
                    event = env.event()
                    if woken:
                        self.waiters.appendleft(event)     # keep its place in the line
                    else:
                        self.waiters.append(event)
                    yield event
                    woken = True
                    continue
                attempts += 1
                if attempts >= p.max_call_attempts:
                    return False
                yield env.timeout(p.retry_after_s)
                tried.clear()
                continue
            woken = False
            provider.inflight += 1
            provider.sent += 1
            outcome, held = self._plan_call(provider, healthy_s, env.now)
            yield env.timeout(held)
            provider.inflight -= 1
            if self.waiters:
                self.waiters.popleft().succeed()
            if outcome == OK:
                provider.succeeded += 1
                provider.spend += provider.price
                self._breaker_success(provider)
                return True
            self.failed_calls.append(FailedCall(provider.index, env.now - held, held, outcome))
            self._breaker_failure(provider)
            healthy_s = self.rng.lognormvariate(self.mu, p.call_sigma)   # a retry is a new call
            tried.add(provider.index)
            attempts += 1
            if attempts >= p.max_call_attempts:
                return False

    def _plan_call(self, provider: Provider, healthy: float, now: float) -> tuple[str, float]:
        """Outcome and duration of a call starting at ``now``; the outage schedule is known in advance."""
        p = self.p
        short = p.short_timeouts and now >= self.mit_from
        total = SHORT_TOTAL_TIMEOUT_S if short else p.total_timeout_s
        no_token_limit = FIRST_TOKEN_TIMEOUT_S if short else total
        if provider.index == 0 and self.outage is not None:
            down, up = self.outage
            if down <= now < up:
                if now < down + p.hang_s:
                    return HANG, no_token_limit
                return ERROR_503, p.error_latency_s
            if now < down < now + min(healthy, total):
                # In flight when A stops: it stalls; a call that had its first token only meets
                # the total timeout.
                return HANG, (total if down - now >= p.first_token_s else no_token_limit)
        if healthy > total:
            return TIMEOUT, total
        return OK, healthy

    def _breaker_success(self, provider: Provider) -> None:
        provider.failures = 0
        if provider.probing:
            provider.probing = False
            provider.closed = True

    def _breaker_failure(self, provider: Provider) -> None:
        if not self.p.breakers:
            return
        provider.failures += 1
        if provider.probing or (provider.closed and provider.failures >= self.p.breaker_failures):
            provider.probing = False
            if provider.closed:
                self.breaker_opened.append((self.env.now, provider.index))
            provider.closed = False
            provider.reopen_at = self.env.now + self.p.breaker_open_s

    # --- monitoring -------------------------------------------------------------------------------
    def sample(self) -> Sample:
        providers = self.providers
        return Sample(
            t=self.env.now, queued_acme=self.queued_acme, queued_others=self.queued_others,
            running_acme=self.running_acme,
            running_others=self.p.slots - self.free_slots - self.running_acme,
            inflight=tuple(x.inflight for x in providers), sent=tuple(x.sent for x in providers),
            succeeded=tuple(x.succeeded for x in providers),
            breaker_closed=tuple(x.closed for x in providers))

    def monitor(self, first_tick: float):
        yield At(self.env, first_tick, None)
        while True:
            self.samples.append(self.sample())
            yield self.env.timeout(self.p.sample_s)


def run(params: Params, seed: int = 1, progress: Callable[[float], None] | None = None) -> Result:
    """Simulate ``params.window_min`` minutes; ``progress`` (if given) gets fractions 0..1."""
    platform = Platform(params, random.Random(seed))
    until = params.window_min * 60.0
    handover = platform.run_stretch(until, progress)
    if platform.bulk is not None:
        drawn, platform.bulk = platform.bulk, None      # no cycle left for the garbage collector to find
        samples, records, events = drawn.settle(until)
        return _result(platform, seed, samples, records, events, progress)
    platform.settle_stretch(handover, resuming=handover < until)
    first_tick = platform.stretch_samples(handover, until_sample=handover >= until)
    events = len(platform.jobs) + sum(1 for job in platform.jobs if job.ended is not None)
    if handover < until:
        env = simpy.Environment(handover)
        platform.resume(env, first_tick)
        events += run_within(env, MAX_EVENTS, "the platform run", until, progress)
        platform.settle_calm(until)
        platform.samples.append(platform.sample())
    else:
        platform.settle_calm(until)
    samples = platform.handed_over(platform.samples)
    return _result(platform, seed, samples, job_records(platform.jobs, platform.plans), events, progress)


def _result(platform: Platform, seed: int, samples: list[Sample], jobs: tuple[JobRecord, ...], events: int,
            progress: Callable[[float], None] | None) -> Result:
    if progress is not None:
        progress(1.0)
    return Result(
        params=platform.p, seed=seed, samples=tuple(samples), jobs=jobs,
        failed_calls=tuple(platform.failed_calls), breaker_opened=tuple(platform.breaker_opened),
        submissions=platform.submissions, rejected_429=tuple(platform.rejected),
        deduplicated=platform.deduplicated,
        provider_refusals=tuple(x.refused for x in platform.providers),
        provider_spend_usd=tuple(x.spend for x in platform.providers),
        tenant_plans=platform.plans, tenant_rates=platform.rates, events=events)
