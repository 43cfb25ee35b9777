"""Concurrency pool: n calls against a provider that serves R at a time and 429s the rest.

Runs the same batch twice: an unbounded fan-out (every call at once, like Promise.all) and a
client-side pool of K, and records every call's timeline for a lane chart.

Timing model (units are seconds):

* The provider holds at most ``provider_limit`` (R) calls at once. An accepted call occupies
  one of its slots for ``service_s`` (0.75 s by default), times a seeded factor in
  ``1 +/- service_jitter`` (no jitter by default, so the default run is exact).
* A call sent while all R slots are taken is refused at once with 429 and Retry-After; the
  client learns of it ``rejection_rtt_s`` later (a 70 ms round trip), sleeps ``retry_after_s``
  and sends again. Nothing else is retried and no call gives up, so every call finishes.
* Fan-out sends all ``calls`` at t = 0. The pool lets at most ``pool_size`` (K) calls in flight;
  a call keeps its pool slot through its 429 sleeps (how p-limit style pools behave), and the
  next waiting call starts the moment a slot frees.

With the defaults (30 calls, R = 5, Retry-After 1 s) this reproduces drill 13, break 2: a pool
of 5 runs six waves of 0.75 s, 4.5 s, with no 429; fan-out loses five rounds of 1.07 s to
refusals (25 + 20 + 15 + 10 + 5 = 75 429s) and ends at 5 x 1.07 + 0.75 = 6.1 s. A pool of 10
gets 20 429s and 5.03 s (the brief quotes about 19 and 5.2 s).
"""
from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

import simpy

from sims._budget import BudgetExceeded, run_within
from sims._params import check_bounds
from sims._steps import occupancy_steps, step_area

MAX_CALL_WAVES = 20_000             # calls x ceil(calls / R): bounds the fan-out's 429 rounds
MIN_RETRY_GAP_S = 0.01              # a refused call must let this much time pass before it tries again
MAX_REFUSALS = 50_000               # estimated 429s per lane: the event budget
EVENTS_PER_REFUSAL = 4              # the guard inside a run allows this many events per budgeted 429
BOUNDS = {
    "calls": (1, 500),
    "provider_limit": (1, 100),
    "pool_size": (1, 500),
    "retry_after_s": (0.0, 60.0),
    "service_s": (0.001, 60.0),
    "rejection_rtt_s": (0.0, 5.0),
    "service_jitter": (0.0, 0.9),
}
STATES = ("waiting", "429", "backoff", "service")    # lane segments, in drawing order


@dataclass(frozen=True)
class Params:
    """A batch of calls and the two ways of sending it."""

    calls: int = 30                     # calls in the batch
    provider_limit: int = 5             # R: calls the provider serves at once
    pool_size: int = 5                  # K: calls the client pool lets in flight
    retry_after_s: float = 1.0          # Retry-After on a 429
    service_s: float = 0.75             # time an accepted call holds a provider slot
    rejection_rtt_s: float = 0.07       # time for a 429 to come back
    service_jitter: float = 0.0         # service time varies by up to this fraction, seeded

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        waves = self.calls * math.ceil(self.calls / self.provider_limit)
        if waves > MAX_CALL_WAVES:
            raise ValueError(f"calls x ceil(calls / provider_limit) must stay under {MAX_CALL_WAVES:,} "
                             f"(too many fan-out retries for one run), got {waves:,}")
        gap = self.retry_after_s + self.rejection_rtt_s
        if gap < MIN_RETRY_GAP_S:
            # with no time between tries a refused call retries forever at the same instant
            raise ValueError(f"retry_after_s + rejection_rtt_s must be at least {MIN_RETRY_GAP_S:g} s, "
                             f"got {gap:g}")
        if refusal_estimate(self) > MAX_REFUSALS:
            raise ValueError(f"this batch would collect about {refusal_estimate(self):,.0f} 429s; the limit is "
                             f"{MAX_REFUSALS:,} (raise retry_after_s or provider_limit, or send fewer calls)")


