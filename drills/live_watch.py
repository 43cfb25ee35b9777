"""How a process learns that a live room moved: LISTEN/NOTIFY on PostgreSQL, the store's version on DuckDB.

One watcher per process. On PostgreSQL a listener thread counts notifications per session and, after each
burst of them, reads the moved room's version once for the whole process (`room`) and hands it to the
callbacks given to `on_move` (the pages of that room are rerun from there, so they need not poll). On DuckDB
(one process) there is nothing to hear: pages poll, and `room` is one small query.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg

from drills.store import is_postgres_target
from drills.store.postgres import LIVE_CHANNEL

_LOG = logging.getLogger(__name__)
RECONNECT_S = 1.0     # wait before listening again after the connection dropped
WAIT_S = 1.0          # how long one wait for notifications blocks, so close() is noticed


Moved = Callable[[int, tuple], None]   # (session id, the room's version as just read)


class PollingWatch:
    """DuckDB (one process): the version is the store's own."""

    pushes = False   # nobody tells a page of a move: it polls

    def __init__(self, store):
        self._store = store

    def version(self, session_id: int) -> tuple:
        return self._store.live_version(session_id)

    def room(self, session_id: int) -> tuple:
        return self._store.live_version(session_id)

    def on_move(self, callback: Moved) -> None:
        """Nothing is heard here, so `callback` is never called."""

    def every_second(self, callback: Callable[[], None]) -> None:
        """No thread here to call it from: pages poll."""

    def on_drop(self, callback: Callable[[], None]) -> None:
        """Nothing listens here, so nothing drops: `callback` is never called."""

    def close(self) -> None:
        pass


class NotifyWatch:
    """PostgreSQL: a thread LISTENs on the live channel and counts notifications per session.

    A version is (epoch, count): the epoch moves whenever the listener (re)connects, since notifications sent
    while it was away are lost, so a page that sees a new epoch reads the store again.

    With `read` (the store's live_version), the thread also reads each moved room's version once per burst
    of notifications: `room` then answers without a query, and `on_move` callbacks hear of it."""

    def __init__(self, url: str, read: Callable[[int], tuple] | None = None):
        self._url = url
        self._read = read
        self._counts: dict[int, int] = {}
        self._rooms: dict[int, tuple] = {}
        self._callbacks: list[Moved] = []
        self._periodic: list[Callable[[], None]] = []
        self._dropped: list[Callable[[], None]] = []
        self._unread: set[int] = set()   # rooms whose read after a notification failed: read again each second
        self._epoch = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="faultlines-live-listen", daemon=True)
        self._thread.start()

    @property
    def pushes(self) -> bool:
        """Whether moves reach on_move's callbacks now: listening, with a reader."""
        return self._read is not None and self.listening.is_set()

    def version(self, session_id: int) -> tuple:
        with self._lock:
            return self._epoch, self._counts.get(session_id, 0)

    def room(self, session_id: int) -> tuple | None:
        """The room's version as read after the last notification heard for it; None when none was heard since
        the listener (re)connected (or there is no reader), so the caller reads the store."""
        with self._lock:
            return self._rooms.get(session_id)

    def on_move(self, callback: Moved) -> None:
        """Call `callback(session_id, version)` in the listener thread after each read of a moved room."""
        with self._lock:
            self._callbacks.append(callback)

    def every_second(self, callback: Callable[[], None]) -> None:
        """Call `callback()` in the listener thread after each wait for notifications (at most WAIT_S apart), as
        long as it listens: the pages' pushes are checked there without a thread of their own."""
        with self._lock:
            self._periodic.append(callback)

    def on_drop(self, callback: Callable[[], None]) -> None:
        """Call `callback()` in the listener thread when a connection it listened on drops: until it listens
        again no move is heard and no every_second callback runs."""
        with self._lock:
            self._dropped.append(callback)

    def _drop(self) -> None:
        with self._lock:
            callbacks = list(self._dropped)
        _call_each(callbacks, "a live room's drop callback failed")

    def _tick(self) -> None:
        with self._lock:
            callbacks = list(self._periodic)
            unread = sorted(self._unread)
        if unread and self._read is not None:
            self._moved(unread)
        _call_each(callbacks, "a live room's periodic check failed")

    def _bump(self, session_id: int | None) -> None:
        with self._lock:
            if session_id is None:
                self._epoch += 1
                self._rooms = {}   # what was missed while away is unknown
            else:
                self._counts[session_id] = self._counts.get(session_id, 0) + 1

    def _moved(self, sessions) -> None:
        """Read each room once, then tell the callbacks (a failed read leaves the room unknown)."""
        for session_id in sessions:
            try:
                version = self._read(session_id)
            except Exception:   # noqa: BLE001 - the store is away or busy: pages read it themselves meanwhile
                # Forget the version read before the move: kept, it would tell every page of the room that
                # nothing moved (a pool timeout under load left 20 of 200 pages on the open question for good).
                _LOG.warning("could not read live session %s after a notification; read again in a second",
                             session_id, exc_info=True)
                with self._lock:
                    self._rooms.pop(session_id, None)
                    self._unread.add(session_id)
                continue
            with self._lock:
                self._rooms[session_id] = version
                self._unread.discard(session_id)
                callbacks = list(self._callbacks)
            for callback in callbacks:
                try:
                    callback(session_id, version)
                except Exception:   # noqa: BLE001 - one page's failure must not stop the listener
                    _LOG.warning("a live room callback failed for session %s", session_id, exc_info=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {LIVE_CHANNEL}")
                    self.listening.set()
                    self._bump(None)
                    if self._read is not None:   # rooms heard of before may have moved while nobody listened
                        with self._lock:
                            known = sorted(self._counts)
                        self._moved(known)
                    while not self._stop.is_set():
                        moved = self._heard(conn.notifies(timeout=WAIT_S, stop_after=1))
                        if moved:   # and whatever came with it: one read per room for the whole burst
                            moved |= self._heard(conn.notifies(timeout=0))
                            if self._read is not None:
                                self._moved(sorted(moved))
                        self._tick()
            except psycopg.Error:
                was_listening = self.listening.is_set()
                self.listening.clear()
                self._bump(None)
                if was_listening:
                    self._drop()
                self._stop.wait(RECONNECT_S)

    def _heard(self, notes) -> set[int]:
        moved = set()
        for note in notes:
            try:
                session_id = int(note.payload)
            except ValueError:
                continue
            self._bump(session_id)
            moved.add(session_id)
        return moved

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=WAIT_S + 1)


def _call_each(callbacks: list[Callable[[], None]], failed: str) -> None:
    """Call each of `callbacks` in the listener thread: one that fails is logged, and stops neither the others
    nor the listener."""
    for callback in callbacks:
        try:
            callback()
        except Exception:   # noqa: BLE001 - see the docstring
            _LOG.warning(failed, exc_info=True)


def watch_for(store) -> PollingWatch | NotifyWatch:
    return NotifyWatch(store.path, store.live_version) if is_postgres_target(store.path) else PollingWatch(store)
