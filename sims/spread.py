"""Seed spreads: one summary figure from each of many seeded runs, shared out over worker processes.

A figure is named by its key in the model's ``summary()`` (dotted for nested summaries), so each
worker sends back a number, not a 2 MB run.

Workers are forked, on Linux only, on the first spread and kept warm for the next ones (one pool per
size, per process): they start with the models already imported, and they only compute and send back
numbers (no imports, no printing, no locks of the caller's other threads). Their garbage collector skips what they were forked with (``gc.freeze``),
so a big caller such as the Streamlit server does not slow their runs down. The other start methods
re-run the main module in each worker, and under Streamlit that is the page script; so where fork
is not the way, the runs happen in the caller, one after another.
"""
from __future__ import annotations

import atexit
import gc
import importlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

MAX_PROCESSES = 8
MODELS = ("concurrency_pool", "hot_shard", "platform", "retry_storm")   # what a warm worker has imported


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (q in 0..100), interpolated linearly between the closest ranks; None for no values.

    The one definition: the spread band over seeds (ui.sims.spread) and the platform's waits use it alike.
    """
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * q / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def figure_of(summary: dict, path: str) -> float | None:
    """The number at ``path`` (``"pool.rejected"``) in a summary; None when the run never reached it."""
    value: object = summary
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"summary has no {path!r} (stopped at {part!r})")
        value = value[part]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{path!r} is not a number: {value!r}")
    return float(value)


def figure(model: str, params: object, seed: int, path: str) -> float | None:
    """Run ``sims.<model>`` once and return one figure of its summary."""
    module = importlib.import_module(f"sims.{model}")
    return figure_of(module.summary(module.run(params, seed)), path)


def processes_for(runs: int) -> int:
    """How many worker processes a spread of ``runs`` runs gets: one per core, at most one per run,
    and none (the caller runs them) where workers cannot be forked."""
    if not sys.platform.startswith("linux"):
        return 1
    cores = len(os.sched_getaffinity(0))     # the cores this process may use, not all the machine's
    return max(1, min(runs, cores, MAX_PROCESSES))


def figures(model: str, params: object, seeds: Iterable[int], path: str, *, processes: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[float | None]:
    """The figure for each seed, in the order of ``seeds``; ``progress(done, total)`` after each run.

    With one process (``processes=1``, one seed, one core) the runs happen here, one after another.
    """
    seeds = list(seeds)
    workers = min(processes_for(len(seeds)), processes or len(seeds))
    found: dict[int, float | None] = {}
    if workers == 1:
        for seed in seeds:
            found[seed] = figure(model, params, seed, path)
            if progress is not None:
                progress(len(found), len(seeds))
        return [found[seed] for seed in seeds]
    for fresh in (False, True):
        pool = _warm_pool(workers, model)
        try:
            pending: dict[Future, int] = {pool.submit(figure, model, params, seed, path): seed
                                          for seed in seeds if seed not in found}
            for done in as_completed(pending):
                found[pending[done]] = done.result()
                if progress is not None:
                    progress(len(found), len(seeds))
            break
        except BrokenProcessPool:
            # a worker died (killed, out of memory): fork a fresh pool once for the runs still to do
            with _POOLS_LOCK:
                if _POOLS.get(workers) is pool:
                    del _POOLS[workers]
            if fresh:
                raise
    return [found[seed] for seed in seeds]


# Worker pools kept warm between spreads, one per size: forking costs tens of milliseconds and a fresh
# worker's first run pays for what the fork did not copy hot, and a page asks for spreads again and again.
_POOLS: dict[int, ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _warm_pool(workers: int, model: str) -> ProcessPoolExecutor:
    """The process's pool of ``workers`` forked workers, made on first use with ``sims.<model>`` imported."""
    with _POOLS_LOCK:
        pool = _POOLS.get(workers)
        if pool is None:
            for name in MODELS:                        # imported here, before the workers fork
                importlib.import_module(f"sims.{name}")
            importlib.import_module(f"sims.{model}")
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                       initializer=gc.freeze)
            _POOLS[workers] = pool
        return pool


def close_pools() -> None:
    """Stop every warm pool's workers (at exit, and in tests that need a clean slate)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(close_pools)
