"""An event budget for SimPy runs: the model stops with a clear error instead of running away.

Params checks estimate a run's size up front; this is the backstop when an estimate is wrong.
"""
from __future__ import annotations

import math

import simpy


class BudgetExceeded(ValueError):
    """A run needed more events than its budget; a ValueError so callers treat it as bad input."""


def run_within(env: simpy.Environment, max_events: int, what: str, until: float | None = None) -> int:
    """Process events up to ``until`` (or until none are left); return how many were processed.

    Events scheduled exactly at ``until`` are left alone, as ``env.run(until=...)`` does, and the
    clock ends at ``until``. Raises ``BudgetExceeded`` when ``max_events`` would be passed.
    """
    end = math.inf if until is None else until
    step, peek = env.step, env.peek
    done = 0
    while peek() < end:
        if done >= max_events:
            raise BudgetExceeded(f"{what} needed more than {max_events:,} simulation events; "
                                 "choose settings that do less work")
        step()
        done += 1
    if until is not None and env.now < until:
        env.run(until=until)
    return done
