"""What a mixin of the store may call on the core: StorePart, the one base every part of StoreCore extends.

The store is one class (StoreCore) put together from parts that each own a job: accounts and classes, live
sessions, throttles, spaced review, the timeline. A part reaches the rest of the store only through the
members declared here; a test reads every part's source and fails on a private call this class does not name.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any


class StorePart(ABC):
    """The members a part of the store may use besides its own: the backend's plumbing and the core's helpers.

    A backend (drills.store.duckdb, drills.store.postgres) supplies the plumbing; StoreCore the helpers. Hooks
    a part defines for a backend to override (`_hold_target`, `_live_notify`) belong to that part, not here.
    """

    clock: Callable[[], float]   # the store's clock (seconds since the epoch), injected by tests

    # -- plumbing a backend provides ---------------------------------------------------------
    @abstractmethod
    def _transaction(self) -> AbstractContextManager[Any]:
        """A cursor whose writes commit together when the block ends (rolled back if it raises)."""

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Any]:
        """A cursor for one read."""

    def _hold_attempt(self, cur, key: int) -> None:
        """Keep other writers of this attempt (or room, or review row: ids share one sequence) out until the
        transaction ends. Nothing to do where one write lock already serialises every writer (DuckDB)."""

    @abstractmethod
    def _insert_new(self, cur, table: str, columns: str, values: list, key: dict[str, object]) -> bool:
        """Insert the row unless one with `key` exists; True when this call inserted it."""

    # -- helpers StoreCore provides ------------------------------------------------------------
    @abstractmethod
    def _one(self, sql: str, params: Iterable = ()) -> Any:
        """The first row of a read (None when there is none)."""

    @abstractmethod
    def _all(self, sql: str, params: Iterable = ()) -> list:
        """Every row of a read."""

    @abstractmethod
    def _guard(self, cur, attempt_id: int) -> None:
        """Hold the attempt and refuse (AttemptFinished) once it is finished, inside the writing transaction."""

    @abstractmethod
    def _insert_attempt(self, cur, candidate_id: int, drill_id: str, time_box_s: float, *, seed: int | None,
                        variant: int) -> tuple[int, str]:
        """Insert an attempt and its 'started' event in the caller's transaction: (its id, its token)."""

    @abstractmethod
    def _attempts_where(self, where: str, params: list) -> list:
        """The attempts a WHERE clause over attempts `a` and candidates `c` selects, oldest first."""

    @abstractmethod
    def finish(self, attempt_id: int) -> None:
        """Mark the attempt finished once (public: a part may finish an attempt as any caller would)."""
