"""The PostgreSQL store's connections: every one bounded in time, so a server that hangs is an error in seconds.

bounded_conninfo adds connect_timeout, TCP keepalives and tcp_user_timeout to the URL; StorePool hands out
pooled connections under one deadline per store call, which CallDeadlines enforces from a thread of its own
(the server's statement_timeout cannot fire on a server that is stopped).
"""
from __future__ import annotations

import os
import select
import socket
import threading
import time
import weakref
from contextlib import contextmanager

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

POOL_MIN, POOL_MAX = 1, 8
# Every store call gives up in a few seconds, so a server that has gone away is a page the app shows soon,
# not a press that hangs: connecting (unless the URL sets its own connect_timeout: libpq
# would otherwise wait on a dead host for minutes), waiting for a pooled connection, and each statement.
CONNECT_TIMEOUT_S = 3
POOL_TIMEOUT_S = 4.0
# The server's own limit on a statement, under the client's deadline below: a slow statement ends in a clean
# error and a rollback on a connection that can be used again, before the client has to cut it.
STATEMENT_TIMEOUT_MS = 4000
# The client's deadline on a whole store call (waiting for a connection, its check, every statement, the
# commit). The server's limits cannot fire on a server that is hung (SIGSTOP, a host frozen): its kernel
# still acknowledges every packet, so neither TCP keepalives nor tcp_user_timeout see anything wrong. A call
# past this deadline has its socket shut down by CallDeadlines, and fails as a store fault.
CALL_DEADLINE_S = 4.5
# A report copy's pull is a dozen COPY statements over every record table: a longer deadline of its own.
PULL_DEADLINE_S = 30.0
# A peer that vanished without a word (a host lost, a network cut) shows on the socket within seconds:
# keepalive probes after 5 s idle, every 2 s, two missed; and data left unacknowledged for 5 s (Linux).
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 2,
              "tcp_user_timeout": 5000}
# A pool that fails to connect retries with a doubling back-off; giving up on that attempt after this long
# lets the next call start a fresh one, so the store is back within seconds of the server, whatever the outage.
RECONNECT_GIVE_UP_S = 3.0
# While the last attempt to connect failed this recently, a call waits this long for a connection, not
# POOL_TIMEOUT_S: long enough for a server that is back to take the new attempt, short enough to say soon
# that it is still away.
DOWN_RECENTLY_S, DOWN_WAIT_S = 5.0, 0.5
# A pooled connection idle longer than this is checked with a round trip before it is handed out.
IDLE_CHECK_S = 5.0

def bounded_conninfo(url: str) -> str:
    """The URL with the client's connection bounds (connect_timeout, keepalives, tcp_user_timeout) added,
    each only where the URL does not set its own."""
    given = conninfo_to_dict(url)
    bounds = {"connect_timeout": CONNECT_TIMEOUT_S, **KEEPALIVES}
    return make_conninfo(url, **{key: value for key, value in bounds.items() if key not in given})


def _cut(conn: psycopg.Connection) -> None:
    """Shut the connection's socket down from another thread: the call waiting on it reads EOF at once and
    raises OperationalError, and the pool discards the connection. (Closing the PGconn under a thread still
    inside libpq would be unsafe; a shutdown of a duplicate descriptor reaches the same socket safely.)"""
    try:
        fd = os.dup(conn.fileno())
    except (OSError, psycopg.Error):
        return   # already closed
    with socket.socket(fileno=fd) as sock:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class CallDeadlines:
    """One thread per process that cuts the connection of a store call still running past its deadline.

    A call arms its connection with an absolute deadline and disarms it when it ends; the thread sleeps while
    nothing is armed and otherwise looks every TICK_S, so a call costs two dict operations, not a timer.
    """

    TICK_S = 0.1

    def __init__(self):
        self._armed: dict[int, tuple[float, psycopg.Connection]] = {}
        self._lock = threading.Lock()
        self._work = threading.Event()
        self._thread: threading.Thread | None = None
        self.cuts = 0   # connections cut so far (tests read it)

    @contextmanager
    def armed(self, conn: psycopg.Connection, deadline: float):
        key = id(conn)
        with self._lock:
            self._armed[key] = (deadline, conn)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="faultlines-store-deadlines", daemon=True)
                self._thread.start()
        self._work.set()
        try:
            yield conn
        finally:
            with self._lock:   # under the lock: a connection is never cut once its call has ended
                self._armed.pop(key, None)

    def _watch(self) -> None:
        while True:
            self._work.wait()
            time.sleep(self.TICK_S)
            now = time.monotonic()
            with self._lock:
                for key, (deadline, conn) in list(self._armed.items()):
                    if now >= deadline:
                        del self._armed[key]
                        _cut(conn)
                        self.cuts += 1
                if not self._armed:
                    self._work.clear()


DEADLINES = CallDeadlines()
_CALL = threading.local()   # the deadline of the call this thread is in, for the pool's check of a connection


def _input_waiting(conn: psycopg.Connection) -> bool:
    """Whether an idle connection's socket has something to read: nothing comes unasked but a goodbye or EOF."""
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return bool(poller.poll(0))


