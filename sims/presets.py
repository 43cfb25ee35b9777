"""Named simulation runs that drills can embed: a model, frozen params and the number asked for.

A drill question names a preset id; its truth is ``evaluate(id, seed, values)``. A preset whose run
depends on the drill's numbers names them in ``inputs`` and builds its params from them, so an attempt
of a seeded variant is graded against a run of its own numbers. A preset a drill embeds also says in
``mirrors`` what each number of its params stands for in that drill, so the loader can hold the run to the
drill's numbers. Other models add entries to ``PRESETS`` the same way.
"""
from __future__ import annotations

import dataclasses
import importlib
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from sims import cache_stampede, concurrency_pool, hot_shard, leases, partitions, platform, retry_chain, retry_storm

_partitions_params = partitions.Params


@dataclass(frozen=True)
class SimPreset:
    """One embeddable run and the summary figure a guess is graded against."""

    id: str
    model: str                          # module name under sims/
    params: object                      # that module's frozen Params
    metric: str                         # dotted path into summary(), e.g. "fanout.rejected"
    unit: str
    label: str                          # the question, in a few words
    inputs: tuple[str, ...] = ()        # drill values (givens, derived) the run is built from
    build: Callable[..., object] | None = None   # build(**inputs) -> params; the drill as written gives `params`
    # What each number in `params` stands for in the drill that embeds the preset: a formula over the drill's
    # values, or None for the model's own assumption that no drill states. The loader checks every formula
    # against the run, as written and in every variant (drills.lint.rule_simulations).
    mirrors: Mapping[str, str | None] | None = field(default=None, hash=False)

    def params_for(self, values: Mapping[str, float] | None = None) -> object:
        """The params for a drill's numbers (`values` holds at least the `inputs`); the stock run without them."""
        if not self.inputs or values is None:
            return self.params
        return self.build(**{name: values[name] for name in self.inputs})


_PARTITION_INPUTS = ("partitions", "partition_capacity", "hot_rate", "pending")


def _replay(buckets: int, horizon_s: float, *, partitions: float, partition_capacity: float, hot_rate: float,
            pending: float) -> object:
    """The replay run for a drill's numbers; the horizon grows (in whole minutes) when the replay would
    otherwise still be running at its end: a quarter over the time the spare capacity alone needs."""
    spare = min(buckets, partitions) * partition_capacity - hot_rate
    needed = 1.25 * pending / spare if spare > 0 else horizon_s
    horizon = max(horizon_s, 60.0 * math.ceil(needed / 60.0))
    return _partitions_params(partitions=int(partitions), partition_capacity=partition_capacity, hot_rate=hot_rate,
                              buckets=buckets, pending=pending, horizon_s=horizon)


_STORM_INPUTS = ("after_hang_minutes", "a_pool_per_process", "processes", "rate_a_per_s", "breaker_probe_s",
                 "peak_calls_per_s", "call_s")


def _storm(jitter: bool) -> Callable[..., object]:
    """The retry-storm run for a drill's outage: the breakers open when A stops hanging and starts failing,
    so A is back `after_hang_minutes` later, with each process's pool for A parked behind its breaker, on the
    drill's fleet, provider limit and peak demand."""
    return lambda after_hang_minutes, a_pool_per_process, processes, rate_a_per_s, breaker_probe_s, \
        peak_calls_per_s, call_s: retry_storm.Params(
            jitter=jitter, outage_s=60.0 * after_hang_minutes, in_flight_per_process=round(a_pool_per_process),
            processes=round(processes), provider_limit_per_s=round(rate_a_per_s), probe_interval_s=breaker_probe_s,
            demand_per_s=peak_calls_per_s, call_s=call_s)


_TENANT_INPUTS = ("tenants", "acme_normal_rate", "acme_storm_rate", "storm_minutes", "storm_arrivals", "slots",
                  "job_seconds")


def _tenant_groups(tenants: float, acme_normal_rate: float, acme_storm_rate: float, storm_minutes: float,
                   storm_arrivals: float, slots: float, job_seconds: float) -> object:
    """The tenant-group run for a drill's storm: the stock run's shape, on the drill's traffic and fleet."""
    stock = hot_shard.tenant_groups(multiplier=acme_storm_rate / acme_normal_rate, tenants=int(tenants),
                                    duration_s=60.0 * storm_minutes)
    return dataclasses.replace(stock, hot_key_share=acme_storm_rate / storm_arrivals, arrival_rps=storm_arrivals,
                               servers_per_shard=max(1, math.floor(slots / stock.shards)), service_s=job_seconds)


def _mirrors(own: str, **formulas: str) -> dict[str, str | None]:
    """A preset's `mirrors`: `formulas` give the drill value behind each named param, `own` (space-separated)
    names the params that are the model's own assumptions."""
    return dict.fromkeys(own.split(), None) | formulas


