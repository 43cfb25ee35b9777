"""Hot shard: weighted keys placed on shards by a stable hash, Poisson requests, FIFO queues.

One key (the celebrity, or a noisy tenant) draws a fixed share of the traffic; where it lands
decides how hard its shard runs, and with plain hashing adding shards only thins the ordinary keys
beside it.

Assumptions (units are requests, or jobs, and seconds):

* Requests arrive as one Poisson stream at ``arrival_rps``. The hot key ``HOT_KEY`` takes
  ``hot_key_share`` of them; the rest split evenly over ``ordinary_keys`` keys.
* Each key is placed by ``sims.stable_hash.pick_groups`` (jump consistent hash on a blake2b
  hash), never by Python's ``hash()``. With ``groups_per_key`` = 1 that is plain hash
  partitioning; with 2 or more it is shuffle sharding and a request joins the shortest queue
  among its key's healthy groups.
* A shard is ``servers_per_shard`` parallel slots with exponential service times of mean
  ``service_s``, so its capacity is servers / service_s and a lone shard is an M/M/c queue.
* "Load" is offered load over capacity, computed from the placement and the rates (the
  simulated arrivals are only a noisy sample of it). It is not capped at 100%: a shard above
  100% cannot keep up and its queue grows for the whole run.
* With one group per key (plain hash partitioning), jump hashing moves keys only onto the new
  shard when one is added, and ``HOT_KEY`` stays on shard 0 for every shard count up to
  ``MAX_SHARDS``, so more shards never raise the hot shard's load. With shuffle sharding a key's
  groups are picked for each shard count, so one more shard can raise it (in 21 of 2,520 settings
  checked; 9 to 10 shards took one from 21.33% to 26.67%). Either way it never falls below the
  hot key's own load on one of its shards, ``hot_key_floor_pct``.
* With ``bad_key_breaks_groups`` the hot key is a poison workload instead: every group it is
  placed on stops serving at t = 0 (a crash loop), and its own requests are left out.
* Queues are FIFO, so a request's start is fixed when it arrives; waits of requests still
  queued at the end are therefore exact. Requests stuck on a broken shard never start: their
  wait is counted up to the end of the run (a lower bound).

Default params reproduce the celebrity-key figures in drill 13 (break 1, follow-up): a key with
30% of the traffic on one of 4 shards of 10 req/s, the fleet at 80%, 20 ordinary keys of 1.12
req/s each. The celebrity alone is 9.6 req/s, 96% of a shard. Jump hashing puts 5 ordinary keys
beside it on 4 shards, (9.6 + 5 x 1.12) / 10 = 152% (brief: 153%), and 3 on 6 shards, 130%
(brief: 127%). Small key sets land unevenly: an even spread (20/6 keys) would give 133%.
"""
from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
import random
import threading
from dataclasses import dataclass

import numpy as np
import simpy

from sims._budget import BudgetExceeded, run_within
from sims._params import check_bounds, flag
from sims.stable_hash import pick_groups

HOT_KEY = "celebrity"               # stays on shard 0 for 1..MAX_SHARDS shards under jump hashing
ORDINARY_KEY = "key-{}"             # ordinary key names, numbered from 1
MAX_SHARDS = 16
MAX_JOBS = 30_000                   # expected requests per run: the event budget
MAX_SAMPLES = 6_000                 # monitor samples per shard
BOUNDS = {
    "shards": (1, MAX_SHARDS),
    "hot_key_share": (0.0, 0.95),
    "ordinary_keys": (1, 5_000),
    "arrival_rps": (0.001, 10_000.0),
    "servers_per_shard": (1, 200),
    "service_s": (0.001, 3_600.0),
    "groups_per_key": (1, 4),
    "duration_s": (1.0, 7_200.0),
    "sample_every_s": (0.01, 600.0),
}


