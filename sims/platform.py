"""The whole generation platform of drill 13 as one SimPy model: tenants, queue, slots, providers.

Replays Break 1 (a hot tenant) and Break 2 (primary provider outage) with each mitigation switchable.

Units: seconds inside the model, minutes in parameters and summaries where the drill talks in minutes,
US dollars for spend. Assumptions and simplifications, each chosen to keep a peak hour interactive:

* Tenants. ``tenants`` accounts (default 2,000) split by count into Free 65%, Pro 27.5%, Enterprise 7.5%;
  by volume Free sends 30% of jobs, Pro 45%, Enterprise 25%. Inside a plan the rate of the tenant of
  rank k is proportional to 1/sqrt(k), a fixed skew that does not depend on the seed. Tenant 0 is
  Acme (Enterprise) with its own normal rate; every tenant's rates add up to ``peak_jobs_per_s``.
  Arrivals are Poisson: one merged stream for everyone but Acme, and Acme's own stream, whose rate
  is multiplied by ``acme_multiplier`` from ``break_at_min`` on.
* Admission. The token bucket is per tenant with a rate and burst by plan (Enterprise 1 job/s with a
  burst of 60 as in the drill; Free 0.1/s burst 10 and Pro 0.5/s burst 30 are our assumptions).
  During the break a share ``acme_resubmit_share`` of Acme's submissions repeat a job it already
  sent; with idempotency keys they return the first job, without them each becomes a new job.
* Claim (``claim``, see ``CLAIM_RULES``). ``fifo`` takes the oldest queued job. ``capped`` takes
  the oldest job among tenants under their running cap (Free 2, Pro 5, Enterprise 20, Acme
  ``acme_cap``). ``round_robin`` serves the least recently served tenant under its cap, then its
  oldest job, as the drill's claim query does. A pause is a cap of 0 that lasts to the end of the
  run. Claiming takes no time and has no lock contention. The drill's 28-minute recovery assumes
  Acme keeps all 20 of its slots, which ``capped`` reproduces; under ``round_robin`` the many
  tenants with a few queued jobs each come before Acme, so everyone else recovers about as fast
  as with a pause. "Backlog" everywhere means jobs waiting for a slot, not jobs running.
* Switches act from ``mitigations_from_min`` (minutes from the start of the run; 0 means the final
  design is in place all along). Before that moment the baseline design runs: FIFO, no bucket, no
  keys, one 60 s timeout, no pools, no polish switch. ``breakers`` is part of the baseline.
* Workers. ``workers`` x ``slots_per_worker`` slots, one job each. A job is four calls in order
  (outline, draft, expand, polish). A call lasts a lognormal time with mean ``call_mean_s`` and
  shape ``call_sigma`` (p99 near 19 s at the defaults); the first try of each step is drawn when
  the job is submitted, so runs that differ only in capacity do the same work, and a retry draws
  a fresh time. Finished steps are kept: a job whose step
  cannot be served goes back to the queue and later resumes at that step; after
  ``max_job_attempts`` interruptions it fails.
* Providers. A, B, C are tried in that order. A provider's per-minute limit becomes a concurrency
  by Little's law (limit / 60 x ``call_mean_s``: 400, 80, 40). With pools on, a call waits for a
  free slot of an allowed provider (the waiting line is shared); with pools off a call beyond that
  concurrency is refused at once with a 429 and tries the next provider, sleeping
  ``retry_after_s`` after a round in which all refused. No HTTP, no tokens, no per-minute windows.
* Outage. Only A fails: from ``break_at_min`` for ``outage_min`` minutes. For the first ``hang_s``
  it accepts calls and never answers; afterwards it answers 503 after ``error_latency_s``. A call
  in flight when the outage starts stalls too. A hung call ends at the total timeout (60 s, or
  30 s with short timeouts) or, with short timeouts, at the 5 s first-token timeout when no token
  came (a healthy call streams its first token after ``first_token_s``).
* Breaker. One per provider, shared by the whole fleet (the drill's per-process breakers are not
  modelled): opens after ``breaker_failures`` failures in a row, lets one probe through after
  ``breaker_open_s``, closes on a successful probe, and moves all traffic back at once (no staged
  failback). A failed call moves the step to the next provider; ``max_call_attempts`` failed or
  refused tries fail the step.
* Polish switch. While A's breaker is not closed, a job reaching its fourth step skips it and is
  counted as degraded. It follows the breaker, so with breakers off it never fires.
* Spend. A successful call is billed at its provider's price (A $0.005, so $0.02 a job; B and C
  $0.00875, so $0.035 a job); hung, failed and refused calls are free. The daily spend cap of
  Break 3 is not modelled.

How a run is computed, so that 20 seeds of a peak hour take seconds: while no call has failed, a
job's calls are known when it starts, so the first-in-first-out stretch before the mitigations runs
as one loop over the arrivals, and later calm jobs are one event each; from the first call that
will not succeed every job is a SimPy process, one event per call. Each shortcut gives exactly the
run a process per job gives (the tests compare them).
"""
from __future__ import annotations

import bisect
import dataclasses
import heapq
import math
import random
import statistics
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import simpy
from simpy.events import NORMAL

from sims._budget import BudgetExceeded
from sims._params import check_bounds, choice, flag

STEPS = ("outline", "draft", "expand", "polish")
PLAN_NAMES = ("Free", "Pro", "Enterprise")
PLAN_TENANT_SHARE = (0.65, 0.275, 0.075)      # share of tenant accounts
PLAN_JOB_SHARE = (0.30, 0.45, 0.25)           # share of jobs at peak
PLAN_RUNNING_CAP = (2, 5, 20)                 # jobs running at once under a capped claim rule
PLAN_BUCKET_RATE = (0.1, 0.5, 1.0)            # tokens per second
PLAN_BUCKET_BURST = (10.0, 30.0, 60.0)        # bucket size
ENTERPRISE = 2
ACME = 0                                      # tenant index of the hot tenant
PROVIDERS = ("A", "B", "C")
SKEW_EXPONENT = 0.5                           # rate of rank k is proportional to k ** -0.5
SHORT_TOTAL_TIMEOUT_S = 30.0
FIRST_TOKEN_TIMEOUT_S = 5.0
SETTLE_S = 120.0                              # ignored at the start of a measurement window
PROGRESS_EVERY_EVENTS = 4096
# Plan a job's calls in one event while nothing has failed (see _start_calm). False runs every job
# as its own process, one event per call; the tests check that both give the same result.
CALM_SHORTCUT = True

QUEUED, RUNNING, FINISHED, FAILED = 0, 1, 2, 3
STATE_NAMES = ("queued", "running", "finished", "failed")
OK, HANG, ERROR_503, TIMEOUT = "ok", "hang", "503", "timeout"


