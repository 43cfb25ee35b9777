"""A clock tests can set by hand, for stores and anything else that takes `clock=`.

Shared so that every test moves time the same way (`clock.t += 60`).
"""
from __future__ import annotations


class FakeClock:
    def __init__(self, t: float = 1_790_000_000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t