@dataclass(frozen=True)
class Params:
    """Keys, shards and traffic for one run."""

    shards: int = 4                     # shards (worker groups) in the fleet
    hot_key_share: float = 0.30         # share of all requests that go to HOT_KEY
    ordinary_keys: int = 20             # other keys, sharing the rest evenly
    arrival_rps: float = 32.0           # requests/s over all keys (80% of 4 x 10 req/s)
    servers_per_shard: int = 1          # parallel slots per shard
    service_s: float = 0.1              # mean service time per request, seconds
    groups_per_key: int = 1             # shards each key may use; 2 or more = shuffle sharding
    bad_key_breaks_groups: bool = False  # HOT_KEY crashes the shards it is placed on
    duration_s: float = 60.0            # simulated seconds
    sample_every_s: float = 1.0         # monitor interval for queue lengths

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        flag("bad_key_breaks_groups", self.bad_key_breaks_groups)
        if self.groups_per_key > self.shards:
            raise ValueError(f"groups_per_key ({self.groups_per_key}) cannot exceed shards ({self.shards})")
        if self.arrival_rps * self.duration_s > MAX_JOBS:
            raise ValueError(f"arrival_rps x duration_s must stay under {MAX_JOBS:,} requests per run, "
                             f"got {self.arrival_rps * self.duration_s:,.0f}")
        if self.duration_s / self.sample_every_s > MAX_SAMPLES:
            raise ValueError(f"sample_every_s is too small for duration_s (at most {MAX_SAMPLES:,} samples)")

    @property
    def shard_capacity_rps(self) -> float:
        return self.servers_per_shard / self.service_s

    @functools.cached_property
    def key_rates(self) -> tuple[float, ...]:
        """Requests/s per key; index 0 is HOT_KEY."""
        ordinary = self.arrival_rps * (1.0 - self.hot_key_share) / self.ordinary_keys
        return (self.arrival_rps * self.hot_key_share,) + (ordinary,) * self.ordinary_keys


def place_keys(params: Params) -> tuple[tuple[int, ...], ...]:
    """The shards each key may use, by stable hash; index 0 is HOT_KEY."""
    return _placement(params.ordinary_keys, params.shards, params.groups_per_key)


@functools.lru_cache(maxsize=64)
def _placement(ordinary_keys: int, shards: int, per_key: int) -> tuple[tuple[int, ...], ...]:
    # pure and deterministic, and hashing 2,000 tenant names is a third of a small run
    names = (HOT_KEY,) + tuple(ORDINARY_KEY.format(i) for i in range(1, ordinary_keys + 1))
    return tuple(pick_groups(name, shards, per_key) for name in names)


def offered_rps(params: Params, placement: tuple[tuple[int, ...], ...]) -> tuple[float, ...]:
    """Requests/s offered to each shard, a key's rate split evenly over its shards."""
    if placement is place_keys(params) or placement == place_keys(params):
        return _offered(params)
    return _offered_by(params, placement)


@functools.lru_cache(maxsize=64)
def _offered(params: Params) -> tuple[float, ...]:
    # a sum over 2,000 tenants, the same for every seed of a spread
    return _offered_by(params, place_keys(params))


def _offered_by(params: Params, placement: tuple[tuple[int, ...], ...]) -> tuple[float, ...]:
    load = [0.0] * params.shards
    for rate, groups in zip(params.key_rates, placement):
        for shard in groups:
            load[shard] += rate / len(groups)
    return tuple(load)


@dataclass(frozen=True)
class Result:
    """Flat record of one run; every statistic below is computed from it."""

    params: Params
    seed: int
    placement: tuple[tuple[int, ...], ...]      # shards of each key; index 0 is HOT_KEY
    shard_offered_rps: tuple[float, ...]        # offered request rate per shard
    down_shards: tuple[int, ...]                # shards broken by the bad key (may be empty)
    # one row per request: (key index, shard, arrival s, start s or None, end s or None)
    jobs: tuple[tuple[int, int, float, float | None, float | None], ...]
    # one row per shard and sample: (time s, shard, waiting, in service)
    samples: tuple[tuple[float, int, int, int], ...]
    events: int = 0                             # events simulated: arrivals, ticks (as SimPy counts them)


