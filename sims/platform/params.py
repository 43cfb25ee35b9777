"""The platform model's one front door: its constants, the scenarios of drill 13 and the checked Params.

Every number a run may take is bounded here (BOUNDS, MAX_SUBMISSIONS), so the worst case stays interactive.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

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