_CELEBRITY_OWN = "ordinary_keys arrival_rps servers_per_shard service_s groups_per_key duration_s sample_every_s"
_POOL = {"calls": "pool_sim_calls", "provider_limit": "pool_sim_limit"}
_POOL_OWN = "retry_after_s service_s rejection_rtt_s service_jitter"
_STORM = _mirrors("stage_s after_s", processes="processes", in_flight_per_process="a_pool_per_process",
                  provider_limit_per_s="rate_a_per_s", probe_interval_s="breaker_probe_s",
                  outage_s="60 * after_hang_minutes", demand_per_s="peak_calls_per_s", call_s="call_s")
_PARTITION = {name: name for name in _PARTITION_INPUTS}


_STAMPEDE_LEAD_S = 1.0                  # the hot keys expire this long into a cache-stampede run


def _hot_key_expiry(hot_rate: float, query_s: float, db_slots: float) -> object:
    """One hot key expiring with nothing to stop the stampede; the run lasts until the database should have
    worked through every miss (a tenth over the floor, requests x query time over slots)."""
    floor_s = hot_rate * query_s * query_s / db_slots
    return cache_stampede.Params(request_rate_per_s=hot_rate, recompute_s=query_s, db_slots=int(db_slots),
                                 expires_in_s=_STAMPEDE_LEAD_S, duration_s=_STAMPEDE_LEAD_S + 1.1 * floor_s + 1.0)


def _jittered_sections(section_keys: float, section_rate: float, query_s: float, db_slots: float,
                       jitter_s: float) -> object:
    """Keys written together, their expiry spread over `jitter_s`, rebuilt one query per key (coalesced)."""
    drain_s = math.ceil(section_keys / db_slots) * query_s
    return cache_stampede.Params(request_rate_per_s=section_rate, keys=int(section_keys), recompute_s=query_s,
                                 db_slots=int(db_slots), jitter_s=jitter_s, policy="coalesce",
                                 expires_in_s=_STAMPEDE_LEAD_S,
                                 duration_s=_STAMPEDE_LEAD_S + jitter_s + drain_s + 1.0)


_STAMPEDE_OWN = "ttl_s expires_in_s duration_s"


def _chain(fault: str, budget: bool) -> Callable[..., object]:
    """A retry-chain run for a drill's chain: its depth, retries, timeouts, deadline and budget. The traffic is
    the model's own (a few hundred requests): every figure asked for is per request."""
    def build(depth: float, retries: float, timeout_s: float, deadline_s: float, budget_ratio: float) -> object:
        return retry_chain.Params(depth=int(depth), retries=int(retries), timeout_s=timeout_s, deadline_s=deadline_s,
                                  budget_ratio=budget_ratio, fault=fault, budget=budget,
                                  request_rate_per_s=20.0 if budget else 5.0, duration_s=20.0 if budget else 4.0)
    return build


_LEASE_INPUTS = ("lease_s", "renew_every_s", "since_renew", "pause_s", "write_rate", "poll_s", "clock_step_s")


def _lease(fault: str) -> Callable[..., object]:
    """A lease run for a drill's numbers: the fault strikes `since_renew` after A's second renewal. A pause lasts
    `pause_s`; a partition outlasts the lease and the clock step, so A finds out only from its own clock."""
    def build(lease_s: float, renew_every_s: float, since_renew: float, pause_s: float, write_rate: float,
              poll_s: float, clock_step_s: float) -> object:
        fault_at = 2 * renew_every_s + since_renew
        pause = fault == "pause"
        fault_s = pause_s if pause else lease_s + clock_step_s + 5.0
        return leases.Params(lease_s=lease_s, renew_every_s=renew_every_s, write_every_s=1.0 / write_rate,
                             fault=fault, fault_at_s=fault_at, fault_s=fault_s, poll_s=poll_s,
                             clock_step_s=0.0 if pause else clock_step_s, duration_s=fault_at + fault_s + 5.0)
    return build


_LEASE = dict(lease_s="lease_s", renew_every_s="renew_every_s", fault_at_s="2 * renew_every_s + since_renew",
              write_every_s="1 / write_rate", poll_s="poll_s")
_LEASE_WRITTEN = (10.0, 3.0, 1.3, 18.0, 2.0, 0.25, 4.0)   # the split-brain drill as written

_CHAIN_INPUTS = ("depth", "retries", "timeout_s", "deadline_s", "budget_ratio")
_CHAIN = _mirrors("request_rate_per_s duration_s dependency_s slow_s", **{name: name for name in _CHAIN_INPUTS})


def _entries(*presets: SimPreset) -> dict[str, SimPreset]:
    return {preset.id: preset for preset in presets}


