"""Cache stampede: hot keys expire and the requests that miss go to the database together.

A shared cache in front of a database with a fixed number of query slots; compares no protection,
request coalescing (one refresh per key) and stale-while-revalidate, with or without jittered expiry.

Assumptions (units are requests, queries and seconds):

* Requests arrive as one Poisson stream of ``request_rate_per_s``, each for one of ``keys`` keys
  chosen uniformly. A request for a fresh key is a hit and costs nothing.
* At t = 0 every key holds a value that expires at ``expires_in_s`` plus U(0, ``jitter_s``) ("warm": the
  keys were written together, one TTL ago), or the cache is empty ("cold": a cache node that came back
  with nothing). Every later write sets the key's expiry to now + ``ttl_s`` + U(0, ``jitter_s``).
* The database serves at most ``db_slots`` queries at once, each for exactly ``recompute_s``; the rest
  wait in arrival order. Contention does not slow a query down, so the figures are a floor.
* ``none``: every request that finds its key missing or expired queries the database itself and writes
  the key when its query ends. ``coalesce``: the first such request queries; later ones for the same key
  wait for that query (a lock or single-flight in the cache). ``stale``: a request for an expired key is
  served the old value at once and, if no refresh of that key is running, starts one in the background;
  only a key with no value at all (a cold start) makes requests wait, as ``coalesce`` does.
* Arrivals and expiry jitter draw from two streams of ``random.Random(seed)``, so the three policies
  see exactly the same requests for the same seed.

Default params reproduce the cache-stampede drill's first break: 2,400 requests/s on one hot key, a
0.6 s query and 40 slots, so about 2,400 x 0.6 = 1,440 requests miss while the key is rebuilt and the
database needs about 1,440 x 0.6 / 40 = 21.6 s to work through them.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import simpy

from sims._budget import run_within
from sims._params import check_bounds, choice
from sims._steps import occupancy_steps, step_area

POLICIES = ("none", "coalesce", "stale")
STARTS = ("warm", "cold")
MAX_ARRIVALS = 250_000              # requests per run: the event budget
EVENTS_PER_ARRIVAL = 4              # the guard inside a run: a missed request adds a query and its wake-ups
BOUNDS = {
    "request_rate_per_s": (1.0, 5_000.0),
    "keys": (1, 2_000),
    "recompute_s": (0.01, 10.0),
    "db_slots": (1, 1_000),
    "ttl_s": (0.1, 3_600.0),
    "expires_in_s": (0.0, 600.0),
    "jitter_s": (0.0, 600.0),
    "duration_s": (0.5, 600.0),
}


@dataclass(frozen=True)
class Params:
    """The traffic, the cache and the database behind it."""

    request_rate_per_s: float = 2_400.0  # requests for the hot keys, all keys together
    keys: int = 1                        # hot keys the traffic is spread over
    recompute_s: float = 0.6             # one database query that rebuilds a key
    db_slots: int = 40                   # queries the database serves at once
    ttl_s: float = 300.0                 # time to live of a write
    expires_in_s: float = 1.0            # when warm, the keys' first expiry (before its jitter)
    jitter_s: float = 0.0                # each write's expiry is pushed back by U(0, jitter_s)
    policy: str = "none"                 # "none", "coalesce" or "stale"
    start: str = "warm"                  # "warm" (every key just written) or "cold" (empty cache)
    duration_s: float = 25.0             # simulated seconds

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        choice("policy", self.policy, POLICIES)
        choice("start", self.start, STARTS)
        expected = self.request_rate_per_s * self.duration_s
        if expected > MAX_ARRIVALS:
            raise ValueError(f"this run would see about {expected:,.0f} requests; the limit is {MAX_ARRIVALS:,}")


@dataclass(frozen=True)
class Result:
    """Every database query and every request that did not hit; statistics below are computed from it."""

    params: Params
    seed: int
    arrivals: int                                       # requests that arrived in the window
    hits: int                                           # requests served a fresh value
    # one row per request served but not by a fresh hit: (arrived s, key, outcome "query" | "wait" | "stale",
    # waited s); a request still waiting when the window ends is in `arrivals` only
    misses: tuple[tuple[float, int, str, float], ...]
    # one row per database query that ended in the window: (key, requested s, started s, ended s)
    queries: tuple[tuple[int, float, float, float], ...]


def run(params: Params, seed: int = 1) -> Result:
    """Simulate ``duration_s`` seconds of traffic against the cache and the database."""
    arrivals_rng = random.Random(f"{seed}-arrivals")
    jitter_rng = random.Random(f"{seed}-jitter")
    env = simpy.Environment()
    db = simpy.Resource(env, capacity=params.db_slots)
    misses: list[tuple[float, int, str, float]] = []
    queries: list[tuple[int, float, float, float]] = []
    hits = [0]
    arrived = [0]

    def jitter() -> float:
        return jitter_rng.uniform(0.0, params.jitter_s) if params.jitter_s else 0.0

    def lifetime() -> float:
        return params.ttl_s + jitter()

    expires = [params.expires_in_s + jitter() if params.start == "warm" else None for _ in range(params.keys)]
    refreshing: list[simpy.Event | None] = [None] * params.keys

    def query(key: int):
        requested = env.now
        with db.request() as slot:
            yield slot
            started = env.now
            yield env.timeout(params.recompute_s)
        queries.append((key, requested, started, env.now))
        expires[key] = env.now + lifetime()

    def refresh(key: int):
        yield env.process(query(key))
        done, refreshing[key] = refreshing[key], None
        done.succeed()

    def start_refresh(key: int) -> simpy.Event:
        if refreshing[key] is None:
            refreshing[key] = env.event()
            env.process(refresh(key))
        return refreshing[key]

    def wait_for(key: int, outcome: str, work):
        arrived = env.now
        yield work
        misses.append((arrived, key, outcome, env.now - arrived))

    def requests():
        while True:
            yield env.timeout(arrivals_rng.expovariate(params.request_rate_per_s))
            key = arrivals_rng.randrange(params.keys)
            arrived[0] += 1
            expiry = expires[key]
            if expiry is not None and env.now < expiry:
                hits[0] += 1
            elif params.policy == "none":
                env.process(wait_for(key, "query", env.process(query(key))))
            elif params.policy == "stale" and expiry is not None:
                start_refresh(key)
                misses.append((env.now, key, "stale", 0.0))
            else:
                outcome = "query" if refreshing[key] is None else "wait"
                env.process(wait_for(key, outcome, start_refresh(key)))

    env.process(requests())
    budget = EVENTS_PER_ARRIVAL * int(params.request_rate_per_s * params.duration_s * 1.2 + 100)
    run_within(env, budget, "the cache stampede", until=params.duration_s)
    return Result(params=params, seed=seed, arrivals=arrived[0], hits=hits[0], misses=tuple(sorted(misses)),
                  queries=tuple(sorted(queries, key=lambda q: (q[1], q[2], q[0]))))


# ---- statistics: pure functions of the result ------------------------------------------------

def in_flight_steps(result: Result) -> list[tuple[float, int]]:
    """(time, queries waiting for or holding a database slot) at every change."""
    return occupancy_steps((requested, ended) for _, requested, _, ended in result.queries)


def peak_db_in_flight(result: Result) -> int:
    return max((n for _, n in in_flight_steps(result)), default=0)


def db_busy_s(result: Result) -> float:
    """From the first query's request to the last query's end: how long the database was kept busy."""
    if not result.queries:
        return 0.0
    return max(q[3] for q in result.queries) - min(q[1] for q in result.queries)


def requests_waiting(result: Result) -> int:
    """Requests a user waited on: their own query or someone else's."""
    return sum(1 for _, _, outcome, _ in result.misses if outcome != "stale")