def refusal_estimate(params: Params) -> float:
    """An upper bound on one lane's 429s: every call retrying once a gap for the whole run.

    A slot that frees is taken within one retry gap, so the run lasts at most ceil(n / R) waves of
    the longest service time plus a gap.
    """
    gap = params.retry_after_s + params.rejection_rtt_s
    waves = math.ceil(params.calls / params.provider_limit)
    longest = waves * (params.service_s * (1.0 + params.service_jitter) + gap)
    return params.calls * (longest / max(gap, MIN_RETRY_GAP_S) + 1.0)


@dataclass(frozen=True)
class Lane:
    """One way of sending the batch: its 429 count, when it ended, and every call's segments."""

    name: str
    limit: int | None                   # K for the pool, None for fan-out
    rejected: int
    makespan_s: float
    segments: tuple[tuple[int, str, float, float], ...]    # (call, state, start s, end s)
    events: int = 0                     # events simulated, as SimPy counts them


@dataclass(frozen=True)
class Result:
    params: Params
    seed: int
    fanout: Lane
    pool: Lane
    events: int = 0                     # both lanes' events


def _send_batch(params: Params, rng: random.Random, limit: int | None, name: str) -> Lane:
    env = simpy.Environment()
    provider = {"busy": 0}
    pool = simpy.Resource(env, capacity=limit) if limit is not None else None
    segments: list[tuple[int, str, float, float]] = []
    rejected = 0

    def service_time() -> float:
        return params.service_s * (1.0 + params.service_jitter * rng.uniform(-1.0, 1.0))

    def call(index: int):
        nonlocal rejected
        slot = None
        if pool is not None:
            slot = pool.request()
            yield slot
            if env.now > 0:
                segments.append((index, "waiting", 0.0, env.now))
        while provider["busy"] >= params.provider_limit:
            rejected += 1
            sent = env.now
            yield env.timeout(params.rejection_rtt_s)
            segments.append((index, "429", sent, env.now))
            yield env.timeout(params.retry_after_s)
            segments.append((index, "backoff", sent + params.rejection_rtt_s, env.now))
        provider["busy"] += 1
        start = float(env.now)
        yield env.timeout(service_time())
        provider["busy"] -= 1
        segments.append((index, "service", start, env.now))
        if slot is not None:
            pool.release(slot)

    for index in range(params.calls):
        env.process(call(index))
    events = run_within(env, EVENTS_PER_REFUSAL * (MAX_REFUSALS + params.calls), f"the {name} lane")
    return Lane(name=name, limit=limit, rejected=rejected, makespan_s=env.now,
                segments=tuple(sorted(segments, key=lambda s: (s[0], s[2], STATES.index(s[1])))), events=events)


# What a queued event is, and SimPy's priorities (a process's start before a timeout due at the same moment)
_START, _GRANTED, _REFUSED, _SLEPT, _SERVED, _RELEASED = range(6)
_URGENT, _NORMAL = 0, 1


