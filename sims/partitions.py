"""Hot tenant on a partitioned store: one tenant's writes spread over buckets placed on partitions.

Fluid SimPy model; see ``Params`` for the knobs and the assumptions below for what is simplified.

Assumptions (units are write units and seconds):

* Work is fluid: every tick of ``TICK_S`` a bucket receives ``hot_rate / buckets * TICK_S``
  units, and every partition serves up to ``partition_capacity * TICK_S`` units. No jitter,
  no per-request overhead, no retries.
* Bucket ``b`` lives on partition ``b % partitions`` ("even" placement, the ideal hash) or on
  a partition drawn from ``random.Random(seed)`` ("hashed", where two buckets may collide).
* Fresh work is served first on every partition; a replay backlog of ``pending`` units, spread
  over the same buckets as the fresh work, only gets what fresh work leaves. That is the
  "reserve capacity for fresh work" rule, so replay never makes the fresh backlog worse.
* Only the hot tenant is modelled; the other partitions are otherwise idle.

Default params reproduce the hot-tenant brief: 4 partitions x 100 units/s, 250 units/s on
partition A, a 150 units/s backlog, 62.5% offered utilisation, and 9,000 pending units.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import simpy

from sims._budget import run_within
from sims._params import check_bounds, choice

TICK_S = 0.125                      # seconds per tick; a power of two keeps the fluid sums exact
MAX_PARTITIONS = 64
MAX_BUCKETS = 256
MAX_RATE = 1_000_000.0              # units/s, for hot_rate and partition_capacity
MAX_PENDING = 1_000_000_000.0       # units
MAX_HORIZON_S = 3_600.0
EVENT_BUDGET = 250_000              # ticks x partitions; keeps the worst case interactive
PLACEMENTS = ("even", "hashed")
DRAINED_EPS = 1e-9                  # units left that still count as drained
BOUNDS = {
    "partitions": (1, MAX_PARTITIONS),
    "buckets": (1, MAX_BUCKETS),
    "partition_capacity": (0.001, MAX_RATE),    # above zero, or a backlog could never drain
    "hot_rate": (0.0, MAX_RATE),
    "pending": (0.0, MAX_PENDING),
    "horizon_s": (TICK_S, MAX_HORIZON_S),
}


@dataclass(frozen=True)
class Params:
    """One hot tenant and the partitioned store it writes to."""

    partitions: int = 4                 # partitions in the fleet
    partition_capacity: float = 100.0   # units/s each partition can serve
    hot_rate: float = 250.0             # units/s the hot tenant offers
    buckets: int = 1                    # buckets the tenant's writes spread over; 1 = no spreading
    pending: float = 9_000.0            # units of queued work to replay from t = 0
    horizon_s: float = 120.0            # simulated seconds
    placement: str = "even"             # "even" (bucket b on partition b mod P) or "hashed"

    def __post_init__(self) -> None:
        check_bounds(self, BOUNDS)
        choice("placement", self.placement, PLACEMENTS)
        if self.ticks * self.partitions > EVENT_BUDGET:
            raise ValueError(f"horizon_s x partitions is too large for one run "
                             f"(at most {EVENT_BUDGET * TICK_S:,.0f} partition-seconds)")

    @property
    def ticks(self) -> int:
        return max(1, round(self.horizon_s / TICK_S))

    @property
    def nominal_capacity(self) -> float:
        return self.partitions * self.partition_capacity



@dataclass(frozen=True)
class Result:
    """Flat record of one run; every statistic in ``summary`` is computed from it."""

    params: Params
    seed: int
    bucket_partition: tuple[int, ...]           # partition index hosting each bucket
    bucket_offered: tuple[float, ...]           # units offered to each bucket over the run
    partition_offered: tuple[float, ...]        # fresh units offered to each partition
    partition_served: tuple[float, ...]         # fresh units served by each partition
    replay_served: tuple[float, ...]            # replay units served by each partition
    times_s: tuple[float, ...]                  # end of each tick
    fresh_backlog: tuple[tuple[float, ...], ...]  # per tick: backlog on each partition
    replay_left: tuple[float, ...]              # per tick: replay units still pending
    replay_drain_s: float | None                # first time the replay hit zero; None if never


def place_buckets(params: Params, rng: random.Random) -> tuple[int, ...]:
    """Which partition hosts each bucket under the chosen placement."""
    if params.placement == "even":
        return tuple(b % params.partitions for b in range(params.buckets))
    return tuple(rng.randrange(params.partitions) for _ in range(params.buckets))


def run(params: Params, seed: int = 1) -> Result:
    rng = random.Random(seed)
    placement = place_buckets(params, rng)
    n_parts = params.partitions
    per_bucket_tick = params.hot_rate / params.buckets * TICK_S
    per_bucket_pending = params.pending / params.buckets
    arrivals_tick = [0.0] * n_parts
    replay = [0.0] * n_parts
    for part in placement:
        arrivals_tick[part] += per_bucket_tick
        replay[part] += per_bucket_pending
    serve_tick = params.partition_capacity * TICK_S

    backlog = [0.0] * n_parts
    offered = [0.0] * n_parts
    served = [0.0] * n_parts
    replayed = [0.0] * n_parts
    backlog_trace: list[tuple[float, ...]] = []
    replay_trace: list[float] = []
    times: list[float] = []
    drained_at: list[float] = [0.0] if params.pending <= DRAINED_EPS else []

    env = simpy.Environment()

    def partition(idx: int):
        """Each tick: take this tick's fresh arrivals, serve fresh first, then replay."""
        while True:
            yield env.timeout(1)
            backlog[idx] += arrivals_tick[idx]
            offered[idx] += arrivals_tick[idx]
            fresh = min(backlog[idx], serve_tick)
            backlog[idx] -= fresh
            served[idx] += fresh
            spare = serve_tick - fresh
            from_replay = min(replay[idx], spare)
            replay[idx] -= from_replay
            replayed[idx] += from_replay

    def monitor():
        """Runs after the partitions in every tick (it was started last)."""
        while True:
            yield env.timeout(1)
            now_s = env.now * TICK_S
            left = sum(replay)
            times.append(now_s)
            backlog_trace.append(tuple(backlog))
            replay_trace.append(left)
            if not drained_at and left <= DRAINED_EPS * max(1.0, params.pending):
                drained_at.append(now_s)

    for idx in range(n_parts):
        env.process(partition(idx))
    env.process(monitor())
    # one start and one tick a process: the params check keeps this under EVENT_BUDGET plus the monitor
    run_within(env, (n_parts + 1) * (params.ticks + 2), "the partitions run", until=params.ticks + 0.5)

    bucket_offered = tuple(per_bucket_tick * params.ticks for _ in placement)
    return Result(
        params=params, seed=seed, bucket_partition=placement, bucket_offered=bucket_offered,
        partition_offered=tuple(offered), partition_served=tuple(served),
        replay_served=tuple(replayed), times_s=tuple(times), fresh_backlog=tuple(backlog_trace),
        replay_left=tuple(replay_trace), replay_drain_s=drained_at[0] if drained_at else None,
    )