class _ScenarioDefault:
    """Marker default: the field takes its value from the chosen scenario."""

    def __repr__(self) -> str:
        return "<from scenario>"

    def __reduce__(self):
        return "SCENARIO_DEFAULT"


SCENARIO_DEFAULT = _ScenarioDefault()
_S = SCENARIO_DEFAULT

# Values every scenario starts from: the brief's baseline design at the weekday peak.
_BASE: dict[str, object] = dict(
    window_min=60.0, break_at_min=5.0, peak_jobs_per_s=5.0, tenants=2000,
    acme_normal_jobs_per_s=0.05, acme_multiplier=1.0, acme_resubmit_share=0.0, acme_cap=20,
    outage_min=0.0, hang_s=60.0, error_latency_s=0.2, mitigations_from_min=0.0,
    rate_limit=False, idempotency=False, claim="fifo", pause_acme=False,
    short_timeouts=False, provider_pools=False, polish_switch=False, breakers=True,
    workers=40, slots_per_worker=5, call_mean_s=8.0, call_sigma=0.4, first_token_s=1.0,
    total_timeout_s=60.0, limit_a_per_min=3000.0, limit_b_per_min=600.0, limit_c_per_min=300.0,
    price_a_usd=0.005, price_b_usd=0.00875, price_c_usd=0.00875,
    breaker_failures=5, breaker_open_s=30.0, max_call_attempts=6, max_job_attempts=3,
    retry_after_s=1.0, sample_s=10.0, recovered_below_jobs=20,
)

_BREAK1 = dict(acme_multiplier=100.0, acme_resubmit_share=0.98)
_BREAK1_FIX = dict(_BREAK1, mitigations_from_min=15.0, rate_limit=True, idempotency=True,
                   claim="capped")
_BREAK2 = dict(window_min=55.0, outage_min=40.0, short_timeouts=True, provider_pools=True)

SCENARIOS: dict[str, dict[str, object]] = {
    "baseline": {},
    "break1_fifo": dict(_BREAK1, window_min=20.0),
    "break1_fair": dict(_BREAK1_FIX, window_min=50.0),
    "break1_round_robin": dict(_BREAK1_FIX, window_min=35.0, claim="round_robin"),
    "break1_paused": dict(_BREAK1_FIX, window_min=35.0, pause_acme=True),
    "break2": dict(_BREAK2, polish_switch=True),
    "break2_polish_off": dict(_BREAK2, polish_switch=False),
}

# The breaks replay the drill's numbers as written (Acme's 100x, limits 10 minutes in, a 40-minute outage);
# a retake draws other numbers, so a title names the break and the fix, never a figure a retake changes.
SCENARIO_TITLES = {
    "baseline": "Weekday peak, nothing broken",
    "break1_fifo": "Break 1 as written: Acme's surge, first-in first-out",
    "break1_fair": "Break 1 as written: per-tenant caps once the limits go in, Acme held at 20",
    "break1_round_robin": "Break 1 as written: round-robin claim with caps once the limits go in",
    "break1_paused": "Break 1 as written: per-tenant caps once the limits go in, Acme paused",
    "break2": "Break 2 as written: provider A down, polish switch on",
    "break2_polish_off": "Break 2 as written: provider A down, polish kept",
}

CLAIM_RULES = {
    "fifo": "oldest queued job first, no caps (the baseline)",
    "capped": "oldest queued job of any tenant under its running cap",
    "round_robin": "least recently served tenant under its cap, then its oldest job",
}

# Names of the switches a reader can flip, in the order the final design lists them.
MITIGATIONS = ("idempotency", "rate_limit", "pause_acme", "short_timeouts",
               "provider_pools", "polish_switch", "breakers")

# Limits on what a page may ask for, so the worst case stays interactive (an event budget).
MAX_WINDOW_MIN = 120.0
MAX_PEAK_JOBS_PER_S = 20.0
MAX_TENANTS = 20000
MAX_SUBMISSIONS = 150_000                     # mean submissions per run, checked up front
MAX_EVENTS = 1_500_000                        # the guard inside a run when retries multiply the work (a few seconds)
# Every number's range: low bounds above zero keep time moving (a 0 s retry or error would loop
# at one instant), high bounds on attempts keep one job's retries few.
BOUNDS: dict[str, tuple[float, float]] = {
    "window_min": (0.05, MAX_WINDOW_MIN),
    "break_at_min": (0.0, MAX_WINDOW_MIN),
    "peak_jobs_per_s": (0.05, MAX_PEAK_JOBS_PER_S),
    "tenants": (4, MAX_TENANTS),
    "acme_normal_jobs_per_s": (0.001, MAX_PEAK_JOBS_PER_S),
    "acme_multiplier": (0.01, 400.0),
    "acme_resubmit_share": (0.0, 0.99),
    "acme_cap": (0, 1000),
    "outage_min": (0.0, MAX_WINDOW_MIN),
    "hang_s": (0.0, 3_600.0),
    "error_latency_s": (0.01, 60.0),
    "mitigations_from_min": (0.0, MAX_WINDOW_MIN),
    "workers": (1, 400),
    "slots_per_worker": (1, 50),
    "call_mean_s": (0.5, 120.0),
    "call_sigma": (0.0, 1.5),
    "first_token_s": (0.01, FIRST_TOKEN_TIMEOUT_S - 0.01),
    "total_timeout_s": (FIRST_TOKEN_TIMEOUT_S + 1.0, 600.0),
    "limit_a_per_min": (1.0, 1e6),
    "limit_b_per_min": (1.0, 1e6),
    "limit_c_per_min": (1.0, 1e6),
    "price_a_usd": (0.0, 100.0),
    "price_b_usd": (0.0, 100.0),
    "price_c_usd": (0.0, 100.0),
    "breaker_failures": (1, 1_000),
    "breaker_open_s": (1.0, 3_600.0),
    "max_call_attempts": (1, 10),
    "max_job_attempts": (1, 10),
    "retry_after_s": (0.1, 60.0),
    "sample_s": (1.0, 60.0),
    "recovered_below_jobs": (0, 100_000),
}


