"""Compute time of the live simulations at each tab's default and slider-maximum settings.

Prints median ms, simulated events per second, and the ratio to a bare SimPy loop of the same event
count timed in the same run. Targets: default under 100 ms, maximum under 2 s. Never asserts.
Then the spread each page offers: 20 seeds of its default settings, run cold (no cache), against
a target of 1.5 s, with the same bare-loop ratio. The platform page runs its spread in worker
processes (``sims.spread``, one per core, kept warm between spreads), so it gets a second line timed that way.
With ``--reference DIR`` (another checkout, e.g. ``git worktree add /tmp/main main``) the platform's two
spread lines are also timed with DIR's models, in turns with this tree's, and the ratio is printed: on a
shared machine only figures from the same run compare.
Run: ``python -m bench.bench_sims [--repeat N] [--spread-repeat N] [--clock cpu] [--reference DIR]``; the model
and the bare loop are timed in turns, so the load of a shared machine falls on both.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import importlib
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable

import simpy

from bench.timing import bare_loop, measure, summarise
from sims import concurrency_pool, hot_shard, platform, retry_storm, spread as seed_spread

# (page tab, which setting, model, params): the maxima are the pages' slider bounds
CASES = [
    ("hot shard / celebrity", "default", "hot_shard", hot_shard.celebrity()),
    ("hot shard / celebrity", "maximum", "hot_shard", hot_shard.celebrity(shards=12, hot_key_share=0.6)),
    ("hot shard / tenant groups", "default", "hot_shard", hot_shard.tenant_groups()),
    ("hot shard / tenant groups", "maximum", "hot_shard", hot_shard.tenant_groups(groups=8, multiplier=200.0)),
    ("hot shard / shuffle", "default", "hot_shard", hot_shard.shuffle_sharding()),
    ("hot shard / shuffle", "maximum", "hot_shard", hot_shard.shuffle_sharding(groups=16, per_tenant=3)),
    ("pool / pool limit", "default", "concurrency_pool", concurrency_pool.Params()),
    ("pool / pool limit", "maximum", "concurrency_pool",
     concurrency_pool.Params(calls=40, provider_limit=1, pool_size=30, retry_after_s=0.5)),
    ("retry storm / synchronised", "default", "retry_storm", retry_storm.Params()),
    ("retry storm / synchronised", "maximum", "retry_storm",
     retry_storm.Params(processes=200, in_flight_per_process=20)),
    ("retry storm / jitter+ramp", "default", "retry_storm", retry_storm.Params(jitter=True)),
    ("retry storm / jitter+ramp", "maximum", "retry_storm",
     retry_storm.Params(processes=200, in_flight_per_process=20, jitter=True)),
]


SPREAD_SEEDS = 20
SPREAD_TARGET_S = 1.5
# (page tab, model, params): each page's default, as the spread expander runs it
SPREAD_CASES = [
    ("hot shard / celebrity", "hot_shard", hot_shard.celebrity()),
    ("hot shard / tenant groups", "hot_shard", hot_shard.tenant_groups()),
    ("hot shard / shuffle", "hot_shard", hot_shard.shuffle_sharding()),
    ("pool / pool limit", "concurrency_pool", concurrency_pool.Params()),
    ("retry storm / synchronised", "retry_storm", retry_storm.Params()),
    ("retry storm / jitter+ramp", "retry_storm", retry_storm.Params(jitter=True)),
    ("platform / baseline", "platform", platform.Params()),
]
# (page tab, model, params, summary key): the spreads a page runs in worker processes
PARALLEL_SPREAD_CASES = [
    ("platform / baseline", "platform", platform.Params(), "jobs_in_flight"),
]


@contextlib.contextmanager
def counting_events():
    """Count ``Environment.step`` calls (one per processed event) while the block runs."""
    counter = {"events": 0}
    original = simpy.Environment.step

    def step(env):
        counter["events"] += 1
        return original(env)

    simpy.Environment.step = step
    try:
        yield counter
    finally:
        simpy.Environment.step = original


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def measure_side_by_side(model: Callable[[], object], bare: Callable[[], object], repeat: int,
                         clock: Callable[[], float]) -> tuple[dict[str, float], dict[str, float]]:
    """Time the model and the bare loop in turns, so a change in the machine's load falls on both alike."""
    model()
    bare()
    model_samples, bare_samples = [], []
    for _ in range(repeat):
        for fn, samples in ((model, model_samples), (bare, bare_samples)):
            start = clock()
            fn()
            samples.append(clock() - start)
    return summarise(model_samples), summarise(bare_samples)


