"""The attempt store on a PostgreSQL server, for several app processes sharing one database.

Writes go to PostgreSQL through a small connection pool; instructor reports run as DuckDB SQL over a copy.
"""
from __future__ import annotations

import functools
import io
import select
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from contextlib import contextmanager

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.csv as pa_csv
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool

from drills.store import (MIGRATIONS, StoreCore, ThreadCursors, apply_migrations, duckdb_transaction,
                          postgres_dialect)

# The same numbered migrations, spelled for PostgreSQL. Versions 2 to 4 create the derived tables here
# too, unused: reports keep theirs in the in-memory DuckDB copy (ReportCopy), so version numbers and
# schema_version() agree with the DuckDB store.
PG_MIGRATIONS: tuple[tuple[int, str], ...] = tuple((version, postgres_dialect(sql)) for version, sql in MIGRATIONS)

# pg_advisory_lock's two-key form: a space of its own, apart from the one-key locks held per attempt.
_MIGRATION_LOCK = (0x464C, 1)
POOL_MIN, POOL_MAX = 1, 8
CONNECT_TIMEOUT_S = 10   # unless the URL sets its own: libpq would otherwise wait on a dead host for minutes
# A pooled connection idle longer than this is checked with a round trip before it is handed out.
IDLE_CHECK_S = 5.0

# The record tables a report copy holds, each pulled in the order its rows were added (by id, from one
# sequence; answers and reveals, which have none, by their time), so rowid grows as rows were added.
RECORD_ORDER = {
    "schema_migrations": "version",
    "candidates": "id",
    "attempts": "id",
    "answers": "locked_at, attempt_id, question_id",
    "reveals": "revealed_at, attempt_id, part_id, section",
    "rubric_scores": "id",
    "note_ratings": "id",
    "time_grants": "id",
    "attempt_events": "id",
}


@functools.lru_cache(maxsize=512)
def _pg_placeholders(sql: str) -> str:
    # The shared SQL carries no '?' or '%' of its own, only parameters.
    return sql.replace("?", "%s")


class _PgCursor:
    """A psycopg cursor that takes the shared SQL's `?` placeholders."""

    def __init__(self, cur: psycopg.Cursor):
        self._cur = cur

    def execute(self, sql: str, params: Iterable | None = None) -> psycopg.Cursor:
        if params is None:
            return self._cur.execute(sql)   # no parameters: may hold several statements (migrations)
        return self._cur.execute(_pg_placeholders(sql), list(params))


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
        super().__init__(conninfo, check=self._check_in_doubt, configure=self._mark_idle, **kwargs)

    def _mark_idle(self, conn: psycopg.Connection) -> None:
        self._idle_since[conn] = time.monotonic()

    def putconn(self, conn: psycopg.Connection) -> None:
        self._mark_idle(conn)
        super().putconn(conn)

    def _check_in_doubt(self, conn: psycopg.Connection) -> None:
        idle_s = time.monotonic() - self._idle_since.get(conn, float("-inf"))
        if conn.closed or idle_s > IDLE_CHECK_S or _input_waiting(conn):
            try:
                ConnectionPool.check_connection(conn)
            except psycopg.Error:
                # One dropped connection: those idle beside it (a restart drops them all) go now too, rather
                # than one per getconn with the pool's back-off (1 s, 2 s, ...) between them.
                self.check()
                raise