def _send_batch_unclocked(params: Params, rng: random.Random, limit: int | None, name: str) -> Lane:
    """``_send_batch`` without SimPy's machinery: the same lane, event for event.

    The events sit in a heap keyed as SimPy keys them (time, priority, the order they were scheduled
    in), and each is handled as the call's process and ``simpy.Resource`` would handle it: a request
    granted at once or queued first-come first-served, a release that is an event of its own whose
    processing grants the next queued request. Without jitter many calls act at the same instant, so
    that order decides who gets the provider's slots; the equivalence test compares both ways.
    """
    p = params
    heap: list[tuple[float, int, int, int, int]] = []       # (time, priority, order, kind, call)
    push, pop = heapq.heappush, heapq.heappop
    order = 0
    busy = users = rejected = 0
    queued: deque[int] = deque()          # calls waiting for a pool slot, first come first served
    sent = [0.0] * p.calls
    started = [0.0] * p.calls
    segments: list[tuple[int, str, float, float]] = []
    add = segments.append
    rnd, jitter, service_s, limit_r = rng.random, p.service_jitter, p.service_s, p.provider_limit
    rtt, retry_after = p.rejection_rtt_s, p.retry_after_s
    budget = EVENTS_PER_REFUSAL * (MAX_REFUSALS + p.calls)
    for index in range(p.calls):
        push(heap, (0.0, _URGENT, order, _START, index))
        order += 1
    events = now = 0
    while heap:
        now, _, _, kind, index = pop(heap)
        events += 1
        if events > budget:
            raise BudgetExceeded(f"the {name} lane needed more than {budget:,} simulation events; "
                                 "choose settings that do less work")
        if kind == _START and limit is not None:
            if users < limit:             # granted at once: the request is an event the call waits on
                users += 1
                push(heap, (now, _NORMAL, order, _GRANTED, index))
                order += 1
            else:
                queued.append(index)
            continue
        if kind == _GRANTED and now > 0:
            add((index, "waiting", 0.0, now))
        elif kind == _REFUSED:
            add((index, "429", sent[index], now))
            push(heap, (now + retry_after, _NORMAL, order, _SLEPT, index))
            order += 1
            continue
        elif kind == _SLEPT:
            add((index, "backoff", sent[index] + rtt, now))
        elif kind == _SERVED:
            busy -= 1
            add((index, "service", started[index], now))
            if limit is not None:         # the release is an event; the call's process then ends
                users -= 1
                push(heap, (now, _NORMAL, order, _RELEASED, index))
                order += 1
            order += 1
            events += 1                   # the process's end: counted, nothing waits on it
            continue
        elif kind == _RELEASED:
            if queued:                    # the release grants the first request in line, one per release
                users += 1
                push(heap, (now, _NORMAL, order, _GRANTED, queued.popleft()))
                order += 1
            continue
        # a call that may send: refused while the provider is full, else served
        if busy >= limit_r:
            rejected += 1
            sent[index] = now
            push(heap, (now + rtt, _NORMAL, order, _REFUSED, index))
        else:
            busy += 1
            started[index] = float(now)
            # uniform(-1, 1), inlined: drawn for every call, jitter or not, as service_time() does
            push(heap, (now + service_s * (1.0 + jitter * (-1.0 + 2.0 * rnd())), _NORMAL, order, _SERVED, index))
        order += 1
    return Lane(name=name, limit=limit, rejected=rejected, makespan_s=now,
                segments=tuple(sorted(segments, key=lambda s: (s[0], s[2], STATES.index(s[1])))), events=events)


def run(params: Params, seed: int = 1) -> Result:
    """Send the batch by fan-out, then through the pool, each on a fresh provider."""
    return _run(params, seed, _send_batch_unclocked)


def run_on_simpy(params: Params, seed: int = 1) -> Result:
    """``run`` with every call a SimPy process and the pool a ``simpy.Resource``: the reference."""
    return _run(params, seed, _send_batch)


def _run(params: Params, seed: int, send) -> Result:
    rng = random.Random(seed)
    fanout = send(params, rng, None, "fan-out")
    pool = send(params, rng, params.pool_size, f"pool of {params.pool_size}")
    return Result(params=params, seed=seed, fanout=fanout, pool=pool, events=fanout.events + pool.events)


# ---- statistics: pure functions of the result ------------------------------------------------

def in_service_steps(lane: Lane) -> list[tuple[float, int]]:
    """(time, calls in service from then on) at every change, for a step chart and checks."""
    return occupancy_steps((start, end) for _, state, start, end in lane.segments if state == "service")


def peak_in_service(lane: Lane) -> int:
    return max((level for _, level in in_service_steps(lane)), default=0)


def mean_in_service(lane: Lane) -> float:
    """Time-average calls in service over the makespan, integrated from the step chart."""
    return step_area(in_service_steps(lane)) / lane.makespan_s if lane.makespan_s > 0 else 0.0


def service_seconds(lane: Lane) -> float:
    return sum(end - start for _, state, start, end in lane.segments if state == "service")


def capacity_floor_s(params: Params) -> float:
    """No schedule beats R slots working flat out: ceil(n / R) waves of service_s (no jitter)."""
    return math.ceil(params.calls / params.provider_limit) * params.service_s


def lane_summary(lane: Lane) -> dict:
    return {"rejected": lane.rejected, "makespan_s": round(lane.makespan_s, 2),
            "peak_in_service": peak_in_service(lane)}


def summary(result: Result) -> dict:
    p = result.params
    return {"calls": p.calls, "provider_limit": p.provider_limit, "pool_size": p.pool_size,
            "retry_after_s": p.retry_after_s, "fanout": lane_summary(result.fanout),
            "pool": lane_summary(result.pool)}
