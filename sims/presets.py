"""Named simulation runs that drills can embed: a model, frozen params and the number asked for.

A drill question names a preset id; its truth is ``evaluate(id, seed, values)``. A preset whose run
depends on the drill's numbers names them in ``inputs`` and builds its params from them, so an attempt
of a seeded variant is graded against a run of its own numbers. A preset a drill embeds also says in
``mirrors`` what each number of its params stands for in that drill, so the loader can hold the run to the
drill's numbers. Other models add entries to ``PRESETS`` the same way.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from sims import concurrency_pool, hot_shard, partitions, platform, retry_storm

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


def _storm(jitter: bool) -> Callable[..., object]:
    """The retry-storm run for a drill's outage: the breakers open when A stops hanging and starts failing,
    so A is back `after_hang_minutes` later, with each process's pool for A parked behind its breaker."""
    return lambda after_hang_minutes, a_pool_per_process: retry_storm.Params(
        jitter=jitter, outage_s=60.0 * after_hang_minutes, in_flight_per_process=round(a_pool_per_process))


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
              inputs=("tenants", "acme_normal_rate", "acme_storm_rate", "storm_minutes"),
              build=lambda tenants, acme_normal_rate, acme_storm_rate, storm_minutes: hot_shard.tenant_groups(
                  multiplier=acme_storm_rate / acme_normal_rate, tenants=int(tenants), duration_s=60.0 * storm_minutes),
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
              inputs=("after_hang_minutes", "a_pool_per_process"), build=_storm(jitter=False), mirrors=_STORM),
    SimPreset("retry_storm.jitter_peak", "retry_storm", retry_storm.Params(jitter=True),
              "peak_calls_per_s", "calls/s", "Worst second with jitter, a shared breaker and a ramp",
              inputs=("after_hang_minutes", "a_pool_per_process"), build=_storm(jitter=True), mirrors=_STORM),
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
