"""Plumbing every PostgreSQL experiment shares: a throwaway schema per run, and racing worker threads.

Each worker thread opens its own psycopg connection; a barrier lines them up so they really overlap.
"""
from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg
from psycopg import sql

BARRIER_TIMEOUT_S = 30.0     # a worker that never arrives is a bug, not a reason to hang the page


@dataclass(frozen=True)
class Scratch:
    """One run's private schema on the server at ``url``; connections made here see only it."""

    url: str
    schema: str

    def connect(self, *, autocommit: bool = True) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=autocommit,
                               options=f"-c search_path={self.schema}",
                               application_name=f"faultlines-lab:{self.schema}")

    def execute_script(self, statements: Sequence[str], params: Sequence[object] | None = None) -> None:
        with self.connect() as conn:
            for statement in statements:
                conn.execute(statement, params)


@contextmanager
def scratch_schema(url: str, prefix: str = "lab") -> Iterator[Scratch]:
    """A fresh schema for the length of the block, dropped (with every table in it) afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield Scratch(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def race(scratch: Scratch, workers: int, work: Callable[[int, psycopg.Connection, threading.Barrier], object]
         ) -> list[object]:
    """Run ``work(index, connection, barrier)`` in ``workers`` threads at once; their results in order.

    Every thread connects before anyone starts, so connection set-up is not what spaces them out;
    ``work`` calls ``barrier.wait()`` right before its race window. The first error any thread
    raises is raised here after all threads stop (the barrier is broken so none waits forever).
    """
    barrier = threading.Barrier(workers, timeout=BARRIER_TIMEOUT_S)
    results: list[object] = [None] * workers
    errors: list[BaseException] = []
    connections = [scratch.connect() for _ in range(workers)]

    def run(index: int) -> None:
        try:
            results[index] = work(index, connections[index], barrier)
        except BaseException as exc:  # handed to the caller once every thread has stopped
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,), name=f"pg-worker-{i}") for i in range(workers)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for conn in connections:
            conn.close()
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise RuntimeError("a lab worker failed") from (real or errors)[0]
    return results


def check_range(name: str, value: int, low: int, high: int) -> None:
    """The one front door for experiment sizes: a clear message instead of a runaway run."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name} must be a whole number from {low} to {high}, got {value!r}")


def check_ms(name: str, value: float, high: float) -> None:
    if not (isinstance(value, (int, float)) and 0 <= value <= high):
        raise ValueError(f"{name} must be between 0 and {high} ms, got {value!r}")
