"""Retry storm: worker processes whose circuit breakers open together come back together.

Counts the calls that reach the recovering provider each second, with and without the three
fixes (jittered probes, one shared breaker state, a staged traffic ramp).

Assumptions (units are calls and seconds; t = 0 is when every breaker opened):

* The provider is down until ``outage_s`` (39 min: breakers opened at 15:01, A is back at
  15:40). A call that reaches it earlier fails; from ``outage_s`` on, every call succeeds and
  lasts ``call_s``. The provider's limit, ``provider_limit_per_s``, is only measured against,
  never enforced, so the chart shows how far over it the fleet goes.
* Each of ``processes`` workers has ``in_flight_per_process`` calls parked behind its open
  breaker. A probe is one of those parked calls, sent to the provider.
* Without jitter every process keeps its own breaker and probes every ``probe_interval_s``
  exactly. The first probe after recovery succeeds in every process at the same instant, each
  breaker closes fully, and each process sends the rest of its parked calls at once.
* With jitter (the three fixes together): probe gaps are ``probe_interval_s`` x U(0.5, 1.5);
  the breaker state is shared, so a process skips its probe when another probed within half an
  interval, and the first success speaks for the fleet; then A's share of traffic ramps
  through ``RAMP_SHARES`` (10%, 25%, 50%, 100%), ``stage_s`` per stage. A parked call goes to A
  with the first stage's share, at a random moment in that stage; the rest go to the fallback
  providers at once.
* Fresh demand is a Poisson stream of ``demand_per_s`` calls over the fleet, simulated from
  ``LEAD_S`` before recovery. A fresh call goes to A if its process's breaker is closed, or
  with the ramp's current share; otherwise to a fallback. No call is dropped.

Defaults reproduce drill 13, break 2 follow-up: 40 processes x 9 parked calls = 360 calls on
A in one second without jitter, against a limit of 3,000/min = 50 calls/s.
"""
from __future__ import annotations

import heapq
import math
import random
from collections import Counter
from dataclasses import dataclass

import simpy

from sims._budget import BudgetExceeded, run_within
from sims._params import check_bounds, flag
from sims._steps import occupancy_steps, step_area

RAMP_SHARES = (0.10, 0.25, 0.50, 1.0)   # A's share of traffic in each stage after recovery
LEAD_S = 60.0                           # fresh demand is simulated from this long before recovery
MAX_CALLS = 40_000                      # parked + fresh calls + probes per run: the event budget
EVENTS_PER_CALL = 4                     # the guard inside a run: jittered probes may come twice as often
BOUNDS = {
    "processes": (1, 400),
    "in_flight_per_process": (1, 100),
    "provider_limit_per_s": (1, 100_000),
    "probe_interval_s": (1.0, 600.0),
    "outage_s": (0.0, 86_400.0),
    "demand_per_s": (0.0, 1_000.0),
    "stage_s": (1.0, 3_600.0),
    "after_s": (10.0, 3_600.0),
    "call_s": (0.01, 600.0),
}


@dataclass(frozen=True)
class Params:
    """The fleet, the outage and the recovery policy."""

    processes: int = 40                 # worker processes, one breaker each unless shared
    in_flight_per_process: int = 9      # calls parked behind each open breaker
    jitter: bool = False                # jittered probes + shared breaker state + staged ramp
    provider_limit_per_s: int = 50      # provider A: 3,000 requests a minute
    probe_interval_s: float = 30.0      # half-open probe schedule
    outage_s: float = 2_340.0           # A is back this long after the breakers opened
    demand_per_s: float = 20.0          # fresh calls per second over the fleet (weekday peak)
    stage_s: float = 60.0               # length of each ramp stage
    after_s: float = 300.0              # seconds simulated after recovery
    call_s: float = 8.0                 # a successful call's duration

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        flag("jitter", self.jitter)
        expected = (self.processes * (self.in_flight_per_process + self.outage_s / self.probe_interval_s)
                    + self.demand_per_s * (LEAD_S + self.after_s))
        if expected > MAX_CALLS:
            raise ValueError(f"this run would send about {expected:,.0f} calls; the limit is {MAX_CALLS:,}")

    @property
    def end_s(self) -> float:
        return self.outage_s + self.after_s


