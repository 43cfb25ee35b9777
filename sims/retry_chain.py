"""Retry chain: layers of services that each retry their call to the next one, above a failing dependency.

Counts the attempts that reach the dependency at the bottom for each user request, and how many of them
start after the user has already given up, with and without retry budgets and propagated deadlines.

Assumptions (units are requests, attempts and seconds):

* Users send a Poisson stream of ``request_rate_per_s`` requests for ``duration_s`` seconds. Each enters
  layer 0; layer ``i`` calls layer ``i + 1``, and layer ``depth - 1`` calls the dependency. Every layer
  makes up to ``1 + retries`` attempts per call it handles, waits at most ``timeout_s`` for each, and
  retries at once when an attempt fails or times out. The dependency has no capacity limit, so the counts
  are the load it is offered.
* ``fault = "errors"``: the dependency answers every attempt with an error after ``dependency_s``.
  ``fault = "slow"``: it hangs for ``slow_s`` (longer than any timeout), then answers with an error.
* A user gives up ``deadline_s`` after sending. Without ``propagate`` nothing below the user knows:
  an attempt whose caller timed out runs on, and the layers keep retrying. With ``propagate`` each call
  carries the user's deadline: no layer starts an attempt after it, each wait is cut to what is left,
  and the dependency stops working on an attempt when its deadline passes.
* With ``budget`` each layer keeps a retry budget: it retries only while its retries stay within
  ``budget_ratio`` of the calls it has handled (the per-client budget in Google's SRE book).
* Nothing here draws at random except the arrival times, from ``random.Random(seed)``.

Default params reproduce the retry-chain drill's first break: three layers that retry three times each,
so (1 + 3) ** 3 = 64 attempts reach the failing dependency for every user request.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import simpy

from sims._budget import run_within
from sims._params import check_bounds, choice, flag
from sims._steps import occupancy_steps, step_area

FAULTS = ("errors", "slow")
MAX_ATTEMPTS = 200_000              # expected dependency attempts per run: the event budget
EVENTS_PER_ATTEMPT = 8              # the guard inside a run: each attempt is a process, a wait and a timeout per layer
BOUNDS = {
    "depth": (1, 6),
    "retries": (0, 6),
    "request_rate_per_s": (0.1, 2_000.0),
    "duration_s": (0.1, 600.0),
    "timeout_s": (0.01, 60.0),
    "deadline_s": (0.01, 600.0),
    "dependency_s": (0.001, 60.0),
    "slow_s": (0.01, 3_600.0),
    "budget_ratio": (0.0, 1.0),
}


@dataclass(frozen=True)
class Params:
    """The chain, the fault at its bottom and the retry policy of every layer."""

    depth: int = 3                      # layers that retry, from the user-facing one down
    retries: int = 3                    # retries per call at every layer (attempts = 1 + retries)
    request_rate_per_s: float = 20.0    # user requests a second
    duration_s: float = 5.0             # seconds of user traffic
    fault: str = "errors"               # "errors" or "slow"
    timeout_s: float = 1.0              # each layer's wait for one attempt
    deadline_s: float = 2.0             # the user gives up this long after sending
    dependency_s: float = 0.01          # an error's round trip in "errors"
    slow_s: float = 60.0                # how long the dependency hangs in "slow"
    propagate: bool = False             # calls carry the user's deadline
    budget: bool = False                # each layer retries only within budget_ratio of its calls
    budget_ratio: float = 0.1

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        choice("fault", self.fault, FAULTS)
        flag("propagate", self.propagate)
        flag("budget", self.budget)
        per_request = (1 + (self.budget_ratio if self.budget else self.retries)) ** self.depth
        expected = self.request_rate_per_s * self.duration_s * per_request
        if expected > MAX_ATTEMPTS:
            raise ValueError(f"this run would send about {expected:,.0f} attempts to the dependency; "
                             f"the limit is {MAX_ATTEMPTS:,}")

    @property
    def horizon_s(self) -> float:
        """Long enough for every call to end: the deepest chain of timeouts, or the slow answers."""
        per_layer = (1 + self.retries) * self.timeout_s
        slowest = self.slow_s if self.fault == "slow" else self.dependency_s
        return self.duration_s + self.depth * per_layer + slowest + 1.0


@dataclass(frozen=True)
class Result:
    """Every user request and every attempt at the dependency; statistics below are computed from it."""

    params: Params
    seed: int
    requests: tuple[float, ...]                          # when each user request was sent
    # one row per attempt at the dependency: (request index, started s, ended s, user still waiting at start)
    attempts: tuple[tuple[int, float, float, bool], ...]
    retries_by_layer: tuple[int, ...]                    # retries each layer sent
    calls_by_layer: tuple[int, ...]                      # calls each layer handled


def run(params: Params, seed: int = 1) -> Result:
    """Simulate the user traffic and every attempt it causes, until the last one ends."""
    rng = random.Random(seed)
    env = simpy.Environment()
    requests: list[float] = []
    attempts: list[tuple[int, float, float, bool]] = []
    calls = [0] * params.depth
    retried = [0] * params.depth

    def dependency(request: int, deadline: float):
        started = env.now
        work = params.dependency_s if params.fault == "errors" else params.slow_s
        if params.propagate:
            work = max(0.0, min(work, deadline - env.now))
        yield env.timeout(work)
        attempts.append((request, started, env.now, started < deadline))
        return False

    def may_retry(level: int) -> bool:
        if params.budget and retried[level] + 1 > params.budget_ratio * calls[level]:
            return False
        retried[level] += 1
        return True

    def layer(level: int, request: int, deadline: float):
        calls[level] += 1
        for attempt in range(1 + params.retries):
            if params.propagate and env.now >= deadline:
                return False
            if attempt and not may_retry(level):
                return False
            wait = min(params.timeout_s, deadline - env.now) if params.propagate else params.timeout_s
            below = layer(level + 1, request, deadline) if level + 1 < params.depth else dependency(request, deadline)
            child = env.process(below)
            outcome = yield child | env.timeout(wait)
            if child in outcome and outcome[child]:
                return True
        return False

    def users():
        while True:
            yield env.timeout(rng.expovariate(params.request_rate_per_s))
            if env.now >= params.duration_s:
                return
            requests.append(env.now)
            env.process(layer(0, len(requests) - 1, env.now + params.deadline_s))

    env.process(users())
    expected = params.request_rate_per_s * params.duration_s * (1 + params.retries) ** params.depth
    run_within(env, EVENTS_PER_ATTEMPT * params.depth * int(expected * 1.3 + 100), "the retry chain",
               until=params.horizon_s)
    return Result(params=params, seed=seed, requests=tuple(requests), attempts=tuple(sorted(attempts)),
                  retries_by_layer=tuple(retried), calls_by_layer=tuple(calls))


# ---- statistics: pure functions of the result ------------------------------------------------

def attempts_per_request(result: Result) -> float:
    """Attempts the dependency received for each user request: the amplification."""
    return len(result.attempts) / len(result.requests) if result.requests else 0.0


def orphaned_pct(result: Result) -> float:
    """Share of the dependency's attempts that started after their user had given up."""
    if not result.attempts:
        return 0.0
    return 100.0 * sum(1 for *_, waiting in result.attempts if not waiting) / len(result.attempts)


