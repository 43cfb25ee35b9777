"""Benchmark for the platform model: a simulated weekday peak hour, against a bare SimPy loop.

Run ``python -m bench.bench_platform [--repeat N]``; prints figures, asserts nothing about time.

The peak hour is the baseline scenario over 60 minutes (about 18,000 jobs and 72,000 LLM calls).
The reference is a SimPy loop of one process yielding the same number of timeouts, timed in the
same run, so the ratio says how much the model's own bookkeeping costs per event. Peak memory is
measured in a separate run under tracemalloc, because tracing slows the timed runs down.
"""
from __future__ import annotations

import argparse
import os
import time
import tracemalloc

from bench.timing import bare_loop, fmt_ms, measure
from sims import platform

TARGET_S = 2.0          # a preset run should stay interactive on the page
PEAK_HOUR = platform.Params.for_scenario("baseline", window_min=60.0)


def peak_memory_mb(params: platform.Params) -> float:
    tracemalloc.start()
    try:
        platform.run(params, 1)
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each")
    args = parser.parse_args(argv)

    result = platform.run(PEAK_HOUR, 1)
    out = platform.summary(result)
    calls = sum(result.samples[-1].sent)
    events = result.events
    model = measure(lambda: platform.run(PEAK_HOUR, 1), repeat=args.repeat, warmup=1)
    bare = measure(lambda: bare_loop(events), repeat=args.repeat, warmup=1)
    model_cpu = measure(lambda: platform.run(PEAK_HOUR, 1), repeat=args.repeat, clock=time.process_time)
    bare_cpu = measure(lambda: bare_loop(events), repeat=args.repeat, clock=time.process_time)
    memory = peak_memory_mb(PEAK_HOUR)

    model_rate = events / model["median"]
    bare_rate = events / bare["median"]
    print(f"Load average before the timed runs: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(other work on the machine slows both rows alike; the ratio is the stable figure)")
    print(f"Simulated peak hour: {out['jobs_submitted']:,} jobs, {calls:,} LLM calls, {events:,} events "
          "(arrivals and job ends; the bare loop runs as many SimPy events)")
    print(f"  platform model  {fmt_ms(model)}  {model_rate:>10,.0f} events/s")
    print(f"  bare SimPy loop {fmt_ms(bare)}  {bare_rate:>10,.0f} events/s")
    print(f"  model / bare time per event: {model['median'] / bare['median']:.2f}x (wall clock)")
    print("CPU time of this process (steadier when the machine is shared):")
    print(f"  platform model  {fmt_ms(model_cpu)}  {events / model_cpu['median']:>10,.0f} events/s")
    print(f"  bare SimPy loop {fmt_ms(bare_cpu)}  {events / bare_cpu['median']:>10,.0f} events/s")
    print(f"  model / bare time per event: {model_cpu['median'] / bare_cpu['median']:.2f}x (CPU)")
    for name, stats in (("wall", model), ("CPU", model_cpu)):
        verdict = "under" if stats["median"] < TARGET_S else "OVER"
        print(f"  median compute ({name}) {stats['median']:.2f} s, {verdict} the {TARGET_S:.0f} s target for a preset")
    print(f"  peak traced memory of one run: {memory:.1f} MB")
    print(f"  check: {out['jobs_in_flight']:.0f} jobs in flight, {out['llm_calls_per_s']:.1f} calls/s, "
          f"{out['utilisation_pct']:.0f}% of slots busy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