@dataclass(frozen=True)
class Params:
    """One run of the platform; any field left out takes the value of ``scenario``."""

    scenario: str = "baseline"
    window_min: float = _S              # simulated minutes
    break_at_min: float = _S            # when Acme's surge or A's outage starts
    peak_jobs_per_s: float = _S         # all tenants together, Acme at its normal rate
    tenants: int = _S
    acme_normal_jobs_per_s: float = _S
    acme_multiplier: float = _S         # Acme's rate is multiplied by this from the break on
    acme_resubmit_share: float = _S     # share of Acme's break submissions that repeat a job
    acme_cap: int = _S                  # Acme's running cap under a capped rule
    outage_min: float = _S              # minutes provider A is down from the break on
    hang_s: float = _S                  # first part of the outage: accepts and never answers
    error_latency_s: float = _S         # a 503 comes back after this long
    mitigations_from_min: float = _S    # switches below act from this minute of the run
    rate_limit: bool = _S
    idempotency: bool = _S
    claim: str = _S                     # fifo, capped or round_robin (see CLAIM_RULES)
    pause_acme: bool = _S
    short_timeouts: bool = _S           # 30 s total and 5 s first-token instead of 60 s total
    provider_pools: bool = _S           # per-provider concurrency pools from Little's law
    polish_switch: bool = _S            # skip the fourth call while A's breaker is not closed
    breakers: bool = _S
    workers: int = _S
    slots_per_worker: int = _S
    call_mean_s: float = _S
    call_sigma: float = _S              # lognormal shape of one call's duration
    first_token_s: float = _S           # a healthy call streams its first token after this
    total_timeout_s: float = _S         # the baseline design's only timeout
    limit_a_per_min: float = _S
    limit_b_per_min: float = _S
    limit_c_per_min: float = _S
    price_a_usd: float = _S             # per successful call
    price_b_usd: float = _S
    price_c_usd: float = _S
    breaker_failures: int = _S          # failures in a row that open a breaker
    breaker_open_s: float = _S          # wait before a half-open probe
    max_call_attempts: int = _S         # failed or refused tries before a step gives up
    max_job_attempts: int = _S          # interruptions before a job fails
    retry_after_s: float = _S           # sleep after every provider refused or was open
    sample_s: float = _S                # monitoring interval
    recovered_below_jobs: int = _S      # others' queue at or under this counts as recovered

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise ValueError(f"scenario must be one of {', '.join(SCENARIOS)}, got {self.scenario!r}")
        chosen = {**_BASE, **SCENARIOS[self.scenario]}
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is SCENARIO_DEFAULT:
                object.__setattr__(self, field.name, chosen[field.name])
        self._validate()

    @classmethod
    def for_scenario(cls, name: str, **overrides: object) -> Params:
        """The scenario's params with some fields replaced (the way to switch scenario)."""
        return cls(scenario=name, **overrides)

    def _validate(self) -> None:
        for field in dataclasses.fields(self):
            if field.type == "bool":
                flag(field.name, getattr(self, field.name))
        choice("claim", self.claim, CLAIM_RULES)
        check_bounds(self, BOUNDS)
        if self.acme_normal_jobs_per_s >= self.peak_jobs_per_s:
            raise ValueError(f"acme_normal_jobs_per_s must be below peak_jobs_per_s ({self.peak_jobs_per_s:g}), "
                             f"got {self.acme_normal_jobs_per_s:g}")
        if self.expected_submissions > MAX_SUBMISSIONS:
            raise ValueError(f"this run would see about {self.expected_submissions:,.0f} submissions; the limit "
                             f"is {MAX_SUBMISSIONS:,} (shorten window_min or lower the rates)")

    @property
    def expected_submissions(self) -> float:
        """Mean submissions over the window: everyone else, Acme before the break, Acme after it."""
        window_s = self.window_min * 60.0
        before = min(self.break_at_min * 60.0, window_s)
        acme = self.acme_normal_jobs_per_s * (before + self.acme_multiplier * (window_s - before))
        return (self.peak_jobs_per_s - self.acme_normal_jobs_per_s) * window_s + acme

    # Figures that follow from the params alone (the board arithmetic), for tests and the page.
    @property
    def slots(self) -> int:
        return self.workers * self.slots_per_worker

    @property
    def job_s(self) -> float:
        return len(STEPS) * self.call_mean_s

    @property
    def capacity_jobs_per_s(self) -> float:
        return self.slots / self.job_s

    @property
    def provider_concurrency(self) -> tuple[int, int, int]:
        """Little's law: calls in flight that each per-minute limit allows at the mean call time."""
        return tuple(max(1, round(limit / 60.0 * self.call_mean_s))
                     for limit in (self.limit_a_per_min, self.limit_b_per_min, self.limit_c_per_min))


@dataclass(frozen=True)
class Sample:
    """The platform at one monitoring tick; counters are cumulative since the start."""

    t: float
    queued_acme: int
    queued_others: int
    running_acme: int
    running_others: int
    inflight: tuple[int, int, int]        # calls in flight per provider
    sent: tuple[int, int, int]            # calls that reached each provider
    succeeded: tuple[int, int, int]
    breaker_closed: tuple[bool, bool, bool]


@dataclass(frozen=True)
class JobRecord:
    """One job as the run left it; times in seconds, ``started``/``ended`` None when not reached."""

    tenant: int
    plan: int
    arrived: float
    started: float | None
    ended: float | None
    state: int
    steps_done: int
    degraded: bool
    interruptions: int


@dataclass(frozen=True)
class FailedCall:
    """A call that ended without an answer: how long it held the worker, and why."""

    provider: int
    started: float
    held_s: float
    kind: str


@dataclass(frozen=True)
class Result:
    params: Params
    seed: int
    samples: tuple[Sample, ...]
    jobs: tuple[JobRecord, ...]
    failed_calls: tuple[FailedCall, ...]
    breaker_opened: tuple[tuple[float, int], ...]     # (time, provider) each time a breaker opens
    submissions: int                                  # every POST, including refused and repeated
    rejected_429: tuple[int, int]                     # refused by the bucket: Acme, others
    deduplicated: int                                 # repeats answered with the first job
    provider_refusals: tuple[int, int, int]           # 429s from the providers (pools off)
    provider_spend_usd: tuple[float, float, float]
    tenant_plans: tuple[int, ...]
    tenant_rates: tuple[float, ...]                   # normal jobs/s per tenant
    events: int                                       # SimPy events, plus the stretch's arrivals and job ends


