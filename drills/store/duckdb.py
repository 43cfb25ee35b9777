"""The embedded attempt store: one DuckDB file, one connection per process, a cursor per thread.

Also the DuckDB plumbing the PostgreSQL store's report copy reuses (ThreadCursors, duckdb_transaction).
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path

import duckdb

from drills.store.core import StoreCore, database_path, is_postgres_target
from drills.store.migrations import apply_migrations


class ThreadCursors:
    """One DuckDB connection, a cursor per thread (a DuckDB cursor must not be shared between threads)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection):
        self.conn = conn
        self._local = threading.local()

    def __call__(self) -> duckdb.DuckDBPyConnection:
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self.conn.cursor()
            self._local.cursor = cur
        return cur


@contextmanager
def duckdb_transaction(cur: duckdb.DuckDBPyConnection):
    """BEGIN on `cur`, COMMIT when the block ends, ROLLBACK if it raises."""
    cur.execute("BEGIN TRANSACTION")
    try:
        yield cur
    except BaseException:
        cur.execute("ROLLBACK")
        raise
    cur.execute("COMMIT")


class AttemptStore(StoreCore):
    """The embedded store: one DuckDB connection per process; each thread reads through its own cursor.

    Writes take a process-wide lock so concurrent lock-ins never race inside DuckDB's
    optimistic transactions; every write is committed before the method returns.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, clock: Callable[[], float] = time.time):
        target = str(path) if path is not None else database_path()
        if is_postgres_target(target):   # else DuckDB would make a file named after the URL
            raise ValueError("AttemptStore keeps a DuckDB file; open a PostgreSQL URL with drills.backends.open_store")
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        self.path = target
        self.clock = clock
        self._conn = duckdb.connect(target)
        self._cursor = ThreadCursors(self._conn)
        self._write_lock = threading.Lock()
        with self._write_lock:
            apply_migrations(self._cursor(), self.clock())

    @contextmanager
    def _reading(self):
        yield self._cursor()

    @contextmanager
    def _transaction(self):
        """One commit for a group of writes, under the process-wide write lock."""
        with self._write_lock, duckdb_transaction(self._cursor()) as cur:
            yield cur

    def _insert_new(self, cur, table: str, columns: str, values: list, key: dict[str, object]) -> bool:
        # Look first, then insert: every writer in the process holds the write lock and DuckDB lets one
        # process write the file, so nothing can slip in between. (ON CONFLICT ... RETURNING cost about
        # four times as much in DuckDB 2.0; the primary key still refuses a duplicate outright.)
        where = " AND ".join(f"{name} = ?" for name in key)
        if cur.execute(f"SELECT 1 FROM {table} WHERE {where}", list(key.values())).fetchone() is not None:
            return False
        cur.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['?'] * len(values))})", values)
        return True

    def close(self) -> None:
        self._conn.close()

    def refresh_derived(self, write: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        """Rewrite derived tables (tallies, marks, grading keys; never a record) in one transaction.

        `write(cursor)` runs under the write lock, so what it reads and writes is one consistent snapshot.
        """
        with self._transaction() as cur:
            write(cur)

    def query(self, sql: str, params: Iterable | None = None):
        """Read-only SQL for reports (instructor aggregates); returns a DuckDB relation result."""
        return self._cursor().execute(sql, list(params or []))
