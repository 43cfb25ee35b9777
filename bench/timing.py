"""Shared timing helpers for the benchmarks: repeat a call, report median and p95.

Kept tiny on purpose so every benchmark reports its figures the same way; ``bare_loop`` is the
SimPy reference the simulation benchmarks divide by.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import simpy


def measure(fn: Callable[[], object], *, repeat: int = 20, warmup: int = 1,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Time ``fn`` ``repeat`` times after ``warmup`` calls; seconds as median, p95, p99, min.

    ``clock=time.process_time`` gives CPU seconds of this process, which other load on a shared
    machine barely moves; the default is wall-clock time.
    """
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = clock()
        fn()
        samples.append(clock() - start)
    return summarise(samples)


def summarise(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]

    return {"n": len(ordered), "median": statistics.median(ordered), "p95": pct(0.95),
            "p99": pct(0.99), "min": ordered[0]}


def fmt_ms(stats: dict[str, float]) -> str:
    return (f"median {stats['median'] * 1e3:8.2f} ms  p95 {stats['p95'] * 1e3:8.2f} ms  "
            f"p99 {stats['p99'] * 1e3:8.2f} ms  (n={stats['n']})")


def bare_loop(events: int) -> None:
    """The cheapest SimPy run with ``events`` events: one process, one timeout after another."""
    env = simpy.Environment()

    def ticker():
        for _ in range(events):
            yield env.timeout(1.0)

    env.process(ticker())
    env.run()
