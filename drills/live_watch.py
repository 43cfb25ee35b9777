"""How a process learns that a live room moved: LISTEN/NOTIFY on PostgreSQL, the store's version on DuckDB.

One watcher per process. Pages ask it for a session's version several times a second; on PostgreSQL that is
an in-process counter a listener thread bumps (no query), on DuckDB one small query.
"""
from __future__ import annotations

import threading

import psycopg

from drills.store import is_postgres_target
from drills.store.postgres import LIVE_CHANNEL

RECONNECT_S = 1.0     # wait before listening again after the connection dropped
WAIT_S = 1.0          # how long one wait for notifications blocks, so close() is noticed


class PollingWatch:
    """DuckDB (one process): the version is the store's own."""

    def __init__(self, store):
        self._store = store

    def version(self, session_id: int) -> tuple:
        return self._store.live_version(session_id)

    def close(self) -> None:
        pass


class NotifyWatch:
    """PostgreSQL: a thread LISTENs on the live channel and counts notifications per session.

    A version is (epoch, count): the epoch moves whenever the listener (re)connects, since notifications sent
    while it was away are lost, so a page that sees a new epoch reads the store again."""

    def __init__(self, url: str):
        self._url = url
        self._counts: dict[int, int] = {}
        self._epoch = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="faultlines-live-listen", daemon=True)
        self._thread.start()

    def version(self, session_id: int) -> tuple:
        with self._lock:
            return self._epoch, self._counts.get(session_id, 0)

    def _bump(self, session_id: int | None) -> None:
        with self._lock:
            if session_id is None:
                self._epoch += 1
            else:
                self._counts[session_id] = self._counts.get(session_id, 0) + 1

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {LIVE_CHANNEL}")
                    self._bump(None)
                    self.listening.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=WAIT_S):
                            try:
                                self._bump(int(note.payload))
                            except ValueError:
                                continue
            except psycopg.Error:
                self.listening.clear()
                self._bump(None)
                self._stop.wait(RECONNECT_S)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=WAIT_S + 1)


def watch_for(store) -> PollingWatch | NotifyWatch:
    return NotifyWatch(store.path) if is_postgres_target(store.path) else PollingWatch(store)