def run_duration_s(result: Result) -> float:
    return result.params.ticks * TICK_S


def backlog_growth_per_s(result: Result) -> float:
    """Unserved fresh work added per second, over the whole fleet."""
    return sum(result.fresh_backlog[-1]) / run_duration_s(result)


def fleet_utilisation_pct(result: Result) -> float:
    """Offered fresh load as a share of nominal capacity: the reassuring fleet average."""
    return 100.0 * sum(result.partition_offered) / (result.params.nominal_capacity * run_duration_s(result))


def hottest_partition_load_pct(result: Result) -> float:
    """Offered load on the busiest partition as a share of its own capacity."""
    return 100.0 * max(result.partition_offered) / (result.params.partition_capacity * run_duration_s(result))


def max_bucket_rate_per_s(result: Result) -> float:
    return max(result.bucket_offered) / run_duration_s(result)


def replay_drain_floor_s(params: Params) -> float | None:
    """Ideal lower bound: pending units over the capacity fresh work leaves free."""
    spare = params.nominal_capacity - params.hot_rate
    if params.pending <= DRAINED_EPS:
        return 0.0
    return params.pending / spare if spare > 0 else None


def summary(result: Result) -> dict:
    params = result.params
    return {
        "buckets": params.buckets,
        "partitions": params.partitions,
        "placement": params.placement,
        "backlog_growth_per_s": round(backlog_growth_per_s(result), 6),
        "fleet_utilisation_pct": round(fleet_utilisation_pct(result), 6),
        "hottest_partition_load_pct": round(hottest_partition_load_pct(result), 6),
        "max_bucket_rate_per_s": round(max_bucket_rate_per_s(result), 6),
        "replay_drain_s": result.replay_drain_s,
        "replay_drain_floor_s": replay_drain_floor_s(params),
        "replay_left_at_end": round(result.replay_left[-1], 6),
        "bucket_partition": list(result.bucket_partition),
        "horizon_s": run_duration_s(result),
    }
