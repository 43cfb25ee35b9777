"""The attempt store on a PostgreSQL server, for several app processes sharing one database.

The SQL is StoreCore's (drills.store.core); this module is the plumbing. Writes go to PostgreSQL through a
small connection pool, writers of one attempt queue on an advisory lock, and instructor reports run as
DuckDB SQL over a copy (ReportCopy).
"""
from __future__ import annotations

import functools
import io
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.csv as pa_csv
from psycopg import sql
from psycopg_pool import ConnectionPool

from drills.store.core import StoreCore
from drills.store.duckdb import ThreadCursors, duckdb_transaction
from drills.store.migrations import PG_MIGRATIONS, apply_migrations, postgres_dialect
from drills.store.pg_pool import (POOL_MAX, POOL_MIN, POOL_TIMEOUT_S, PULL_DEADLINE_S, RECONNECT_GIVE_UP_S,
                                  StoreProbe, StorePool, bounded_conninfo)

# pg_advisory_lock's two-key form: a space of its own, apart from the one-key locks held per attempt.
_MIGRATION_LOCK = (0x464C, 1)
_THROTTLE_LOCK_SPACE = 0x464D   # and the two after it
LIVE_CHANNEL = "faultlines_live"   # NOTIFY payload: the id of the live session that moved
# The record tables a report copy holds, each pulled in the order its rows were added (by id, from one
# sequence; answers and reveals, which have none, by their time), so rowid grows as rows reach the copy.
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
    "graded_seeds": "attempt_id",
}

# The tables that only ever gain rows, and in PostgreSQL the column that names the transaction which added
# each row (pg_current_xact_id(): 64 bits, never wraps). A pull after the first copies the rows its snapshot
# sees and the last pull's did not. Row ids alone cannot tell: ids are handed out at insert and commit in
# any order (a lock-in holding id 7 can commit after one with id 8 was copied), but a transaction is
# either visible in the last snapshot or not. Not a numbered migration: the DuckDB store has no use for
# it, and both stores' version numbers agree.
APPENDED_TABLES = tuple(table for table in RECORD_ORDER if table != "schema_migrations")
ADDED_BY = "added_by_xact"
# What a pull's snapshot is measured against: the same server run and database as the last pull's, or
# else (a restart, a database dropped and made again) a full copy rather than trust transaction ids.
_PULL_VERSION = ("SELECT pg_current_snapshot()::text, pg_postmaster_start_time()::text || ' ' || "
                 "(SELECT oid FROM pg_database WHERE datname = current_database())::text")
# Rows this snapshot sees whose transaction it does not: only a restore can make them (pg_dump copies
# the column, and a younger server has not reached those ids yet). Pulls after a full one that saw any
# would copy them again, so pulls stay full until a store's start-up restamps them (_stamp_added_rows).
_FOREIGN_STAMPS = {table: f"{ADDED_BY} >= pg_snapshot_xmin(pg_current_snapshot()) "
                          f"AND NOT pg_visible_in_snapshot({ADDED_BY}, pg_current_snapshot())"
                   for table in APPENDED_TABLES}
_STAMPS_SOUND = "SELECT NOT (" + " OR ".join(f"EXISTS (SELECT 1 FROM {table} WHERE {where})"
                                            for table, where in _FOREIGN_STAMPS.items()) + ")"


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