class _Shard:
    """FIFO slots of one shard: a heap of when each slot frees up and one of when requests leave.

    Requests are served in arrival order, so a request's start is known the moment it arrives
    (the Kiefer-Wolfowitz recursion): the earliest-free slot takes it. That costs one SimPy event
    per request instead of four, and gives the same queue as a ``simpy.Resource``.
    """

    def __init__(self, servers: int, broken: bool) -> None:
        self.servers = servers
        self.broken = broken
        self.free_at = [0.0] * servers
        self.leaves_at: list[float] = []
        self.stuck = 0

    def in_system(self, now: float) -> int:
        if self.broken:
            return self.stuck
        while self.leaves_at and self.leaves_at[0] <= now:
            heapq.heappop(self.leaves_at)
        return len(self.leaves_at)

    def admit(self, now: float, service: float) -> tuple[float | None, float | None]:
        if self.broken:
            self.stuck += 1
            return None, None
        start = max(now, heapq.heappop(self.free_at))
        heapq.heappush(self.free_at, start + service)
        heapq.heappush(self.leaves_at, start + service)
        return start, start + service


def run(params: Params, seed: int = 1) -> Result:
    """Simulate ``params.duration_s`` seconds and return the flat record.

    The same run as ``run_on_simpy``, without SimPy's clock. Nothing in the model waits on anything
    but time, so the run is two streams merged in time order: the arrivals (each draws its gap, its
    key and its service time, in that order) and the monitor's ticks. A tie between the two goes,
    as in SimPy, to the event scheduled first: the stream that did not move last. The equivalence
    test (tests/test_sim_hot_shard.py) compares the two ways over many settings and seeds.
    """
    placement = place_keys(params)
    down = frozenset(placement[0]) if params.bad_key_breaks_groups else frozenset()
    shards = [_Shard(params.servers_per_shard, s in down) for s in range(params.shards)]
    jobs: list[tuple[int, int, float, float | None, float | None]] = []
    samples: list[tuple[float, int, int, int]] = []
    first_key = 1 if params.bad_key_breaks_groups else 0
    until, every = params.duration_s, params.sample_every_s
    draws = _Draws(random.Random(seed), params, first_key)
    pop, push, replace, add = heapq.heappop, heapq.heappush, heapq.heapreplace, jobs.append
    single = params.groups_per_key == 1
    home = [groups[0] for groups in placement] if single else None
    healthy = None if single else _healthy_groups(params)
    broken = [shard.broken for shard in shards]
    free_at = [shard.free_at for shard in shards]          # one heap each, read in the hot loop
    leaves_at = [shard.leaves_at for shard in shards]
    budget = 2 * MAX_JOBS + MAX_SAMPLES
    ticks = 0
    servers = params.servers_per_shard

    def tick(now: float) -> None:
        # _Shard.in_system written out: sixteen shards a tick add up on the larger settings
        for index, leaves in enumerate(leaves_at):
            if broken[index]:
                samples.append((now, index, shards[index].stuck, 0))
                continue
            while leaves and leaves[0] <= now:
                pop(leaves)
            present = len(leaves)
            busy = present if present < servers else servers
            samples.append((now, index, present - busy, busy))

    tick(0.0)                                   # the monitor's first sample, before any arrival
    times, keys, services = draws.next_block()
    i, n = 0, len(times)
    next_tick = every
    arrival_first = True                        # at a tie: the arrivals' event was scheduled first
    while True:
        horizon = next_tick if next_tick < until else until
        while True:
            if i == n:                          # the block is used up: draw the next one, same stream
                times, keys, services = draws.next_block()
                i, n = 0, len(times)
            now = times[i]
            if not (now < horizon or (now == next_tick < until and arrival_first)):
                break
            key = keys[i]
            if single:
                chosen = home[key]
            else:                               # the shortest healthy queue, the lowest index at a tie
                choice = healthy[key]           # sorted
                if len(choice) == 2:
                    first, second = choice
                    leaves, other = leaves_at[first], leaves_at[second]
                    while leaves and leaves[0] <= now:
                        pop(leaves)
                    while other and other[0] <= now:
                        pop(other)
                    chosen = first if len(leaves) <= len(other) else second
                elif len(choice) == 3:          # written out too: the page's widest setting is 3 of 16
                    first, second, third = choice
                    leaves, other, last = leaves_at[first], leaves_at[second], leaves_at[third]
                    while leaves and leaves[0] <= now:
                        pop(leaves)
                    while other and other[0] <= now:
                        pop(other)
                    while last and last[0] <= now:
                        pop(last)
                    chosen, fewest = first, len(leaves)
                    if len(other) < fewest:
                        chosen, fewest = second, len(other)
                    if len(last) < fewest:
                        chosen = third
                elif len(choice) == 1:
                    chosen = choice[0]
                elif choice:
                    chosen, fewest = -1, math.inf
                    for g in choice:
                        leaves = leaves_at[g]
                        while leaves and leaves[0] <= now:
                            pop(leaves)
                        if len(leaves) < fewest:
                            chosen, fewest = g, len(leaves)
                else:                           # every group is broken: the fewest stuck
                    chosen = min(placement[key], key=lambda g: (shards[g].stuck, g))
            if broken[chosen]:
                shards[chosen].stuck += 1
                add((key, chosen, now, None, None))
            else:
                slots = free_at[chosen]
                begin = now if now > slots[0] else slots[0]
                leave = begin + services[i]
                replace(slots, leave)
                push(leaves_at[chosen], leave)
                add((key, chosen, now, begin, leave))
            i += 1
            arrival_first = False
        if next_tick >= until:
            break
        tick(next_tick)
        next_tick = next_tick + every
        arrival_first = True
        ticks += 1
        if len(jobs) + ticks > budget:          # a backstop: Params bounds the expected count well below
            raise BudgetExceeded(f"the hot-shard run needed more than {budget:,} simulation events; "
                                 "choose settings that do less work")
    # as SimPy counts them: both processes' starts, every arrival and tick, and the stop at the end
    return Result(params=params, seed=seed, placement=placement,
                  shard_offered_rps=offered_rps(params, placement), down_shards=tuple(sorted(down)),
                  jobs=tuple(jobs), samples=tuple(samples), events=len(jobs) + ticks + 3)


