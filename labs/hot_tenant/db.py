"""DuckDB plumbing for the lab: one connection per process, a cursor per thread, short transactions.

Also opens a database file that another process may hold, by waiting for its turn.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import duckdb

T = TypeVar("T")

# What DuckDB raises when two transactions touch the same row or key; the loser may retry.
CONFLICTS = (duckdb.TransactionException, duckdb.ConstraintException)
CONFLICT_RETRIES = 50


class Database:
    """Owns the process's connection to one DuckDB database; hands each thread its own cursor."""

    def __init__(self, path: str = ":memory:", *, connection: duckdb.DuckDBPyConnection | None = None):
        self.path = path
        self._con = connection if connection is not None else duckdb.connect(path)
        self._local = threading.local()
        self._lock = threading.Lock()

    @classmethod
    def open_when_free(cls, path: str, *, wait_s: float = 60.0, pause_s: float = 0.005) -> "Database":
        """Open a file another process may hold: DuckDB lets one read-write process in at a time.

        Waits by the clock, not by a count of tries: on a loaded machine each try itself is slow.
        """
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return cls(path)
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(pause_s)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            with self._lock:  # creating cursors from many threads at once is not documented as safe
                cur = self._con.cursor()
            self._local.cursor = cur
        return cur

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Turnstile:
    """A first-come-first-served lock: whoever asked first goes next.

    ``threading.Lock`` lets the thread that just released it take it straight back, so a writer
    in a tight loop can keep another waiting indefinitely. Here each arrival takes a ticket and
    waits for its number, so a thread that leaves and comes back queues behind those already waiting.
    """

    def __init__(self) -> None:
        self._turn = threading.Condition()
        self._next_ticket = 0
        self._now_serving = 0

    def __enter__(self) -> "Turnstile":
        with self._turn:
            ticket = self._next_ticket
            self._next_ticket += 1
            while ticket != self._now_serving:
                self._turn.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._turn:
            self._now_serving += 1
            self._turn.notify_all()


@contextmanager
def transaction(cur: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, rolled back on any error (including a conflict found at COMMIT)."""
    cur.execute("BEGIN TRANSACTION")
    try:
        yield cur
        cur.execute("COMMIT")
    except BaseException:
        try:
            cur.execute("ROLLBACK")
        except duckdb.Error:
            pass  # a failed COMMIT has already ended the transaction
        raise


def retry_on_conflict(work: Callable[[], T], *, retries: int = CONFLICT_RETRIES) -> T:
    """Run ``work`` (one whole transaction) again while it loses a write-write conflict."""
    for attempt in range(retries):
        try:
            return work()
        except CONFLICTS:
            if attempt == retries - 1:
                raise
            time.sleep(0.0005 * (attempt + 1))
    raise AssertionError("unreachable")