def simulated_events(result: object, counter: dict[str, int]) -> int:
    """The events a run simulated: its own count where it keeps one, else the SimPy steps counted.

    A model that handles its events without SimPy's clock (hot_shard, retry_storm, the platform's calm
    stretch) counts each one as the SimPy model it equals would (tests check the two counts agree),
    so its ratio is still per event of the same simulation.
    """
    return getattr(result, "events", None) or counter["events"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11, help="timed runs per case (median is reported)")
    parser.add_argument("--spread-repeat", type=int, default=3, help="timed 20-seed spreads per page default")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="time the runs by the wall clock (default) or by this process's CPU time, which other "
                             "work on a shared machine barely moves (spreads in worker processes: always wall)")
    parser.add_argument("--reference", metavar="DIR",
                        help="another checkout whose platform spreads are timed in turns with this tree's")
    parser.add_argument("--spread-only", action="store_true", help="skip the per-run rows")
    args = parser.parse_args()
    if args.spread_only:
        spread(args.spread_repeat, args.reference, args.clock)
        return
    print(f"Load average before the timed runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"{args.clock} clock, each model run timed beside a bare loop of its events")
    print(f"{'tab':28} {'setting':8} {'median ms':>10} {'target':>7} {'events':>8} "
          f"{'events/s':>10} {'bare ev/s':>10} {'ratio':>6}")
    for tab, setting, model, params in CASES:
        module = importlib.import_module(f"sims.{model}")
        with counting_events() as counter:
            result = module.run(params, 1)
        events = simulated_events(result, counter)
        model_stats, bare_stats = measure_side_by_side(lambda: module.run(params, 1), lambda: bare_loop(events),
                                                       args.repeat, CLOCKS[args.clock])
        target_s = 0.1 if setting == "default" else 2.0
        verdict = "ok" if model_stats["median"] < target_s else "MISS"
        model_rate = events / model_stats["median"]
        bare_rate = events / bare_stats["median"]
        print(f"{tab:28} {setting:8} {model_stats['median'] * 1e3:10.1f} {verdict:>7} {events:8,d} "
              f"{model_rate:10,.0f} {bare_rate:10,.0f} {model_rate / bare_rate:6.2f}")

    spread(args.spread_repeat, args.reference, args.clock)


# Run in the reference checkout: times what it is sent (serial runs or a spread in workers), one line each.
REFERENCE_SERVER = """
import base64, importlib, pickle, sys, time
from sims import spread
for line in sys.stdin:
    if line.strip() == "stop":
        break
    kind, model, params, seeds, key, clock = pickle.loads(base64.b64decode(line))
    clock = time.process_time if clock == "cpu" else time.perf_counter
    module = importlib.import_module("sims." + model)
    start = clock()
    if kind == "serial":
        [module.summary(module.run(params, seed)) for seed in seeds]
    else:
        spread.figures(model, params, seeds, key)
    print(clock() - start, flush=True)
spread.close_pools()
"""


class Reference:
    """The models of another checkout in a process of their own, timing a spread when asked."""

    def __init__(self, root: str) -> None:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(root))
        self.process = subprocess.Popen([sys.executable, "-c", REFERENCE_SERVER], cwd=root, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def timer(self, *request: object) -> Callable[[], float]:
        line = base64.b64encode(pickle.dumps(request)).decode() + "\n"

        def ask() -> float:
            self.process.stdin.write(line)
            self.process.stdin.flush()
            return float(self.process.stdout.readline())
        return ask

    def close(self) -> None:
        # said, not signalled by closing stdin: this process's forked workers hold the pipe open too
        self.process.stdin.write("stop\n")
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def in_turns(here: Callable[[], object], there: Callable[[], float] | None, repeat: int,
             clock: Callable[[], float] = time.perf_counter) -> tuple[dict[str, float], dict[str, float] | None]:
    """Time ``here`` and the reference's ``there`` in turns, ``repeat`` times each."""
    own, theirs = [], []
    for _ in range(repeat):
        start = clock()
        here()
        own.append(clock() - start)
        if there is not None:
            theirs.append(there())
    return summarise(own), (summarise(theirs) if there is not None else None)


def spread(repeat: int, reference: str | None = None, clock: str = "wall") -> None:
    """Time the page's seed spread: every seed's run and summary, as the page computes them cold."""
    print(f"\n{SPREAD_SEEDS}-seed spread at each page default (cold, no cache); target {SPREAD_TARGET_S:g} s; "
          f"{clock} clock (the worker processes' line: wall clock)")
    print(f"{'tab':28} {'median s':>9} {'target':>7} {'per seed ms':>12} {'events':>10} {'ratio':>6}"
          + ("  reference s  ref/this" if reference else ""))
    there = Reference(reference) if reference else None
    seeds = range(1, SPREAD_SEEDS + 1)
    for tab, model, params in SPREAD_CASES:
        module = importlib.import_module(f"sims.{model}")
        with counting_events() as counter:
            runs = [module.run(params, seed) for seed in seeds]
        events = sum(simulated_events(r, counter) for r in runs) if hasattr(runs[0], "events") else counter["events"]
        timer = there.timer("serial", model, params, seeds, None, clock) if there and model == "platform" else None
        stats, theirs = in_turns(lambda: [module.summary(module.run(params, seed)) for seed in seeds], timer, repeat,
                                 CLOCKS[clock])
        bare = measure(lambda: bare_loop(events), repeat=repeat, warmup=0, clock=CLOCKS[clock])
        print(f"{tab:28} {stats['median']:9.2f} {_verdict(stats):>7} {stats['median'] / SPREAD_SEEDS * 1e3:12.1f} "
              f"{events:10,d} {stats['median'] / bare['median']:6.2f}" + _beside(stats, theirs))
    for tab, model, params, key in PARALLEL_SPREAD_CASES:
        workers = seed_spread.processes_for(SPREAD_SEEDS)
        timer = there.timer("figures", model, params, seeds, key, "wall") if there else None
        stats, theirs = in_turns(lambda: seed_spread.figures(model, params, seeds, key), timer, repeat)
        label = f"{tab} ({workers} proc.)"
        print(f"{label:28} {stats['median']:9.2f} {_verdict(stats):>7} {stats['median'] / SPREAD_SEEDS * 1e3:12.1f} "
              f"{'':>10} {'':>6}" + _beside(stats, theirs)
              + f"  (load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; min {stats['min']:.2f} s)")
    if there:
        there.close()


def _verdict(stats: dict[str, float]) -> str:
    return "ok" if stats["median"] <= SPREAD_TARGET_S else "MISS"


def _beside(stats: dict[str, float], theirs: dict[str, float] | None) -> str:
    if theirs is None:
        return ""
    return f"  {theirs['median']:11.2f}  {theirs['median'] / stats['median']:8.2f}"


if __name__ == "__main__":
    main()