def tenant_mix(p: Params) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Plans and normal rates of every tenant; tenant 0 is Acme. Deterministic, no seed."""
    counts = [max(1, round(p.tenants * share)) for share in PLAN_TENANT_SHARE[:2]]
    counts.append(p.tenants - sum(counts))
    plans: list[int] = []
    rates: list[float] = []
    # Acme first, then the rest of Enterprise, then Free and Pro.
    plans.append(ENTERPRISE)
    rates.append(p.acme_normal_jobs_per_s)
    budget = p.peak_jobs_per_s - p.acme_normal_jobs_per_s
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


class _Job:
    __slots__ = ("tenant", "arrived", "started", "ended", "state", "steps_done", "degraded",
                 "interruptions", "seq", "call_s", "call_ends")

    def __init__(self, tenant: int, arrived: float, call_s: tuple[float, ...]) -> None:
        self.tenant = tenant
        self.call_s = call_s          # healthy duration of each step, drawn once at submission
        self.arrived = arrived
        self.started: float | None = None
        self.ended: float | None = None
        self.state = QUEUED
        self.steps_done = 0
        self.degraded = False
        self.interruptions = 0
        self.seq = 0
        self.call_ends: list[float] | None = None     # while calm: when each planned call on A ends


class _Provider:
    __slots__ = ("index", "capacity", "price", "inflight", "sent", "succeeded", "refused", "spend",
                 "closed", "failures", "reopen_at", "probing")

    def __init__(self, index: int, capacity: int, price: float) -> None:
        self.index = index
        self.capacity = capacity
        self.price = price
        self.inflight = 0
        self.sent = 0
        self.succeeded = 0
        self.refused = 0
        self.spend = 0.0
        self.closed = True
        self.failures = 0
        self.reopen_at = 0.0
        self.probing = False


class _At(simpy.Event):
    """An event at an absolute time, with its one callback.

    ``env.timeout(t - now)`` can land one rounding step off ``t``, and a calm job must end at exactly
    the time its calls add up to, call by call, as its process would. Built the way ``Timeout``
    builds itself, and queued the way ``Environment.schedule`` queues it.
    """

    def __init__(self, env: simpy.Environment, when: float, value: object,
                 callback: Callable[[simpy.Event], None] | None = None) -> None:
        # ``when`` is never before now: every caller adds a duration to now or to a later time
        self.env = env
        self.callbacks = [callback] if callback is not None else []
        self._value = value
        self._ok = True
        heapq.heappush(env._queue, (when, NORMAL, next(env._eid), self))


class _Platform:
    """Mutable state of one run: the calm stretch first (no clock), then SimPy's clock."""

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
        self.tenant_queue: list[deque[_Job]] = [deque() for _ in range(n)]
        self.rule = "fifo"                   # becomes p.claim at mit_from
        self.caps = [n * 1000] * n           # no caps under the baseline's FIFO
        self.heap: list[tuple[int, int]] = []
        self.in_heap = [False] * n
        self.last_served = [0] * n
        self.next_seq = 1
        self.tokens = [PLAN_BUCKET_BURST[plan] for plan in self.plans]
        self.token_time = [0.0] * n
        self.jobs: list[_Job] = []
        self.failed_calls: list[FailedCall] = []
        self.breaker_opened: list[tuple[float, int]] = []
        self.samples: list[Sample] = []
        self.waiters: deque[simpy.Event] = deque()
        self.submissions = self.deduplicated = 0
        self.rejected = [0, 0]                # 429s from the bucket: Acme, everyone else
        self.queued_acme = self.queued_others = 0
        self.running_acme = 0
        prices = (p.price_a_usd, p.price_b_usd, p.price_c_usd)
        self.providers = [_Provider(i, cap, prices[i]) for i, cap in enumerate(p.provider_concurrency)]
        # Calm: no call has failed yet and A has room for every slot, so every call goes to A and its
        # outcome is known when the job starts (see _start_calm). Ends for good at the first call that
        # will not succeed.
        self.calm = CALM_SHORTCUT and self.providers[0].capacity >= p.slots
        self.handovers: list[float] = []              # handovers inside finished calm calls (not yet counted)
        self.calm_until = math.inf                    # when the first failing call starts, once known
        self.stretch_starts: list[float] = []         # when each job of the stretch starts, were it calm
        self.failing_first: list[_Job] = []           # stretch jobs started whose first call fails
        # A job that ends by then with no call longer than this cannot fail: checked without _plan_call.
        self.calm_safe_until = self.outage[0] if self.outage else math.inf
        self.calm_safe_call_s = min(p.total_timeout_s, SHORT_TOTAL_TIMEOUT_S if p.short_timeouts else math.inf)

    # --- switches -------------------------------------------------------------------------
    def _on(self, switch: bool) -> bool:
        return switch and self.env.now >= self.mit_from

    # --- admission --------------------------------------------------------------------------
    def _take_token(self, tenant: int) -> bool:
        plan = self.plans[tenant]
        now = self.env.now
        tokens = min(PLAN_BUCKET_BURST[plan],
                     self.tokens[tenant] + (now - self.token_time[tenant]) * PLAN_BUCKET_RATE[plan])
        self.token_time[tenant] = now
        if tokens < 1.0:
            self.tokens[tenant] = tokens
            return False
        self.tokens[tenant] = tokens - 1.0
        return True

    def submit(self, tenant: int, repeat: bool) -> None:
        self.submissions += 1
        p, now = self.p, self.env.now
        if p.rate_limit and now >= self.mit_from and not self._take_token(tenant):
            self.rejected[tenant != ACME] += 1
            return
        if repeat and self._on(p.idempotency):
            self.deduplicated += 1
            return
        draw, mu, sigma = self.rng.lognormvariate, self.mu, p.call_sigma
        # one healthy duration per step in STEPS, in step order
        job = _Job(tenant, now, (draw(mu, sigma), draw(mu, sigma), draw(mu, sigma), draw(mu, sigma)))
        self.jobs.append(job)
        if self.free_slots and not self.heap and not self.queued_count[tenant] and \
                self.running[tenant] < self.caps[tenant]:
            self._start_now(job)
        else:
            self._enqueue(job)
            self.fill()

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
        _At(self.env, self.next_others, None, self._others_arrive)
        self._schedule_acme()

    def _others_arrive(self, event: simpy.Event) -> None:
        rng, total = self.rng, self.others_rate
        self.submit(1 + bisect.bisect_left(self.others_cumulative, rng.random() * total), False)
        _At(self.env, self.env.now + rng.expovariate(total), None, self._others_arrive)

    def _schedule_acme(self) -> None:
        when, surging = self.next_acme
        if surging is None:
            _At(self.env, when, None, self._acme_restart)
        else:
            _At(self.env, when, surging, self._acme_arrive)

    def _acme_restart(self, event: simpy.Event) -> None:
        self.next_acme = self._acme_draw(self.env.now)
        self._schedule_acme()

    def _acme_arrive(self, event: simpy.Event) -> None:
        surging = event._value         # whether the surge was on when this gap was drawn
        self.submit(ACME, surging and self.rng.random() < self.p.acme_resubmit_share)
        self.next_acme = self._acme_draw(self.env.now)
        self._schedule_acme()

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

    def _enqueue(self, job: _Job) -> None:
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

    def _start(self, job: _Job) -> None:
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

    def _start_now(self, job: _Job) -> None:
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

    def _release_slot(self, job: _Job) -> None:
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

    # --- the calm first-in-first-out stretch --------------------------------------------------------
    # Before the mitigations start the claim rule is first-in, first-out with no caps, no bucket and
    # no keys, and while calm every call is known at its job's start. The fleet is then a plain
    # queue with ``slots`` servers: a job starts when it arrives or when the earliest slot frees,
    # whichever is later, and ends when its calls add up. ``run_stretch`` runs that queue as one
    # loop over the arrivals (the same draws in the same order), with no SimPy events at all, up to
    # the mitigations, the first call that will not succeed, or the end of the run. ``resume`` then
    # sets up the state the event-by-event run would have reached there, and the clock takes over.
    def run_stretch(self, until: float, progress: Callable[[float], None] | None) -> float:
        """Run the stretch; returns the time it stopped at (0 when it cannot start)."""
        self.first_arrivals()
        p = self.p
        # a final design that keeps first-in first-out with no caps, bucket or keys changes none of it
        same_queue = p.claim == "fifo" and not (p.pause_acme or p.rate_limit or p.idempotency)
        stop = (until if same_queue else min(until, self.mit_from)) if self.calm else 0
        if stop <= 0:
            return 0
        rng = self.rng
        draw, mu, sigma = rng.lognormvariate, self.mu, p.call_sigma
        safe_until, safe_call = self.calm_safe_until, self.calm_safe_call_s
        cumulative, total = self.others_cumulative, self.others_rate
        free_at = [0.0] * p.slots                  # a heap: when each slot is next free
        jobs, starts = self.jobs, self.stretch_starts
        t_others = self.next_others
        t_acme, acme_surging = self.next_acme
        calm_end = math.inf                        # the start of the first call that will not succeed
        next_report = PROGRESS_EVERY_EVENTS
        while True:
            if t_others < t_acme:
                t = t_others
                if not (t < stop and t < calm_end):
                    break
                tenant = 1 + bisect.bisect_left(cumulative, rng.random() * total)
            else:
                t = t_acme
                if not (t < stop and t < calm_end):
                    break
                if acme_surging is None:           # the rate changes: draw again from here
                    t_acme, acme_surging = self._acme_draw(t)
                    continue
                if acme_surging:
                    rng.random()                   # repeat or not (a new job either way without keys)
                tenant = ACME
            self.submissions += 1
            calls = (draw(mu, sigma), draw(mu, sigma), draw(mu, sigma), draw(mu, sigma))
            job = _Job(tenant, t, calls)
            jobs.append(job)
            free = free_at[0]
            start = t if free <= t else free
            starts.append(start)
            c0, c1, c2, c3 = calls
            e0 = start + c0                        # the sums the job's process would make
            e1 = e0 + c1
            e2 = e1 + c2
            e3 = e2 + c3
            if e3 <= safe_until and max(calls) <= safe_call:
                job.call_ends = [e0, e1, e2, e3]
                heapq.heapreplace(free_at, e3)
            elif start < calm_end:
                ends = self._plan_calm_calls(calls, start)
                job.call_ends = ends
                if len(ends) < len(calls):         # a call fails: the calm ends when it starts
                    calm_end = min(calm_end, ends[-1] if ends else start)
                    heapq.heapreplace(free_at, math.inf)    # busy past the end of the stretch
                else:
                    heapq.heapreplace(free_at, ends[-1])
            else:                                  # starts after the calm: still queued then
                heapq.heapreplace(free_at, math.inf)
            if tenant == ACME:
                t_acme, acme_surging = self._acme_draw(t)
            else:
                t_others = t + rng.expovariate(total)
            if progress is not None and len(jobs) >= next_report:
                next_report += PROGRESS_EVERY_EVENTS
                progress(min(1.0, t / until))
        self.next_others, self.next_acme = t_others, (t_acme, acme_surging)
        self.calm_until = calm_end
        return min(stop, calm_end)

    def _plan_calm_calls(self, calls: tuple[float, ...], start: float) -> list[float]:
        """When each call on A ends, up to (not including) the first that will not succeed."""
        a = self.providers[0]
        ends: list[float] = []
        t = start
        for healthy in calls:
            outcome, held = self._plan_call(a, healthy, t)
            if outcome != OK:
                break
            t = t + held
            ends.append(t)
        return ends

    def settle_stretch(self, at: float, resuming: bool) -> None:
        """Each stretch job as the event-by-event run leaves it at ``at``: queued, running or finished.

        A job counts as started (or finished) at ``at`` itself only when the calm ends there: that
        start, or the end that freed its slot, is what ended it. Only a run that goes on (``resuming``)
        needs the queues, the claim numbers and the heap.
        """
        ended_calm = at == self.calm_until
        steps, handovers, running = len(STEPS), self.handovers, self.running
        queued: list[_Job] = []
        started: list[_Job] = []
        finished = 0
        for job, start in zip(self.jobs, self.stretch_starts):
            if not (start < at or (start == at and ended_calm)):
                job.call_ends = None
                queued.append(job)
                continue
            started.append(job)
            job.started = start
            ends = job.call_ends
            if len(ends) == steps and (ends[-1] < at or (ends[-1] == at and ended_calm)):
                job.state, job.ended, job.steps_done, job.call_ends = FINISHED, ends[-1], steps, None
                handovers += ends[:-1]
                finished += 1
                continue
            job.state = RUNNING
            running[job.tenant] += 1
            if not ends:                            # its first call fails: it goes on as a process
                job.call_ends = None
                self.failing_first.append(job)
        a = self.providers[0]
        busy = len(started) - finished
        self.free_slots -= busy
        self.running_acme = running[ACME]
        a.inflight += busy - len(self.failing_first)
        a.sent += len(started) - len(self.failing_first)
        a.succeeded += finished
        for _ in range(finished):
            a.spend += a.price
        if not resuming:
            return
        for job in queued:
            self.tenant_queue[job.tenant].append(job)
            self.queued_count[job.tenant] += 1
        self.queued_acme = self.queued_count[ACME]
        self.queued_others = len(queued) - self.queued_acme
        # Enqueues and starts each took the next number in the order they happened (an arrival
        # before a start at the same moment: a job that finds a free slot is queued, then claimed).
        arrivals, number, i, j = self.jobs, 1, 0, 0
        while i < len(arrivals) or j < len(started):
            if j == len(started) or (i < len(arrivals) and arrivals[i].arrived <= started[j].started):
                arrivals[i].seq = number
                i += 1
            else:
                self.last_served[started[j].tenant] = number
                j += 1
            number += 1
        self.next_seq = number
        for tenant in range(len(self.plans)):
            self._offer(tenant)

    def stretch_samples(self, until: float, until_sample: bool) -> float:
        """The monitor's samples while the stretch ran; returns the first tick after it."""
        acme_in, others_in, acme_on, others_on, acme_off, others_off = [], [], [], [], [], []
        for job, start in zip(self.jobs, self.stretch_starts):
            acme = job.tenant == ACME
            (acme_in if acme else others_in).append(job.arrived)
            if job.started is not None:
                (acme_on if acme else others_on).append(start)
                if job.ended is not None:
                    (acme_off if acme else others_off).append(job.ended)
        acme_off.sort()
        others_off.sort()
        right = bisect.bisect_right

        def at(t: float) -> Sample:
            running_acme = right(acme_on, t) - right(acme_off, t)
            running_others = right(others_on, t) - right(others_off, t)
            started, ended = right(acme_on, t) + right(others_on, t), right(acme_off, t) + right(others_off, t)
            return Sample(t, right(acme_in, t) - right(acme_on, t), right(others_in, t) - right(others_on, t),
                          running_acme, running_others, (running_acme + running_others, 0, 0),
                          (started, 0, 0), (ended, 0, 0), (True, True, True))

        tick = 0                                    # SimPy's clock starts at the whole number 0
        while tick < until:
            self.samples.append(at(tick))
            tick = tick + self.p.sample_s
        if until_sample:
            self.samples.append(at(until))
        return tick

    def resume(self, env: simpy.Environment, first_tick: float) -> None:
        """Hand the run to SimPy's clock at ``env.now``, where the stretch stopped."""
        self.env, p = env, self.p
        now = env.now
        # the switch's timeout was set at time 0, before any tick's: it fires first at the same moment
        if now == self.mit_from:
            self.switch_on()
        elif now < self.mit_from:
            _At(env, self.mit_from, None, self.switch_on)
        else:
            self.rule = p.claim         # switched during the stretch, to the same queue (see run_stretch)
        if self.calm and now == self.calm_until:
            self._end_calm()
        elif self.calm:
            for job in self.jobs:
                ends = job.call_ends
                if ends is not None and len(ends) == len(STEPS) - job.steps_done:
                    _At(env, ends[-1], job, self._calm_job_done)
            if self.calm_until < math.inf:
                _At(env, self.calm_until, None, self._calm_ends_now)
        for job in self.failing_first:
            env.process(self.work(job))
        self._schedule_arrivals()
        env.process(self.monitor(first_tick))

    # --- calm stretch ---------------------------------------------------------------------------
    # While calm, a job's calls cannot interact with anything: A's breaker stays closed (nothing
    # has failed), A has room for every slot and nobody waits for a pool. So each call goes to A
    # and ``_plan_call`` at its start time gives its outcome. A job whose calls all succeed becomes
    # one event at its end instead of a process with one event per call. The moments in between
    # ("handovers": a call to A answers and the next one is sent) change only A's sent and
    # succeeded counts, which only samples and the result read, so the run notes their times and
    # adds them in afterwards (``handed_over``). The first call that will not succeed ends the
    # calm: every calm job becomes an ordinary process again from the end of the call it is in,
    # and the run goes on event by event. The result is the same as with a process per job.
    def _start_calm(self, job: _Job) -> bool:
        """Plan a job just started while calm; False when its very first call would fail."""
        now = self.env.now
        calls = job.call_s
        c0, c1, c2, c3 = calls
        e0 = now + c0                   # the sums the process would make, call by call
        e1 = e0 + c1
        e2 = e1 + c2
        e3 = e2 + c3
        if job.steps_done or e3 > self.calm_safe_until or max(calls) > self.calm_safe_call_s:
            return self._start_calm_checked(job, now, calls[job.steps_done:])
        a = self.providers[0]
        a.inflight += 1                 # its first call is sent now
        a.sent += 1
        job.call_ends = [e0, e1, e2, e3]
        _At(self.env, e3, job, self._calm_job_done)
        return True

    def _start_calm_checked(self, job: _Job, now: float, calls: tuple[float, ...]) -> bool:
        """``_start_calm`` call by call, for a job near the outage or with a call that may time out."""
        ends = self._plan_calm_calls(calls, now)
        if not ends:
            self._end_calm()
            return False
        a = self.providers[0]
        a.inflight += 1
        a.sent += 1
        job.call_ends = ends
        t = ends[-1]
        if len(ends) < len(calls):
            # the call after the last planned one fails: the calm ends when it starts
            if t < self.calm_until:
                self.calm_until = t
                _At(self.env, t, None, self._calm_ends_now)
        else:
            _At(self.env, t, job, self._calm_job_done)
        return True

    def _calm_job_done(self, event: simpy.Event) -> None:
        job = event._value
        ends = job.call_ends
        if ends is None:
            return                      # the calm ended first; its process finishes the job
        a = self.providers[0]
        job.steps_done += len(ends)
        job.call_ends = None
        self.handovers.extend(ends[:-1])
        a.inflight -= 1
        a.succeeded += 1
        a.spend += a.price
        job.state, job.ended = FINISHED, self.env.now
        self._release_slot(job)
        self.fill()

    def _calm_ends_now(self, event: simpy.Event) -> None:
        if self.calm and self.env.now == self.calm_until:
            self._end_calm()

    def _end_calm(self) -> None:
        """Turn every calm job back into a process that finishes the call it is in, then carries on."""
        now = self.env.now
        self.calm = False
        for job in self.jobs:
            ends = job.call_ends
            if ends is None:
                continue
            done = bisect.bisect_left(ends, now)      # calls that answered before now
            job.steps_done += done
            job.call_ends = None
            self.handovers.extend(ends[:done])
            self.env.process(self._finish_call(job, ends[done]))

    def _finish_call(self, job: _Job, end: float):
        """The rest of a calm job: its call to A answers at ``end``, then the job goes on as usual."""
        yield _At(self.env, end, None)
        a = self.providers[0]
        a.inflight -= 1
        if self.waiters:
            self.waiters.popleft().succeed()
        a.succeeded += 1
        a.spend += a.price
        self._breaker_success(a)
        job.steps_done += 1
        yield from self.work(job)

    def settle_calm(self, until: float) -> None:
        """At the end of the run: the handovers before ``until`` of the jobs still running calm."""
        for job in self.jobs:
            if job.call_ends is None:
                continue
            done = bisect.bisect_left(job.call_ends, until)
            job.steps_done += done
            self.handovers.extend(job.call_ends[:done])

    def handed_over(self, samples: list[Sample]) -> list[Sample]:
        """Samples and A's totals with every handover counted: one answer and one new call each."""
        a, handovers = self.providers[0], sorted(self.handovers)
        for _ in handovers:
            a.spend += a.price          # the same sum, price by price, as when counted one at a time
        a.sent += len(handovers)
        a.succeeded += len(handovers)
        fixed = []
        for s in samples:
            n = bisect.bisect_left(handovers, s.t)
            fixed.append(s if n == 0 else Sample(
                s.t, s.queued_acme, s.queued_others, s.running_acme, s.running_others, s.inflight,
                (s.sent[0] + n, *s.sent[1:]), (s.succeeded[0] + n, *s.succeeded[1:]), s.breaker_closed))
        return fixed

    # --- workers --------------------------------------------------------------------------------
    def work(self, job: _Job):
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
    def _pick(self, tried: set[int], pools: bool) -> tuple[_Provider | None, bool]:
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

    def _plan_call(self, provider: _Provider, healthy: float, now: float) -> tuple[str, float]:
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

    def _breaker_success(self, provider: _Provider) -> None:
        provider.failures = 0
        if provider.probing:
            provider.probing = False
            provider.closed = True

    def _breaker_failure(self, provider: _Provider) -> None:
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
        yield _At(self.env, first_tick, None)
        while True:
            self.samples.append(self.sample())
            yield self.env.timeout(self.p.sample_s)