class ReportCopy:
    """An in-memory DuckDB holding the record tables as of one PostgreSQL snapshot, plus derived tables.

    The data version is the text of pg_current_snapshot(): equal texts see exactly the same committed
    transactions, so one cheap query per report call tells whether a write (from any process) landed.
    A new copy forgets the tally marks, so drills.reports.tallies recounts every tally on its next refresh
    (row positions may shift between copies: a row can commit after one with a higher id was copied). The
    old tallies stay until then, so a report that races a pull reads counts a moment old (as it would
    on the DuckDB store), never none. Grading keys stay too: they come from drill content.
    """

    def __init__(self, pool: ConnectionPool):
        self._pool = pool
        self._db = duckdb.connect(":memory:")
        apply_migrations(self._db.cursor(), 0.0)
        self._schemas = {table: self._db.sql(f"SELECT * FROM {table} LIMIT 0").to_arrow_table().schema
                         for table in RECORD_ORDER}
        self.cursor = ThreadCursors(self._db)
        self._lock = threading.Lock()
        self._version: str | None = None
        self.pulls = 0   # how many snapshots were pulled (tests check the cache with it)

    def _server_version(self) -> str:
        with self._pool.connection() as conn:
            return conn.execute("SELECT pg_current_snapshot()::text").fetchone()[0]

    def fresh(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor on a copy that holds every write committed before the call."""
        if self._server_version() != self._version:
            with self._lock:
                if self._server_version() != self._version:
                    self._pull()
        return self.cursor()

    @contextmanager
    def derived(self):
        """A transaction on the copy for derived tables; no new snapshot is loaded meanwhile."""
        with self._lock, duckdb_transaction(self.cursor()) as cur:
            yield cur

    def _pull(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            version = conn.execute("SELECT pg_current_snapshot()::text").fetchone()[0]
            tables = {table: self._copy_out(conn, table, order) for table, order in RECORD_ORDER.items()}
        with duckdb_transaction(self.cursor()) as cur:   # readers see the old copy or the new, never half
            for table, rows in tables.items():
                cur.register("pulled_rows", rows)
                cur.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM pulled_rows")
                cur.unregister("pulled_rows")
            cur.execute("DELETE FROM tally_marks")
        self._version = version
        self.pulls += 1

    def _copy_out(self, conn: psycopg.Connection, table: str, order: str) -> pa.Table:
        schema = self._schemas[table]
        columns = ", ".join(schema.names)
        buffer = io.BytesIO()
        with conn.cursor().copy(f"COPY (SELECT {columns} FROM {table} ORDER BY {order}) TO STDOUT (FORMAT csv)") as copy:
            for block in copy:
                buffer.write(block)
        if buffer.tell() == 0:
            return schema.empty_table()
        buffer.seek(0)
        # PostgreSQL's CSV leaves NULL unquoted and empty, and quotes an empty string: the two stay apart.
        return pa_csv.read_csv(
            buffer, read_options=pa_csv.ReadOptions(column_names=schema.names),
            parse_options=pa_csv.ParseOptions(newlines_in_values=True),
            convert_options=pa_csv.ConvertOptions(column_types=schema, null_values=[""], strings_can_be_null=True,
                                                  quoted_strings_can_be_null=False, true_values=["t"],
                                                  false_values=["f"]))

    def close(self) -> None:
        self._db.close()


class PostgresAttemptStore(StoreCore):
    """The attempt store on PostgreSQL: the same methods, migrations and refusals as AttemptStore.

    Every write is one transaction on a pooled connection. Writers of one attempt (lock-ins, ratings,
    self-scores, Finish) first take an advisory lock on its id, so the finished check and the insert
    cannot interleave with a Finish from another process; a lock-in inserts with ON CONFLICT DO
    NOTHING and reads back whichever answer got there first.
    """

    def __init__(self, url: str, *, clock: Callable[[], float] = time.time):
        self.path = url
        self.clock = clock
        conninfo = url if "connect_timeout" in conninfo_to_dict(url) else make_conninfo(
            url, connect_timeout=CONNECT_TIMEOUT_S)
        self._migrate(conninfo)
        # StorePool: a connection the server dropped (a restart) is replaced, not handed out.
        self._pool = StorePool(conninfo, min_size=POOL_MIN, max_size=POOL_MAX, kwargs={"autocommit": True},
                               open=True, name="faultlines-store")
        self._reports = ReportCopy(self._pool)

    def _migrate(self, conninfo: str) -> None:
        # A plain connection first: an unreachable server fails here at once, not after a pool timeout.
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", _MIGRATION_LOCK)
            try:
                apply_migrations(_PgCursor(conn.cursor()), self.clock(), PG_MIGRATIONS, postgres_dialect)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", _MIGRATION_LOCK)

    @contextmanager
    def _reading(self):
        with self._pool.connection() as conn:
            yield _PgCursor(conn.cursor())

    @contextmanager
    def _transaction(self):
        with self._pool.connection() as conn, conn.transaction():
            yield _PgCursor(conn.cursor())

    def _hold_attempt(self, cur, attempt_id: int) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(?::BIGINT)", [attempt_id])

    def _insert_new(self, cur, table: str, columns: str, values: list, key: dict[str, object]) -> bool:
        marks = ", ".join(["?"] * len(values))
        return cur.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT DO NOTHING RETURNING 1",
                           values).fetchone() is not None

    def query(self, sql: str, params: Iterable | None = None):
        """DuckDB SQL over a copy of the records that includes every write committed before the call."""
        return self._reports.fresh().execute(sql, list(params or []))

    def refresh_derived(self, write: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        """Rewrite derived tables in the report copy (they are rebuilt from records, never stored in PostgreSQL)."""
        with self._reports.derived() as cur:
            write(cur)

    def close(self) -> None:
        self._pool.close()
        self._reports.close()