def _logs(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value: NumPy's own log may differ from the C library's in the last bit.

    Negating and dividing the result in NumPy is exact IEEE arithmetic, as Python's own is.
    """
    return np.fromiter(map(math.log, values.tolist()), dtype=float, count=len(values))


_THREAD = threading.local()             # each thread's own bit generator: sessions run side by side


@functools.lru_cache(maxsize=64)
def _healthy_groups(params: Params) -> tuple[tuple[int, ...], ...]:
    # each key's shards the bad key has not broken, sorted: the same for every seed
    placement = place_keys(params)
    down = frozenset(placement[0]) if params.bad_key_breaks_groups else frozenset()
    return tuple(tuple(g for g in groups if g not in down) for groups in placement)


@functools.lru_cache(maxsize=64)
def _cumulative_rates(params: Params, first_key: int) -> np.ndarray:
    # the same for every seed: Python's running sum of the rates, as an array to search
    return np.array(list(itertools.accumulate(params.key_rates[first_key:])))


class _Draws:
    """The arrivals' draws in blocks: each arrival's time, key and service time, from ``rng``'s own stream.

    An arrival takes three of ``rng.random()``'s numbers, whatever the queues do: its key, its service
    time and the gap to the next arrival (the first gap comes first). NumPy's MT19937, started from the
    rng's state, gives the same numbers (both are the reference genrand_res53), so a block of them is
    drawn at once; the logarithms are ``math.log``'s and the sums Python's, one by one, so every value
    is the one ``rng.expovariate`` and the SimPy process would make.
    """

    def __init__(self, rng: random.Random, params: Params, first_key: int) -> None:
        words = rng.getstate()[1]
        bits = getattr(_THREAD, "bits", None)
        if bits is None:                # made once per thread (a fresh one costs 0.2 ms); its state set per run
            bits = _THREAD.bits = np.random.MT19937(0)
        bits.state = {"bit_generator": "MT19937", "state": {"key": np.array(words[:624], dtype=np.uint32),
                                                             "pos": words[624]}}
        self.uniform = np.random.Generator(bits).random
        self.cumulative = _cumulative_rates(params, first_key)
        self.total_rate = float(self.cumulative[-1])
        self.service_rate = 1.0 / params.service_s
        self.first_key = first_key
        expected = self.total_rate * params.duration_s                  # a poison workload's own are left out
        self.block = int(expected + 3.0 * math.sqrt(expected)) + 16     # one block nearly always does
        self.more = int(3.0 * math.sqrt(expected)) + 64                 # and when not, a little more
        self.now = 0.0
        self.pending_gap = -math.log(1.0 - self.uniform()) / self.total_rate   # drawn first, before any key

    def next_block(self) -> tuple[list[float], list[int], list[float]]:
        size, self.block = self.block, self.more
        u = self.uniform(3 * size).reshape(size, 3)                     # (key, service, next gap) per arrival
        rate, service_rate = self.total_rate, self.service_rate
        keys = (self.first_key + np.searchsorted(self.cumulative, u[:, 0] * rate, side="right")).tolist()
        services = (-_logs(1.0 - u[:, 1]) / service_rate).tolist()
        gaps = [self.pending_gap] + (-_logs(1.0 - u[:, 2]) / rate).tolist()
        self.pending_gap = gaps.pop()
        times = list(itertools.accumulate(gaps, initial=self.now))[1:]
        self.now = times[-1]
        return times, keys, services


def run_on_simpy(params: Params, seed: int = 1) -> Result:
    """The model as two SimPy processes: the reference ``run`` must equal, event for event."""
    rng = random.Random(seed)
    env = simpy.Environment()
    placement = place_keys(params)
    down = frozenset(placement[0]) if params.bad_key_breaks_groups else frozenset()
    shards = [_Shard(params.servers_per_shard, s in down) for s in range(params.shards)]
    jobs: list[tuple[int, int, float, float | None, float | None]] = []
    samples: list[tuple[float, int, int, int]] = []
    first_key = 1 if params.bad_key_breaks_groups else 0      # a poison workload's own jobs are left out
    rates = params.key_rates[first_key:]
    cumulative = list(itertools.accumulate(rates))
    total_rate = cumulative[-1]
    mean_service = params.service_s

    def choose_shard(groups: tuple[int, ...]) -> int:
        if len(groups) == 1:
            return groups[0]
        healthy = [g for g in groups if g not in down] or list(groups)
        return min(healthy, key=lambda g: (shards[g].in_system(env.now), g))

    def arrivals():
        while total_rate > 0:
            yield env.timeout(rng.expovariate(total_rate))
            key = first_key + bisect.bisect_right(cumulative, rng.random() * total_rate)
            shard = choose_shard(placement[key])
            start, end = shards[shard].admit(env.now, rng.expovariate(1.0 / mean_service))
            jobs.append((key, shard, env.now, start, end))

    def monitor():
        while True:
            for index, shard in enumerate(shards):
                present = shard.in_system(env.now)
                busy = 0 if shard.broken else min(present, shard.servers)
                samples.append((env.now, index, present - busy, busy))
            yield env.timeout(params.sample_every_s)

    env.process(arrivals())
    env.process(monitor())
    # one event per request and one per monitor tick; the checks in Params keep both bounded
    events = run_within(env, 2 * MAX_JOBS + MAX_SAMPLES + 10, "the hot-shard run", until=params.duration_s)
    return Result(params=params, seed=seed, placement=placement,
                  shard_offered_rps=offered_rps(params, placement), down_shards=tuple(sorted(down)),
                  jobs=tuple(jobs), samples=tuple(samples), events=events + 1)


# ---- statistics: pure functions of the result ------------------------------------------------

def hot_shard(result: Result) -> int:
    """The shard carrying the most offered load among HOT_KEY's shards (not always the busiest)."""
    return max(result.placement[0], key=lambda s: (result.shard_offered_rps[s], -s))


def busiest_shard(result: Result) -> int:
    """The shard carrying the most offered load of all; the lowest index wins a tie.

    With a small hot key, ordinary keys can pile up on another shard and outrun the hot one.
    """
    return max(range(result.params.shards), key=lambda s: (result.shard_offered_rps[s], -s))


def shard_load_pct(result: Result) -> tuple[float, ...]:
    cap = result.params.shard_capacity_rps
    return tuple(100.0 * rate / cap for rate in result.shard_offered_rps)


def hot_shard_load_pct(result: Result) -> float:
    return shard_load_pct(result)[hot_shard(result)]


def busiest_shard_load_pct(result: Result) -> float:
    return shard_load_pct(result)[busiest_shard(result)]


def hot_key_floor_pct(params: Params) -> float:
    """The hot key's own load on one of its shards: no shard count can push below this."""
    return 100.0 * params.key_rates[0] / params.groups_per_key / params.shard_capacity_rps


def fleet_utilisation_pct(result: Result) -> float:
    p = result.params
    return 100.0 * sum(result.shard_offered_rps) / (p.shards * p.shard_capacity_rps)


def neighbours(result: Result) -> frozenset[int]:
    """Ordinary keys that share at least one shard with HOT_KEY."""
    hot = set(result.placement[0])
    return frozenset(k for k in range(1, len(result.placement)) if hot & set(result.placement[k]))


def cut_off(result: Result) -> frozenset[int]:
    """Ordinary keys whose every shard is broken (only with ``bad_key_breaks_groups``)."""
    down = set(result.down_shards)
    if not down:
        return frozenset()
    return frozenset(k for k in range(1, len(result.placement)) if set(result.placement[k]) <= down)


def waits(result: Result, keys: frozenset[int] | None = None) -> list[float]:
    """Waits of the chosen keys' requests; one stuck on a broken shard waits until the end."""
    end = result.params.duration_s
    return [(start if start is not None else end) - arrive
            for key, _, arrive, start, _ in result.jobs if keys is None or key in keys]


def mean_wait_s(result: Result, keys: frozenset[int] | None = None) -> float:
    found = waits(result, keys)
    return sum(found) / len(found) if found else 0.0


def projected_wait_s(result: Result, shard: int) -> float:
    """How long a request arriving at the end would wait: the queue over the shard's capacity."""
    if shard in result.down_shards:
        return math.inf
    last = [row for row in result.samples if row[1] == shard][-1]
    return last[2] / result.params.shard_capacity_rps


def exact_share_all_pct(params: Params) -> float:
    """Chance that another key draws exactly the same set of shards: 1 / C(shards, per key)."""
    return 100.0 / math.comb(params.shards, params.groups_per_key)


def hurt_keys_pct(result: Result) -> float:
    """Share of ordinary keys that sent requests and had one stuck on a broken shard."""
    sent: set[int] = set()
    hurt: set[int] = set()
    for key, shard, *_ in result.jobs:
        if key == 0:
            continue
        sent.add(key)
        if shard in result.down_shards:
            hurt.add(key)
    return 100.0 * len(hurt) / len(sent) if sent else 0.0


def littles_law(result: Result, shard: int) -> tuple[float, float]:
    """(time-average number in system from the monitor, arrival rate x mean time in system)."""
    p = result.params
    rows = [row for row in result.samples if row[1] == shard]
    in_system = sum(w + s for _, _, w, s in rows) / len(rows)
    spans = [min(end if end is not None else p.duration_s, p.duration_s) - arrive
             for _, sh, arrive, _, end in result.jobs if sh == shard]
    lam = len(spans) / p.duration_s
    return in_system, lam * (sum(spans) / len(spans) if spans else 0.0)


def erlang_c_wait_s(servers: int, arrival_rps: float, service_s: float) -> float:
    """Mean wait in queue of an M/M/c queue (Erlang C); inf when it is overloaded."""
    offered = arrival_rps * service_s
    if offered >= servers:
        return math.inf
    term, total = 1.0, 1.0
    for k in range(1, servers):
        term *= offered / k
        total += term
    last = term * offered / servers * servers / (servers - offered)
    return (last / (total + last)) * service_s / (servers - offered)


def summary(result: Result) -> dict:
    """The headline figures as a JSON-able dict."""
    p = result.params
    hot = hot_shard(result)
    near = neighbours(result)
    rest = frozenset(range(1, len(result.placement))) - near
    out = {
        "shards": p.shards,
        "hot_shard": hot,
        "hot_shard_load_pct": round(hot_shard_load_pct(result), 1),
        "busiest_shard": busiest_shard(result),
        "busiest_shard_load_pct": round(busiest_shard_load_pct(result), 1),
        "hot_key_floor_pct": round(hot_key_floor_pct(p), 1),
        "fleet_utilisation_pct": round(fleet_utilisation_pct(result), 1),
        "shard_load_pct": [round(x, 1) for x in shard_load_pct(result)],
        "requests": len(result.jobs),
        "neighbour_keys": len(near),
        "neighbour_mean_wait_s": round(mean_wait_s(result, near), 2),
        "other_mean_wait_s": round(mean_wait_s(result, rest), 2),
    }
    if p.groups_per_key > 1 or p.bad_key_breaks_groups:
        out["exact_share_all_pct"] = round(exact_share_all_pct(p), 2)
        out["cut_off_keys_pct"] = round(100.0 * len(cut_off(result)) / max(1, p.ordinary_keys), 2)
        out["hurt_keys_pct"] = round(hurt_keys_pct(result), 2)
    return out


# ---- presets shown as tabs on the page and embeddable in drills ------------------------------

def celebrity(shards: int = 4, hot_key_share: float = 0.30) -> Params:
    """A key with ``hot_key_share`` of 32 req/s over shards of 10 req/s (drill 13, break 1)."""
    return Params(shards=shards, hot_key_share=hot_key_share)


TENANTS = 2_000                     # tenants on the platform in drill 13
JOB_S = 32.0                        # one job: four 8 s LLM calls
SLOTS = 200                         # 40 worker processes x 5 jobs
NORMAL_JOBS_PER_S = 5.0             # weekday peak
NOISY_NORMAL_JOBS_PER_S = 0.05      # the noisy tenant's usual rate


def tenant_groups(groups: int = 4, multiplier: float = 100.0, duration_s: float = 600.0,
                  tenants: int = TENANTS) -> Params:
    """``tenants`` (2,000) hashed to worker groups; one sends ``multiplier`` x its usual 0.05 jobs/s."""
    noisy = NOISY_NORMAL_JOBS_PER_S * multiplier
    others = NORMAL_JOBS_PER_S - NOISY_NORMAL_JOBS_PER_S
    return Params(shards=groups, hot_key_share=noisy / (noisy + others), ordinary_keys=tenants - 1,
                  arrival_rps=noisy + others, servers_per_shard=max(1, SLOTS // groups), service_s=JOB_S,
                  duration_s=duration_s, sample_every_s=10.0)


def shuffle_sharding(groups: int = 8, per_tenant: int = 2, duration_s: float = 300.0) -> Params:
    """2,000 tenants on ``per_tenant`` of ``groups`` worker groups; one tenant's jobs crash workers."""
    return Params(shards=groups, hot_key_share=NOISY_NORMAL_JOBS_PER_S / NORMAL_JOBS_PER_S,
                  ordinary_keys=TENANTS - 1, arrival_rps=NORMAL_JOBS_PER_S,
                  servers_per_shard=max(1, SLOTS // groups), service_s=JOB_S, groups_per_key=per_tenant,
                  bad_key_breaks_groups=True, duration_s=duration_s, sample_every_s=10.0)