def _records(jobs: list[_Job], plans: tuple[int, ...]) -> tuple[JobRecord, ...]:
    """Every job as a JobRecord.

    A frozen dataclass's ``__init__`` sets its nine fields one ``object.__setattr__`` call at a
    time; filling the new object's ``__dict__`` gives an equal record in a third of the time, which
    counts for the 18,000 jobs of a peak hour (about a tenth of a whole run).
    """
    new = object.__new__
    records = []
    for j in jobs:
        record = new(JobRecord)
        record.__dict__.update(tenant=j.tenant, plan=plans[j.tenant], arrived=j.arrived, started=j.started,
                               ended=j.ended, state=j.state, steps_done=j.steps_done, degraded=j.degraded,
                               interruptions=j.interruptions)
        records.append(record)
    return tuple(records)


def run(params: Params, seed: int = 1, progress: Callable[[float], None] | None = None) -> Result:
    """Simulate ``params.window_min`` minutes; ``progress`` (if given) gets fractions 0..1."""
    platform = _Platform(params, random.Random(seed))
    until = params.window_min * 60.0
    handover = platform.run_stretch(until, progress)
    platform.settle_stretch(handover, resuming=handover < until)
    first_tick = platform.stretch_samples(handover, until_sample=handover >= until)
    events = len(platform.jobs) + sum(1 for job in platform.jobs if job.ended is not None)
    if handover < until:
        env = simpy.Environment(handover)
        platform.resume(env, first_tick)
        events += _run_events(env, until, progress)
        platform.settle_calm(until)
        platform.samples.append(platform.sample())
    else:
        platform.settle_calm(until)
    samples = platform.handed_over(platform.samples)
    if progress is not None:
        progress(1.0)
    return Result(
        params=params, seed=seed, samples=tuple(samples),
        jobs=_records(platform.jobs, platform.plans),
        failed_calls=tuple(platform.failed_calls), breaker_opened=tuple(platform.breaker_opened),
        submissions=platform.submissions, rejected_429=tuple(platform.rejected),
        deduplicated=platform.deduplicated,
        provider_refusals=tuple(x.refused for x in platform.providers),
        provider_spend_usd=tuple(x.spend for x in platform.providers),
        tenant_plans=platform.plans, tenant_rates=platform.rates, events=events)