PRESETS: dict[str, SimPreset] = _entries(
    SimPreset("hot_shard.celebrity_4", "hot_shard", hot_shard.celebrity(shards=4),
              "hot_shard_load_pct", "% of capacity",
              "Load on the celebrity key's shard, 4 shards",
              mirrors=_mirrors(_CELEBRITY_OWN, shards="hash_groups", hot_key_share="celebrity_share")),
    SimPreset("hot_shard.celebrity_6", "hot_shard", hot_shard.celebrity(shards=6),
              "hot_shard_load_pct", "% of capacity",
              "Load on the celebrity key's shard after growing to 6 shards",
              mirrors=_mirrors(_CELEBRITY_OWN, shards="grown_shards", hot_key_share="celebrity_share")),
    SimPreset("hot_shard.tenant_groups", "hot_shard", hot_shard.tenant_groups(),
              "neighbour_mean_wait_s", "s",
              "Mean wait of the noisy tenant's neighbours, 4 worker groups",
              inputs=_TENANT_INPUTS, build=_tenant_groups,
              mirrors=_mirrors("groups_per_key sample_every_s", shards="hash_groups", ordinary_keys="tenants - 1",
                               hot_key_share="acme_storm_rate / storm_arrivals", arrival_rps="storm_arrivals",
                               servers_per_shard="floor(slots / hash_groups)", service_s="job_seconds",
                               duration_s="storm_s")),
    SimPreset("hot_shard.shuffle_cut_off", "hot_shard", hot_shard.shuffle_sharding(),
              "cut_off_keys_pct", "% of tenants",
              "Tenants left with no working group, 2 of 8 groups each"),
    SimPreset("concurrency_pool.fanout_rejected", "concurrency_pool", concurrency_pool.Params(),
              "fanout.rejected", "429s", "429s collected by the unbounded fan-out",
              mirrors=_mirrors(_POOL_OWN + " pool_size", **_POOL)),
    SimPreset("concurrency_pool.fanout_makespan", "concurrency_pool", concurrency_pool.Params(),
              "fanout.makespan_s", "s", "Time for the unbounded fan-out to finish"),
    SimPreset("concurrency_pool.pool5_makespan", "concurrency_pool", concurrency_pool.Params(pool_size=5),
              "pool.makespan_s", "s", "Time for a pool of 5 to finish"),
    SimPreset("concurrency_pool.pool10_rejected", "concurrency_pool", concurrency_pool.Params(pool_size=10),
              "pool.rejected", "429s", "429s collected by a pool of 10",
              mirrors=_mirrors(_POOL_OWN, pool_size="pool_sim_k", **_POOL)),
    SimPreset("concurrency_pool.pool10_makespan", "concurrency_pool", concurrency_pool.Params(pool_size=10),
              "pool.makespan_s", "s", "Time for a pool of 10 to finish"),
    SimPreset("retry_storm.no_jitter_peak", "retry_storm", retry_storm.Params(jitter=False),
              "peak_calls_per_s", "calls/s", "Calls reaching the provider in the worst second, no jitter",
              inputs=_STORM_INPUTS, build=_storm(jitter=False), mirrors=_STORM),
    SimPreset("retry_storm.jitter_peak", "retry_storm", retry_storm.Params(jitter=True),
              "peak_calls_per_s", "calls/s", "Worst second with jitter, a shared breaker and a ramp",
              inputs=_STORM_INPUTS, build=_storm(jitter=True), mirrors=_STORM),
    SimPreset("cache_stampede.hot_key_busy", "cache_stampede", _hot_key_expiry(2_400.0, 0.6, 40),
              "db_busy_s", "s", "Seconds the database stays busy after the hot key expires, nothing coalesced",
              inputs=("hot_rate", "query_s", "db_slots"), build=_hot_key_expiry,
              mirrors=_mirrors(_STAMPEDE_OWN + " keys jitter_s", request_rate_per_s="hot_rate",
                               recompute_s="query_s", db_slots="db_slots")),
    SimPreset("cache_stampede.jitter_peak", "cache_stampede", _jittered_sections(320, 1_500.0, 0.6, 40, 20.0),
              "peak_db_in_flight", "queries", "Most rebuild queries at the database at once, expiry jittered",
              inputs=("section_keys", "section_rate", "query_s", "db_slots", "jitter_s"), build=_jittered_sections,
              mirrors=_mirrors(_STAMPEDE_OWN, request_rate_per_s="section_rate", keys="section_keys",
                               recompute_s="query_s", db_slots="db_slots", jitter_s="jitter_s")),
    SimPreset("retry_chain.budget_amplification", "retry_chain", _chain("errors", True)(3, 3, 1.0, 2.5, 0.1),
              "attempts_per_request", "attempts", "Attempts per user request at the failing dependency, budgets at "
              "every layer", inputs=_CHAIN_INPUTS, build=_chain("errors", True), mirrors=_CHAIN),
    SimPreset("retry_chain.orphaned_pct", "retry_chain", _chain("slow", False)(3, 3, 1.0, 2.5, 0.1),
              "orphaned_pct", "%", "Share of the hanging dependency's attempts started after the user gave up",
              inputs=_CHAIN_INPUTS, build=_chain("slow", False), mirrors=_CHAIN),
    SimPreset("leases.pause_wake", "leases", _lease("pause")(*_LEASE_WRITTEN), "wake_after_takeover_s", "s",
              "How long the standby had led when the paused leader woke", inputs=_LEASE_INPUTS, build=_lease("pause"),
              mirrors=_mirrors("margin_s write_s clock_step_s duration_s", fault_s="pause_s", **_LEASE)),
    SimPreset("leases.step_stale", "leases", _lease("partition")(*_LEASE_WRITTEN), "stale_accepted", "writes",
              "Old leader's writes accepted after the standby took over, clock stepped back",
              inputs=_LEASE_INPUTS, build=_lease("partition"),
              mirrors=_mirrors("margin_s write_s fault_s duration_s", clock_step_s="clock_step_s", **_LEASE)),
    SimPreset("platform.peak_in_flight", "platform", platform.Params.for_scenario("baseline"),
              "jobs_in_flight", "jobs", "Jobs in flight at the weekday peak"),
    SimPreset("platform.break1_growth", "platform", platform.Params.for_scenario("break1_fifo"),
              "backlog_growth_jobs_per_s", "jobs/s", "Backlog growth during Acme's surge as the drill is written, FIFO"),
    SimPreset("platform.break1_acme_share", "platform", platform.Params.for_scenario("break1_fifo"),
              "acme_slot_share_pct", "% of slots", "Share of the worker slots Acme holds under FIFO"),
    SimPreset("platform.break1_capped_recovery", "platform", platform.Params.for_scenario("break1_fair"),
              "others_recovery_min", "min", "Minutes for everyone else's backlog to clear, Acme capped at 20"),
    SimPreset("platform.break1_paused_recovery", "platform", platform.Params.for_scenario("break1_paused"),
              "others_recovery_min", "min", "Minutes for everyone else's backlog to clear, Acme paused"),
    SimPreset("platform.break2_growth", "platform",
              platform.Params.for_scenario("break2_polish_off", window_min=45.0),
              "backlog_growth_jobs_per_s", "jobs/s", "Backlog growth on the fallbacks with all four calls"),
    SimPreset("platform.break2_extra_spend", "platform", platform.Params.for_scenario("break2"),
              "extra_provider_spend_usd", "$", "Extra provider spend for the outage as the drill is written"),
    SimPreset("partitions.replay_drain", "partitions", partitions.Params(buckets=4),
              "replay_drain_s", "s", "Seconds to replay the backlog, 4 even buckets, fresh work first",
              inputs=_PARTITION_INPUTS, build=lambda **v: _replay(4, 120.0, **v),
              mirrors=_mirrors("horizon_s", buckets="buckets", **_PARTITION)),
    SimPreset("partitions.replay_drain_uneven", "partitions", partitions.Params(buckets=3, horizon_s=240.0),
              "replay_drain_s", "s", "Seconds to replay the backlog when the tenant lands on 3 of 4 partitions",
              inputs=_PARTITION_INPUTS, build=lambda **v: _replay(3, 240.0, **v),
              mirrors=_mirrors("horizon_s", buckets="uneven_buckets", **_PARTITION)),
)


def metric_value(summary: dict, path: str) -> float:
    """Follow a dotted path such as ``"fanout.rejected"`` into a summary dict."""
    value: object = summary
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"summary has no {path!r} (stopped at {part!r})")
        value = value[part]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{path!r} is not a number: {value!r}")
    return float(value)


def evaluate(preset_id: str, seed: int, values: Mapping[str, float] | None = None) -> float:
    """Run the preset's model with ``seed`` (on a drill's ``values`` when it has inputs) and return the
    figure a guess is graded against."""
    try:
        preset = PRESETS[preset_id]
    except KeyError:
        raise KeyError(f"unknown simulation preset {preset_id!r}; known: {', '.join(sorted(PRESETS))}") from None
    model = importlib.import_module(f"sims.{preset.model}")
    return metric_value(model.summary(model.run(preset.params_for(values), seed)), preset.metric)


def inputs_of(preset_ids, values: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """The drill values the given presets read, as sorted (name, value) pairs (a cache key for their runs)."""
    names = {name for preset_id in preset_ids for name in PRESETS[preset_id].inputs}
    return tuple(sorted((name, float(values[name])) for name in names))
