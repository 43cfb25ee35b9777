"""Occupancy over time from (start, end) intervals: the step chart two models draw and check.

A step ``(t, n)`` means ``n`` intervals are open from ``t`` until the next step.
"""
from __future__ import annotations

from collections.abc import Iterable


def occupancy_steps(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, int]]:
    """(time, intervals open from then on) at every moment the count changes, in time order."""
    deltas: dict[float, int] = {}
    for start, end in intervals:
        deltas[start] = deltas.get(start, 0) + 1
        deltas[end] = deltas.get(end, 0) - 1
    steps, level = [], 0
    for moment in sorted(deltas):
        level += deltas[moment]
        steps.append((moment, level))
    return steps


def step_area(steps: list[tuple[float, int]]) -> float:
    """Integral of the step function from its first step to its last (count x seconds)."""
    return sum(level * (later - moment) for (moment, level), (later, _) in zip(steps, steps[1:]))