class ReportCopy:
    """An in-memory DuckDB holding the record tables as of one PostgreSQL snapshot, plus derived tables.

    The data version is the text of pg_current_snapshot(): equal texts see exactly the same committed
    transactions, so one cheap query per report call tells whether a write (from any process) landed.
    Then only the rows added since the last snapshot are pulled (APPENDED_TABLES) and appended, past the
    rowids drills.reports.tallies marked, so a tally refresh recounts only the attempts they belong to.
    The first pull, or one after a restart or a new schema migration, copies every row instead and forgets
    the tally marks; the old tallies stay until the next refresh, so a report that races a pull reads
    counts a moment old (as it would on the DuckDB store), never none. Grading keys stay too: they come
    from drill content.
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
        self._origin: str | None = None   # the server run and database the copy came from
        self.pulls = 0        # how many snapshots were pulled (tests check the cache with it)
        self.full_pulls = 0   # how many of them copied every row

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
        with self._pool.connection(within_s=PULL_DEADLINE_S) as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            version, origin = conn.execute(_PULL_VERSION).fetchone()
            migrations = self._copy_out(conn, "schema_migrations")
            since = self._version if origin == self._origin and self._has_migrations(migrations) else None
            tables = {table: self._copy_out(conn, table, since) for table in APPENDED_TABLES}
            if since is None and not conn.execute(_STAMPS_SOUND).fetchone()[0]:
                origin = None   # the next pull copies every row again
        with duckdb_transaction(self.cursor()) as cur:   # readers see the old copy or the new, never half
            if since is None:
                for table, rows in {"schema_migrations": migrations, **tables}.items():
                    cur.register("pulled_rows", rows)
                    cur.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM pulled_rows")
                    cur.unregister("pulled_rows")
                cur.execute("DELETE FROM tally_marks")
            else:
                for table, rows in tables.items():
                    if rows.num_rows:
                        cur.register("pulled_rows", rows)
                        cur.execute(f"INSERT INTO {table} SELECT * FROM pulled_rows")
                        cur.unregister("pulled_rows")
        self._version, self._origin = version, origin
        self.pulls += 1
        self.full_pulls += since is None

    def _has_migrations(self, migrations: pa.Table) -> bool:
        copied = [row[0] for row in self.cursor().execute("SELECT version FROM schema_migrations ORDER BY version")
                  .fetchall()]
        return copied == sorted(migrations.column("version").to_pylist())

    def _copy_out(self, conn: psycopg.Connection, table: str, since: str | None = None) -> pa.Table:
        """The table's rows in the order they were added; with `since` (a snapshot), only those it did not see."""
        schema = self._schemas[table]
        columns = ", ".join(schema.names)
        # The range on the index narrows the scan; the visibility test alone decides.
        added = "" if since is None else (f" WHERE {ADDED_BY} >= pg_snapshot_xmin({{since}}::pg_snapshot) "
                                          f"AND NOT pg_visible_in_snapshot({ADDED_BY}, {{since}}::pg_snapshot)")
        statement = sql.SQL(f"COPY (SELECT {columns} FROM {table}{added} ORDER BY {RECORD_ORDER[table]}) "
                            "TO STDOUT (FORMAT csv)").format(since=sql.Literal(since))
        buffer = io.BytesIO()
        with conn.cursor().copy(statement) as copy:
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


def _stamp_added_rows(conn: psycopg.Connection) -> None:
    """Give each appended table its ADDED_BY column and index, and restamp rows restored from another server.

    Rows already there when the column is added get this transaction's id. Restamping (_FOREIGN_STAMPS)
    is the one update of a record row, and touches only the column the DuckDB copy never holds.
    """
    marked = {row[0] for row in conn.execute(
        "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = %s",
        [ADDED_BY])}
    for table in APPENDED_TABLES:
        if table not in marked:
            with conn.transaction():
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {ADDED_BY} xid8 NOT NULL DEFAULT pg_current_xact_id()")
                conn.execute(f"CREATE INDEX {table}_{ADDED_BY} ON {table} ({ADDED_BY})")
        conn.execute(f"UPDATE {table} SET {ADDED_BY} = DEFAULT WHERE {_FOREIGN_STAMPS[table]}")


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
        self.conninfo = conninfo = bounded_conninfo(url)   # every connection, the LISTEN one's too
        self._migrate(conninfo)
        # StorePool: a connection the server dropped (a restart) is replaced, not handed out.
        self._pool = StorePool(conninfo, min_size=POOL_MIN, max_size=POOL_MAX, kwargs={"autocommit": True},
                               timeout=POOL_TIMEOUT_S, reconnect_timeout=RECONNECT_GIVE_UP_S, open=True,
                               name="faultlines-store")
        self._reports = ReportCopy(self._pool)
        self._probe = StoreProbe(conninfo)   # its own connection: never queued behind busy store calls

    def _migrate(self, conninfo: str) -> None:
        # A plain connection first: an unreachable server fails here at once, not after a pool timeout.
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", _MIGRATION_LOCK)
            try:
                apply_migrations(_PgCursor(conn.cursor()), self.clock(), PG_MIGRATIONS, postgres_dialect)
                _stamp_added_rows(conn)
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

    def _hold_throttle(self, cur, kind: str, keys: tuple[str, str, str]) -> None:
        # Two-key form, apart from the per-attempt locks, one space per count (target, browser, address) taken
        # in that order: tries sharing any count queue, each sees the failures committed before it, so a burst
        # cannot all pass under a count, and locks always taken in one order of spaces cannot deadlock.
        for space, key in enumerate(keys):
            if key:
                cur.execute("SELECT pg_advisory_xact_lock(?, hashtext(?))", [_THROTTLE_LOCK_SPACE + space,
                                                                             f"{kind}:{key}"])

    def _live_notify(self, cur, session_id: int) -> None:
        # Delivered at commit, to every process LISTENing (drills.live_watch), never for a rolled-back move.
        cur.execute("SELECT pg_notify(?, ?)", [LIVE_CHANNEL, str(session_id)])

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

    def probe(self) -> None:
        self._probe()

    def close(self) -> None:
        self._probe.close()
        self._pool.close()
        self._reports.close()