def _run_events(env: simpy.Environment, until: float, progress: Callable[[float], None] | None) -> int:
    """Process events up to ``until`` within the budget; returns how many were processed."""
    events = 0
    step, peek = env.step, env.peek
    while True:
        for _ in range(PROGRESS_EVERY_EVENTS):
            if peek() >= until:
                break
            step()
            events += 1
        else:
            if events > MAX_EVENTS:
                raise BudgetExceeded(f"the platform run needed more than {MAX_EVENTS:,} simulation events; "
                                     "choose settings that do less work")
            if progress is not None:
                progress(min(1.0, env.now / until))
            continue
        break
    env.run(until=until)            # advance the clock exactly to the end of the window
    return events


# --- statistics: pure functions of a Result ------------------------------------------------------

def has_surge(p: Params) -> bool:
    return p.acme_multiplier != 1.0


def has_outage(p: Params) -> bool:
    return p.outage_min > 0


def has_break(p: Params) -> bool:
    """Whether the run breaks something: Acme's surge or A's outage (else it is a calm peak)."""
    return has_surge(p) or has_outage(p)


def focus_window(p: Params) -> tuple[float, float]:
    """Seconds over which the headline rates are measured.

    Without a break: the whole run after ``SETTLE_S``. With one: from ``SETTLE_S`` after it starts
    until it ends, the mitigations start, or the run ends, whichever comes first.
    """
    end = p.window_min * 60.0
    if not has_break(p):
        return min(SETTLE_S, end / 2), end
    start = p.break_at_min * 60.0
    if has_outage(p):
        end = min(end, start + p.outage_min * 60.0)
    mitigated = p.mitigations_from_min * 60.0
    if start < mitigated < end:
        end = mitigated
    return min(start + SETTLE_S, (start + end) / 2), end


