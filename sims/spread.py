"""Seed spreads: one summary figure from each of many seeded runs, shared out over worker processes.

A figure is named by its key in the model's ``summary()`` (dotted for nested summaries), so each
worker sends back a number, not a 2 MB run.

Workers are forked, on Linux only, for one spread: they start in milliseconds with the models already
imported, and they only compute and send back numbers (no imports, no printing, no locks of the
caller's other threads). Their garbage collector skips what they were forked with (``gc.freeze``),
so a big caller such as the Streamlit server does not slow their runs down. The other start methods
re-run the main module in each worker, and under Streamlit that is the page script; so where fork
is not the way, the runs happen in the caller, one after another.
"""
from __future__ import annotations

import gc
import importlib
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

MAX_PROCESSES = 8


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
    importlib.import_module(f"sims.{model}")          # imported once here, before the workers fork
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=gc.freeze) as pool:
        pending: dict[Future, int] = {pool.submit(figure, model, params, seed, path): seed for seed in seeds}
        for done in as_completed(pending):
            found[pending[done]] = done.result()
            if progress is not None:
                progress(len(found), len(seeds))
    return [found[seed] for seed in seeds]
