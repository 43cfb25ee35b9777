"""Which attempt store a FAULTLINES_DB value names: the embedded DuckDB file or a PostgreSQL server.

The one place that knows both backends, so drills.store (DuckDB) never imports the PostgreSQL backend (psycopg).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

from drills.store import AttemptStore, StoreCore, database_path, is_postgres_target
from drills.store.postgres import PostgresAttemptStore


def open_store(target: str | os.PathLike | None = None, *, clock: Callable[[], float] = time.time) -> StoreCore:
    """The attempt store `target` names (default: database_path()): a PostgreSQL URL or a DuckDB file."""
    where = str(target) if target is not None else database_path()
    if is_postgres_target(where):
        return PostgresAttemptStore(where, clock=clock)
    return AttemptStore(where, clock=clock)