def _in_window(samples: tuple[Sample, ...], start: float, end: float) -> list[Sample]:
    return [s for s in samples if start <= s.t <= end]


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y on x; 0 with fewer than two distinct x."""
    if len(points) < 2:
        return 0.0
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile, q in [0, 100]; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def backlog(sample: Sample) -> int:
    return sample.queued_acme + sample.queued_others


def others_recovery_s(result: Result) -> float | None:
    """Seconds from the mitigations until everyone else's queue is at or under the threshold.

    None when there is no backlog to recover from or it never clears inside the run.
    """
    p = result.params
    start = p.mitigations_from_min * 60.0
    if not (p.break_at_min * 60.0 < start < p.window_min * 60.0):
        return None
    for s in result.samples:
        if s.t >= start and s.queued_others <= p.recovered_below_jobs:
            return s.t - start
    return None


def queued_at(result: Result, t: float) -> Sample:
    """The last sample taken at or before ``t``."""
    chosen = result.samples[0]
    for s in result.samples:
        if s.t > t:
            break
        chosen = s
    return chosen


def waits(result: Result, acme: bool) -> list[float]:
    """Queue waits (submission to first claim) in seconds of one group's claimed jobs."""
    return [j.started - j.arrived for j in result.jobs
            if j.started is not None and (j.tenant == ACME) == acme]


def hung_calls(result: Result) -> list[FailedCall]:
    """Calls to A that stalled during the outage and held a worker until a timeout."""
    return [c for c in result.failed_calls if c.provider == 0 and c.kind == HANG]


