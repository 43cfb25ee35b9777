"""Seed spreads: one summary figure from each of many seeded runs, shared out over worker processes.

A figure is named by its key in the model's ``summary()`` (dotted for nested summaries), so each
worker sends back a number, not a 2 MB run. Workers come from a forkserver, never by forking the
caller, so a multi-threaded caller (the Streamlit server) is safe to call from.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed

MAX_PROCESSES = 8


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
    """How many worker processes a spread of ``runs`` runs gets: one per core, at most one per run."""
    return max(1, min(runs, os.cpu_count() or 1, MAX_PROCESSES))


def _context(model: str) -> multiprocessing.context.BaseContext:
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:                     # no forkserver on this platform
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload([f"sims.{model}"])
    return context


def figures(model: str, params: object, seeds: Iterable[int], path: str, *, processes: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[float | None]:
    """The figure for each seed, in the order of ``seeds``; ``progress(done, total)`` after each run.

    With one process (or one seed) the runs happen here, one after another.
    """
    seeds = list(seeds)
    workers = processes_for(len(seeds)) if processes is None else max(1, min(processes, len(seeds)))
    found: dict[int, float | None] = {}
    if workers == 1:
        for seed in seeds:
            found[seed] = figure(model, params, seed, path)
            if progress is not None:
                progress(len(found), len(seeds))
    else:
        with ProcessPoolExecutor(workers, mp_context=_context(model)) as pool:
            pending = {pool.submit(figure, model, params, seed, path): seed for seed in seeds}
            for done in as_completed(pending):
                found[pending[done]] = done.result()
                if progress is not None:
                    progress(len(found), len(seeds))
    return [found[seed] for seed in seeds]