def mean_wait_s(result: Result) -> float:
    """Mean wait over every request served in the window, hits included (a hit waits 0)."""
    total = result.hits + len(result.misses)
    return sum(m[3] for m in result.misses) / total if total else 0.0


def littles_law(result: Result) -> tuple[float, float]:
    """Over the first query's request to the last one's end: (time-average queries at the database,
    query arrival rate x mean time a query spends there)."""
    if not result.queries:
        return 0.0, 0.0
    start, end = min(q[1] for q in result.queries), max(q[3] for q in result.queries)
    window = end - start
    if window <= 0:
        return 0.0, 0.0
    area = step_area(in_flight_steps(result))
    spans = [ended - requested for _, requested, _, ended in result.queries]
    return area / window, (len(spans) / window) * (sum(spans) / len(spans))


def summary(result: Result) -> dict:
    p = result.params
    return {
        "policy": p.policy,
        "start": p.start,
        "keys": p.keys,
        "requests": result.arrivals,
        "unanswered_at_end": result.arrivals - result.hits - len(result.misses),
        "hits": result.hits,
        "db_queries": len(result.queries),
        "peak_db_in_flight": peak_db_in_flight(result),
        "db_busy_s": round(db_busy_s(result), 6),
        "requests_waiting": requests_waiting(result),
        "served_stale": sum(1 for m in result.misses if m[2] == "stale"),
        "mean_wait_s": round(mean_wait_s(result), 6),
        "max_wait_s": round(max((m[3] for m in result.misses), default=0.0), 6),
    }