def summary(result: Result) -> dict[str, object]:
    """The figures the drill asks about, as a flat JSON-able dict (rates per second, times in s/min)."""
    p = result.params
    start, end = focus_window(p)
    span = max(end - start, 1e-9)
    # a window shorter than one sampling interval falls back to the run's first and last samples
    inside = _in_window(result.samples, start, end) or [result.samples[0], result.samples[-1]]
    first, last = inside[0], inside[-1]
    elapsed = max(last.t - first.t, 1e-9)
    in_flight = statistics.fmean(s.running_acme + s.running_others for s in inside)
    calls_ok = sum(last.succeeded) - sum(first.succeeded)
    arrivals = sum(1 for j in result.jobs if start <= j.arrived < end)
    counts = [0, 0, 0, 0]
    for j in result.jobs:
        counts[j.state] += 1
    acme_waits, other_waits = waits(result, True), waits(result, False)
    spend = result.provider_spend_usd
    last_sample = result.samples[-1]
    prices = (p.price_a_usd, p.price_b_usd, p.price_c_usd)
    fallback_calls = [last_sample.succeeded[i] for i in (1, 2)]
    recovery = others_recovery_s(result)
    out: dict[str, object] = {
        "scenario": p.scenario,
        "seed": result.seed,
        "window_min": p.window_min,
        "measured_from_min": round(start / 60.0, 2),
        "measured_to_min": round(end / 60.0, 2),
        "slots": p.slots,
        "capacity_jobs_per_s": round(p.capacity_jobs_per_s, 3),
        "arrivals_jobs_per_s": round(arrivals / span, 3),
        "jobs_in_flight": round(in_flight, 1),
        "llm_calls_per_s": round(calls_ok / elapsed, 2),
        "utilisation_pct": round(100.0 * in_flight / p.slots, 1),
        "backlog_growth_jobs_per_s": round(_slope([(s.t, backlog(s)) for s in inside]), 3),
        "acme_slot_share_pct": round(100.0 * statistics.fmean(s.running_acme for s in inside) / p.slots, 1),
        "backlog_at_end": backlog(result.samples[-1]),
        "wait_p50_s_acme": _round(percentile(acme_waits, 50)),
        "wait_p95_s_acme": _round(percentile(acme_waits, 95)),
        "wait_p50_s_others": _round(percentile(other_waits, 50)),
        "wait_p95_s_others": _round(percentile(other_waits, 95)),
        "submissions": result.submissions,
        "rejected_429_acme": result.rejected_429[0],
        "rejected_429_others": result.rejected_429[1],
        "deduplicated": result.deduplicated,
        "jobs_submitted": len(result.jobs),
        "jobs_finished": counts[FINISHED],
        "jobs_degraded": sum(1 for j in result.jobs if j.degraded),
        "jobs_failed": counts[FAILED],
        "jobs_queued": counts[QUEUED],
        "jobs_running": counts[RUNNING],
        "events": result.events,
    }
    for i, name in enumerate(PROVIDERS):
        out[f"calls_sent_{name}"] = result.samples[-1].sent[i]
        out[f"spend_usd_{name}"] = round(spend[i], 2)
        out[f"provider_429s_{name}"] = result.provider_refusals[i]
    out["spend_usd_total"] = round(sum(spend), 2)
    out["extra_provider_spend_usd"] = round(
        sum(calls * (prices[i + 1] - p.price_a_usd) for i, calls in enumerate(fallback_calls)), 2)
    if has_surge(p):
        mitigated = p.mitigations_from_min * 60.0
        after_break = p.break_at_min * 60.0 < mitigated < p.window_min * 60.0
        out["others_backlog_at_mitigation"] = (queued_at(result, mitigated).queued_others
                                               if after_break else None)
        out["others_recovery_min"] = _round(recovery / 60.0 if recovery is not None else None)
    if has_outage(p):
        hung = [c.held_s for c in hung_calls(result)]
        opened = [t for t, i in result.breaker_opened if i == 0 and t >= p.break_at_min * 60.0]
        out["fallback_share_of_peak_pct"] = round(
            100.0 * (sum(last.succeeded[1:]) - sum(first.succeeded[1:])) / elapsed
            / (p.peak_jobs_per_s * len(STEPS)), 1)
        out["hung_calls"] = len(hung)
        out["hung_call_mean_s"] = _round(statistics.fmean(hung) if hung else None)
        out["hung_call_max_s"] = _round(max(hung) if hung else None)
        out["breaker_a_opened_after_s"] = _round(opened[0] - p.break_at_min * 60.0 if opened else None)
    return out


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def minutes_from_break(result: Result, t: float) -> float:
    return (t - result.params.break_at_min * 60.0) / 60.0


def timeline(result: Result) -> dict[str, tuple]:
    """Per-sample series for charts; x is minutes from the break (negative before it).

    ``calls_per_s`` holds, per provider, the calls sent during the interval ending at each sample.
    """
    samples = result.samples
    slots = result.params.slots
    calls: list[tuple[float, ...]] = []
    for i, provider in enumerate(PROVIDERS):
        series = [0.0]
        for before, now in zip(samples, samples[1:]):
            dt = now.t - before.t
            series.append((now.sent[i] - before.sent[i]) / dt if dt > 0 else 0.0)
        calls.append(tuple(series))
    return {
        "minute": tuple(minutes_from_break(result, s.t) for s in samples),
        "queued_acme": tuple(s.queued_acme for s in samples),
        "queued_others": tuple(s.queued_others for s in samples),
        "running_acme": tuple(s.running_acme for s in samples),
        "running_others": tuple(s.running_others for s in samples),
        "idle": tuple(slots - s.running_acme - s.running_others for s in samples),
        "calls_per_s": tuple(calls),
        "a_breaker_closed": tuple(s.breaker_closed[0] for s in samples),
    }


def wait_p95_by_minute(result: Result, acme: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """p95 queue wait of one group's jobs, grouped by the minute they were claimed (from the break)."""
    by_minute: dict[int, list[float]] = {}
    for j in result.jobs:
        if j.started is None or (j.tenant == ACME) != acme:
            continue
        minute = math.floor(minutes_from_break(result, j.started))
        by_minute.setdefault(minute, []).append(j.started - j.arrived)
    minutes = sorted(by_minute)
    return tuple(m + 0.5 for m in minutes), tuple(percentile(by_minute[m], 95) for m in minutes)


def limits_per_s(p: Params) -> tuple[float, float, float]:
    return (p.limit_a_per_min / 60.0, p.limit_b_per_min / 60.0, p.limit_c_per_min / 60.0)