class StorePool(ConnectionPool):
    """A connection pool that spends a round trip checking a connection only when it may have died.

    A server that drops a connection (a restart, pg_terminate_backend) sends it a last message and
    closes the socket, so a poll of the socket, no round trip, tells which connections it dropped.
    A connection idle longer than IDLE_CHECK_S is checked with a round trip anyway: a peer gone without
    a word (a host rebooted, a network lost) shows only when something is sent. Either way a dead
    connection is replaced, never handed out; a hot connection costs a poll instead of a round trip.
    """

    def __init__(self, conninfo: str, **kwargs):
        self._idle_since: weakref.WeakKeyDictionary[psycopg.Connection, float] = weakref.WeakKeyDictionary()
        self._failed_at: float | None = None   # when the last attempt to connect failed (None: it worked)
        super().__init__(conninfo, check=self._check_in_doubt, configure=self._configure, **kwargs)

    def _connect(self, timeout: float | None = None) -> psycopg.Connection:
        try:
            conn = super()._connect(timeout)
        except Exception:
            self._failed_at = time.monotonic()
            raise
        self._failed_at = None
        return conn

    def getconn(self, timeout: float | None = None) -> psycopg.Connection:
        failed_at = self._failed_at
        if failed_at is not None and time.monotonic() - failed_at < DOWN_RECENTLY_S:
            timeout = min(timeout if timeout is not None else self.timeout, DOWN_WAIT_S)
        return super().getconn(timeout)

    @contextmanager
    def connection(self, timeout: float | None = None, *, within_s: float = CALL_DEADLINE_S):
        """A pooled connection for one store call, which fails (OperationalError) once `within_s` has passed
        since it began: the wait for a connection, its check and everything run on it share that deadline."""
        deadline, began = time.monotonic() + within_s, time.time()
        _CALL.deadline = deadline
        try:
            try:
                conn = self.getconn(min(timeout if timeout is not None else self.timeout, within_s))
            finally:
                _CALL.deadline = None
            try:
                with DEADLINES.armed(conn, deadline), conn:
                    yield conn
            finally:
                self.putconn(conn)
        except psycopg.OperationalError as error:
            # When the failed call began (Unix time): an outage given back counts from the press it held up,
            # not from the moment its deadline ran out.
            error.call_began = getattr(error, "call_began", began)
            raise

    def _mark_idle(self, conn: psycopg.Connection) -> None:
        self._idle_since[conn] = time.monotonic()

    def _configure(self, conn: psycopg.Connection) -> None:
        conn.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_MS}")
        self._mark_idle(conn)

    def putconn(self, conn: psycopg.Connection) -> None:
        self._mark_idle(conn)
        super().putconn(conn)

    def _check_in_doubt(self, conn: psycopg.Connection) -> None:
        idle_s = time.monotonic() - self._idle_since.get(conn, float("-inf"))
        if conn.closed or idle_s > IDLE_CHECK_S or _input_waiting(conn):
            deadline = getattr(_CALL, "deadline", None) or time.monotonic() + CALL_DEADLINE_S
            try:
                with DEADLINES.armed(conn, deadline):   # a round trip to a hung server is cut like any call
                    ConnectionPool.check_connection(conn)
            except psycopg.Error:
                # One dropped connection: those idle beside it (a restart drops them all) go now too, rather
                # than one per getconn with the pool's back-off (1 s, 2 s, ...) between them.
                self.check()
                raise


# The process's watch on the server (ui.store_watch) asks it one trivial question this often, and counts it
# unanswered after PROBE_DEADLINE_S: with the wait for the next probe, a hung server is known within 3.5 s.
# A SELECT 1 on a connection of its own answers in milliseconds even on a machine at load 10.
PROBE_DEADLINE_S = 2.5


class StoreProbe:
    """One connection of its own, outside the pool, on which the process asks the server whether it answers.

    Outside the pool so that a probe never queues behind busy store calls (a store slow under load is not a
    hung one), and under a deadline of its own, cut by CallDeadlines like any store call. A probe that fails
    drops its connection; the next one connects afresh, under the same deadline.
    """

    def __init__(self, conninfo: str, within_s: float = PROBE_DEADLINE_S):
        self._conninfo, self.within_s = conninfo, within_s
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()
        self.closed = False   # the store closed it: a probe then raises RuntimeError, and its watch ends

    def __call__(self) -> None:
        """Return once the server answered; raise psycopg.OperationalError when it did not within `within_s`."""
        with self._lock:
            if self.closed:
                raise RuntimeError("the store was closed: nothing to probe")
            deadline = time.monotonic() + self.within_s
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = psycopg.connect(self._conninfo, autocommit=True,
                                                 connect_timeout=max(2, int(self.within_s)))
                with DEADLINES.armed(self._conn, deadline):
                    self._conn.execute("SELECT 1")
            except psycopg.Error as error:
                self._drop()
                if time.monotonic() >= deadline:   # cut by CallDeadlines: say so, not "server closed the connection"
                    raise psycopg.OperationalError(
                        f"the server did not answer within {self.within_s:g} s (a probe, SELECT 1)") from error
                if isinstance(error, psycopg.OperationalError):
                    raise
                raise psycopg.OperationalError(str(error)) from error

    def close(self) -> None:
        with self._lock:   # after a probe under way (at most its deadline): its connection is not closed under it
            self.closed = True
            self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except psycopg.Error:
                pass