def last_attempt_after_s(result: Result) -> float:
    """The latest start of a dependency attempt, counted from its user's request."""
    return max((started - result.requests[request] for request, started, _, _ in result.attempts), default=0.0)


def in_flight_steps(result: Result) -> list[tuple[float, int]]:
    """(time, attempts the dependency is working on) at every change."""
    return occupancy_steps((started, ended) for _, started, ended, _ in result.attempts)


def littles_law(result: Result) -> tuple[float, float]:
    """From the first attempt to the last one's end: (time-average attempts in progress at the dependency,
    attempt rate x mean attempt length)."""
    if not result.attempts:
        return 0.0, 0.0
    start = min(a[1] for a in result.attempts)
    window = max(a[2] for a in result.attempts) - start
    spans = [ended - started for _, started, ended, _ in result.attempts]
    return step_area(in_flight_steps(result)) / window, len(spans) / window * (sum(spans) / len(spans))


def summary(result: Result) -> dict:
    p = result.params
    return {
        "depth": p.depth,
        "retries": p.retries,
        "fault": p.fault,
        "propagate": p.propagate,
        "budget": p.budget,
        "user_requests": len(result.requests),
        "dependency_attempts": len(result.attempts),
        "attempts_per_request": round(attempts_per_request(result), 6),
        "orphaned_pct": round(orphaned_pct(result), 6),
        "last_attempt_after_s": round(last_attempt_after_s(result), 6),
        "peak_in_progress": max((n for _, n in in_flight_steps(result)), default=0),
        "retries_by_layer": list(result.retries_by_layer),
    }
