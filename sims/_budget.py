"""An event budget for SimPy runs: the model stops with a clear error instead of running away.

Params checks estimate a run's size up front; this is the backstop when an estimate is wrong.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import simpy

PROGRESS_EVERY_EVENTS = 4096        # events between two progress reports


class BudgetExceeded(ValueError):
    """A run needed more events than its budget; a ValueError so callers treat it as bad input."""


def run_within(env: simpy.Environment, max_events: int, what: str, until: float | None = None,
               progress: Callable[[float], None] | None = None) -> int:
    """Process events up to ``until`` (or until none are left); return how many were processed.

    Events scheduled exactly at ``until`` are left alone, as ``env.run(until=...)`` does, and the
    clock ends at ``until``. Raises ``BudgetExceeded`` when ``max_events`` would be passed.
    ``progress`` (with ``until``) gets the share of the window done every PROGRESS_EVERY_EVENTS events.
    """
    end = math.inf if until is None else until
    step, peek = env.step, env.peek
    done = 0
    while peek() < end:
        if done >= max_events:
            raise BudgetExceeded(f"{what} needed more than {max_events:,} simulation events; "
                                 "choose settings that do less work")
        for _ in range(min(PROGRESS_EVERY_EVENTS, max_events - done)):
            if peek() >= end:
                break
            step()
            done += 1
        if progress is not None and until is not None:
            progress(min(1.0, env.now / until))
    if until is not None and env.now < until:
        env.run(until=until)
    return done
