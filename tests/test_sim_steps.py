"""The occupancy step chart shared by the concurrency-pool and retry-storm models."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sims._steps import occupancy_steps, step_area


def test_overlapping_and_touching_intervals():
    steps = occupancy_steps([(0, 2), (1, 3), (3, 4)])
    # at t=3 one interval ends and another starts: the count stays 1 rather than dipping to 0
    assert steps == [(0, 1), (1, 2), (2, 1), (3, 1), (4, 0)]
    assert step_area(steps) == 2 + 2 + 1


def test_no_intervals_no_steps():
    assert occupancy_steps([]) == [] and step_area([]) == 0


@given(st.lists(st.tuples(st.integers(0, 100), st.integers(1, 20)), max_size=40))
def test_area_is_the_total_length_and_the_chart_ends_empty(spans):
    intervals = [(float(start), float(start + length)) for start, length in spans]
    steps = occupancy_steps(intervals)
    assert step_area(steps) == sum(end - start for start, end in intervals)
    assert all(level >= 0 for _, level in steps)
    assert not steps or steps[-1][1] == 0
    for moment, level in steps:  # each step's count is the intervals open just after it
        assert level == sum(start <= moment < end for start, end in intervals)