@dataclass(frozen=True)
class Result:
    """Every call with where it went; every statistic below is computed from it."""

    params: Params
    seed: int
    # one row per call: (time s, process, kind "probe" | "parked" | "fresh", to_provider, ok)
    calls: tuple[tuple[float, int, str, bool, bool], ...]
    recovered_at_s: float | None        # when the first breaker closed, or None
    events: int = 0                     # events simulated, as SimPy counts them


def run_on_simpy(params: Params, seed: int = 1) -> Result:
    """The model as SimPy processes (one per worker, the fresh demand, each late parked call): the reference."""
    rng = random.Random(seed)
    env = simpy.Environment()
    calls: list[tuple[float, int, str, bool, bool]] = []
    closed = [False] * params.processes
    shared = {"ramp_from": None, "last_probe": -float("inf")}

    def provider_up() -> bool:
        return env.now >= params.outage_s

    def share_now() -> float:
        start = shared["ramp_from"]
        if start is None:
            return 0.0
        stage = int((env.now - start) // params.stage_s)
        return RAMP_SHARES[min(stage, len(RAMP_SHARES) - 1)]

    def send_parked_later(process: int, delay: float):
        yield env.timeout(delay)
        calls.append((env.now, process, "parked", True, True))

    def worker(process: int):
        parked = params.in_flight_per_process
        while True:
            gap = params.probe_interval_s
            if params.jitter:
                gap *= rng.uniform(0.5, 1.5)
            yield env.timeout(gap)
            if params.jitter and shared["ramp_from"] is not None:
                break
            if params.jitter and env.now - shared["last_probe"] < params.probe_interval_s / 2:
                continue
            shared["last_probe"] = env.now
            calls.append((env.now, process, "probe", True, provider_up()))
            if provider_up():
                parked -= 1
                break
        if not params.jitter:
            closed[process] = True
            calls.extend((env.now, process, "parked", True, True) for _ in range(parked))
            return
        if shared["ramp_from"] is None:
            shared["ramp_from"] = env.now
        for _ in range(parked):
            if rng.random() < RAMP_SHARES[0]:
                stage_left = shared["ramp_from"] + params.stage_s - env.now
                env.process(send_parked_later(process, rng.uniform(0.0, max(0.0, stage_left))))
            else:
                calls.append((env.now, process, "parked", False, True))

    def fresh_demand():
        yield env.timeout(max(0.0, params.outage_s - LEAD_S))
        while params.demand_per_s > 0:
            yield env.timeout(rng.expovariate(params.demand_per_s))
            process = rng.randrange(params.processes)
            if params.jitter:
                to_provider = rng.random() < share_now()
            else:
                to_provider = closed[process]
            calls.append((env.now, process, "fresh", to_provider, True))

    for process in range(params.processes):
        env.process(worker(process))
    env.process(fresh_demand())
    events = run_within(env, EVENTS_PER_CALL * MAX_CALLS + params.processes, "the retry storm", until=params.end_s)
    return _result(params, seed, calls, events + 1)


def _result(params: Params, seed: int, calls: list, events: int) -> Result:
    closes = [t for t, _, kind, to_a, ok in calls if kind == "probe" and ok]
    return Result(params=params, seed=seed, calls=tuple(calls),
                  recovered_at_s=min(closes) if closes else None, events=events)


# SimPy's event priorities: a process's start comes before a timeout due at the same moment
_URGENT, _NORMAL = 0, 1
_PROBE, _LATE, _LATE_START = 0, 1, 2     # what a queued event is: a worker's probe, a late parked call, its start


def run(params: Params, seed: int = 1) -> Result:
    """Simulate from the breakers opening to ``after_s`` past recovery.

    The same run as ``run_on_simpy`` without SimPy's machinery: its events in a heap keyed as SimPy keys
    them (time, priority, the order they were scheduled in), each handled as its process would handle
    it, and the fresh demand (most of the events) kept beside the heap as the one stream it is. A
    process's end is counted but not queued: nothing waits on it. The equivalence test
    (tests/test_sim_retry_storm.py) compares both ways over many settings and seeds.
    """
    p = params
    rng = random.Random(seed)
    rnd, getrandbits, log = rng.random, rng.getrandbits, math.log
    calls: list[tuple[float, int, str, bool, bool]] = []
    add = calls.append
    jitter, interval, outage, until = p.jitter, p.probe_interval_s, p.outage_s, p.end_s
    half, stage_s, demand, processes = p.probe_interval_s / 2, p.stage_s, p.demand_per_s, p.processes
    bits = processes.bit_length()          # randrange(processes), inlined: the same draws
    closed = [False] * processes
    parked = [p.in_flight_per_process] * processes
    ramp_from: float | None = None
    last_probe = -math.inf
    heap: list[tuple[float, int, int, int, int, float]] = []   # (time, priority, order, kind, process, delay)
    push, pop = heapq.heappush, heapq.heappop
    order = 0
    ended = 0                              # processes that have returned: one event each

    def gap() -> float:
        return interval * (0.5 + rnd()) if jitter else interval      # uniform(0.5, 1.5), inlined

    # the processes start in the order they were made: the workers, then the fresh demand
    for process in range(processes):
        push(heap, (gap(), _NORMAL, order, _PROBE, process, 0.0))
        order += 1
    fresh_at, fresh_order = max(0.0, outage - LEAD_S), order
    order += 1
    fresh_started = False
    events = processes + 1                 # the starts
    budget = EVENTS_PER_CALL * MAX_CALLS + processes
    while True:
        if heap:
            head = heap[0]
            fresh_first = fresh_at < head[0] or (fresh_at == head[0] and (_NORMAL, fresh_order) < head[1:3])
        else:
            fresh_first = True
        if fresh_first:
            now = fresh_at
            if now >= until:
                break
            events += 1
            if fresh_started:
                process = getrandbits(bits)
                while process >= processes:
                    process = getrandbits(bits)
                if jitter:
                    share = 0.0
                    if ramp_from is not None:
                        share = RAMP_SHARES[min(int((now - ramp_from) // stage_s), len(RAMP_SHARES) - 1)]
                    to_provider = rnd() < share
                else:
                    to_provider = closed[process]
                add((now, process, "fresh", to_provider, True))
            fresh_started = True
            if demand > 0:
                fresh_at, fresh_order = now + (-log(1.0 - rnd()) / demand), order
                order += 1
            else:
                fresh_at, ended = math.inf, ended + 1
            continue
        now, _, _, kind, process, delay = head
        if now >= until:
            break
        pop(heap)
        events += 1
        if kind == _LATE_START:
            push(heap, (now + delay, _NORMAL, order, _LATE, process, 0.0))
            order += 1
            continue
        if kind == _LATE:
            add((now, process, "parked", True, True))
            ended += 1
            continue
        if not (jitter and ramp_from is not None):
            if jitter and now - last_probe < half:
                push(heap, (now + gap(), _NORMAL, order, _PROBE, process, 0.0))
                order += 1
                continue
            last_probe = now
            up = now >= outage
            add((now, process, "probe", True, up))
            if not up:
                push(heap, (now + gap(), _NORMAL, order, _PROBE, process, 0.0))
                order += 1
                continue
            parked[process] -= 1
        ended += 1
        if not jitter:
            closed[process] = True
            calls.extend((now, process, "parked", True, True) for _ in range(parked[process]))
            continue
        if ramp_from is None:
            ramp_from = now
        for _ in range(parked[process]):
            if rnd() < RAMP_SHARES[0]:
                stage_left = ramp_from + stage_s - now
                push(heap, (now, _URGENT, order, _LATE_START, process, max(0.0, stage_left) * rnd()))
                order += 1
            else:
                add((now, process, "parked", False, True))
        if events > budget:
            raise BudgetExceeded(f"the retry storm needed more than {budget:,} simulation events; "
                                 "choose settings that do less work")
    # as SimPy counts them: every event before the end, each process's return, and the stop at the end
    return _result(p, seed, calls, events + ended + 1)


# ---- statistics: pure functions of the result ------------------------------------------------

def per_second(result: Result, kinds: tuple[str, ...] = ("probe", "parked", "fresh")) -> dict[int, int]:
    """Calls reaching the provider in each whole second (only seconds with calls)."""
    # A plain dict, as before: a second without calls is missing (a KeyError), not a Counter's silent 0.
    return dict(Counter(int(moment) for moment, _, kind, to_provider, _ in result.calls
                        if to_provider and kind in kinds))


def peak_calls_per_s(result: Result) -> int:
    return _peak_calls(per_second(result))


def _peak_calls(counts: dict[int, int]) -> int:
    return max(counts.values(), default=0)


def peak_second(result: Result) -> int | None:
    return _peak_second(per_second(result))


def _peak_second(counts: dict[int, int]) -> int | None:
    """The busiest second of `counts` (per_second), the earliest of a tie."""
    return max(counts, key=lambda s: (counts[s], -s)) if counts else None


def seconds_over_limit(result: Result) -> int:
    return _over(per_second(result), result.params.provider_limit_per_s)


def _over(counts: dict[int, int], limit: int) -> int:
    return sum(1 for n in counts.values() if n > limit)


def parked_total(params: Params) -> int:
    return params.processes * params.in_flight_per_process


def parked_sent(result: Result) -> int:
    """Parked calls that went anywhere (probes that succeeded count as parked calls)."""
    return sum(1 for _, _, kind, _, ok in result.calls if kind == "parked" or (kind == "probe" and ok))


def in_flight_steps(result: Result) -> list[tuple[float, int]]:
    """(time, successful calls in flight at the provider) at every change."""
    p = result.params
    return occupancy_steps((moment, moment + p.call_s) for moment, _, _, to_provider, ok in result.calls
                           if to_provider and ok and moment >= p.outage_s)


def littles_law(result: Result) -> tuple[float, float]:
    """Over recovery to the end: (time-average calls in flight, arrival rate x time in flight)."""
    p = result.params
    start, end = p.outage_s, p.end_s
    steps = [(t, n) for t, n in in_flight_steps(result) if t <= end] + [(end, 0)]
    area = step_area(steps)
    arrivals = [t for t, _, _, to_provider, ok in result.calls if to_provider and ok and start <= t <= end]
    spans = [min(t + p.call_s, end) - t for t in arrivals]
    window = end - start
    return area / window, (len(arrivals) / window) * (sum(spans) / len(spans) if spans else 0.0)


def summary(result: Result) -> dict:
    p = result.params
    counts = per_second(result)   # once: a summary is read for every seed of a spread and every demo attempt
    peak_at = _peak_second(counts)
    return {
        "processes": p.processes,
        "in_flight_per_process": p.in_flight_per_process,
        "jitter": p.jitter,
        "peak_calls_per_s": _peak_calls(counts),
        "provider_limit_per_s": p.provider_limit_per_s,
        "peak_at_s_after_recovery": None if peak_at is None else round(peak_at - p.outage_s, 1),
        "parked_calls_in_peak_second": per_second(result, ("probe", "parked")).get(peak_at, 0),
        "seconds_over_limit": _over(counts, p.provider_limit_per_s),
        "calls_to_provider": sum(1 for c in result.calls if c[3]),
        "calls_to_fallback": sum(1 for c in result.calls if not c[3]),
    }
