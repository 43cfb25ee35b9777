"""The check every model run without SimPy's machinery must pass: the run its SimPy processes give."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from bench.bench_sims import counting_events


def assert_same_as_simpy(run: Callable, run_on_simpy: Callable, params: object, seeds: Iterable[int] = range(4)) -> None:
    """The same result, and the same event count as SimPy's own steps (the bench's ratio is per event of it)."""
    for seed in seeds:
        with counting_events() as counter:
            reference = run_on_simpy(params, seed)
        fast = run(params, seed)
        assert fast == reference, (params, seed)
        assert fast.events == counter["events"], (params, seed)
