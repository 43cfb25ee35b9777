"""What a platform run leaves behind (Sample, JobRecord, FailedCall, Result) and the mutable pieces the
SimPy model and its calm shortcut share while it runs (Job, Provider, At).
"""
from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import simpy
from simpy.events import NORMAL

from sims.platform.params import Params

QUEUED, RUNNING, FINISHED, FAILED = 0, 1, 2, 3
STATE_NAMES = ("queued", "running", "finished", "failed")
OK, HANG, ERROR_503, TIMEOUT = "ok", "hang", "503", "timeout"


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


class JobRecord(NamedTuple):
    """One job as the run left it; times in seconds, ``started``/``ended`` None when not reached.

    A named tuple, not a frozen dataclass: a peak hour leaves 18,000 of them, and a tuple is built in
    one call where a dataclass sets its nine fields one at a time (a tenth of a whole run).
    """

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



class Job:
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


class Provider:
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


class At(simpy.Event):
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



def job_records(jobs: list[Job], plans: tuple[int, ...]) -> tuple[JobRecord, ...]:
    """Every job as a JobRecord."""
    make = tuple.__new__
    return tuple([make(JobRecord, (j.tenant, plans[j.tenant], j.arrived, j.started, j.ended, j.state, j.steps_done,
                                   j.degraded, j.interruptions)) for j in jobs])
