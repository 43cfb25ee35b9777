"""The board's small reads: drills by activity, cohorts, date bounds and variants drawn once per data version, and
the cohort picker's names.

Each is cached on the store and its data version (drills.reports.aggregates.data_version), read first in the run:
a board nobody has written to since costs the store that one tiny query, whatever the page draws.
"""
from __future__ import annotations

import streamlit as st

from drills.reports import aggregates
from drills.store import AttemptStore

ALL_COHORTS = "\u0000all"   # a sentinel no cohort code can equal (codes are letters, digits, - and _)


@st.cache_data(show_spinner=False, max_entries=256)
def _read(name: str, db: str, version: tuple, args: tuple, _store: AttemptStore):
    """aggregates.<name>(store, *args) as of `version`; `db`, `version` and `args` are the cache key."""
    return getattr(aggregates, name)(_store, *args)


class BoardReads:
    """One run's reads for the board, all as of the data version read when it is made."""

    def __init__(self, store: AttemptStore):
        self.store = store
        self.version = aggregates.data_version(store)

    def _at_version(self, name: str, *args):
        return _read(name, self.store.path, self.version, args, self.store)

    def drills_by_activity(self) -> list[str]:
        return self._at_version("drills_by_activity")

    def cohorts(self, drill_id: str) -> list[str]:
        return self._at_version("cohorts", drill_id)

    def date_bounds(self, drill_id: str) -> tuple[float, float] | None:
        return self._at_version("date_bounds", drill_id)

    def variants_drawn(self, drill_id: str) -> list[tuple[int, int]]:   # (variant, graded seed) pairs
        return self._at_version("variants_drawn", drill_id)


def cohort_names(store: AttemptStore, options: list[str]) -> dict[str, str]:
    """How the cohort picker names each option: a class by its title and code, a bare code as it is."""
    names = {}
    for code in options:
        info = store.class_info(code) if code and code != ALL_COHORTS else None
        names[code] = ("All cohorts" if code == ALL_COHORTS else f"{info.title} ({code})" if info
                       else code or "(no cohort)")
    return names
