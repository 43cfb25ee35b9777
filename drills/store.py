"""The attempt store: candidates, attempts and everything they lock in, kept in DuckDB (or PostgreSQL).

StoreCore holds the SQL once; AttemptStore is the embedded DuckDB file, drills.store_pg the server.

Rows are never updated in place: a change of mind is a new row, and the latest one wins.
Times are UNIX seconds (DOUBLE) so that clocks are easy to inject and compare.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import threading
import time
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import duckdb

from drills.accounts import AccountsStore, new_resume_code, resume_code_hash  # noqa: F401 - re-exported
from drills.live_store import LIVE_MIGRATIONS, LiveStore
from drills.records import (  # noqa: F401 - the store's record types, re-exported for its callers
    ANSWER_COLUMNS, AnswerEntry, Attempt, AttemptFinished, Candidate, Event, EventKind, LockedAnswer, RevealEntry,
    ReviewEntry, ReviewState, RubricScore)

DEFAULT_DB = Path(__file__).resolve().parent.parent / "data" / "faultlines.duckdb"
DB_ENV = "FAULTLINES_DB"


def database_path() -> str:
    """The one setting for where the store lives: FAULTLINES_DB, else data/faultlines.duckdb.

    A value starting with postgresql:// or postgres:// names a PostgreSQL database (see open_store).
    """
    return os.environ.get(DB_ENV) or str(DEFAULT_DB)


# Numbered migrations, applied in order at start-up; never edit one that has shipped.
# No FOREIGN KEY clauses: in DuckDB they tripled the cost of a lock-in commit, and every
# child row is written by AttemptStore for an attempt it has just looked up.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, """
    CREATE SEQUENCE IF NOT EXISTS seq_ids START 1;
    CREATE TABLE candidates (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        handle VARCHAR NOT NULL,
        cohort VARCHAR NOT NULL DEFAULT '',
        created_at DOUBLE NOT NULL,
        UNIQUE (handle, cohort)
    );
    CREATE TABLE attempts (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        token VARCHAR NOT NULL UNIQUE,
        candidate_id BIGINT NOT NULL,
        drill_id VARCHAR NOT NULL,
        seed BIGINT NOT NULL,
        time_box_s DOUBLE NOT NULL,
        started_at DOUBLE NOT NULL
    );
    CREATE TABLE answers (
        attempt_id BIGINT NOT NULL,
        question_id VARCHAR NOT NULL,
        part_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        value DOUBLE,
        low DOUBLE,
        high DOUBLE,
        choice VARCHAR,
        notes VARCHAR,
        skipped BOOLEAN NOT NULL DEFAULT FALSE,
        locked_at DOUBLE NOT NULL,
        PRIMARY KEY (attempt_id, question_id)
    );
    CREATE TABLE reveals (
        attempt_id BIGINT NOT NULL,
        part_id VARCHAR NOT NULL,
        section VARCHAR NOT NULL,
        revealed_at DOUBLE NOT NULL,
        PRIMARY KEY (attempt_id, part_id, section)
    );
    CREATE TABLE rubric_scores (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        attempt_id BIGINT NOT NULL,
        skill_id VARCHAR NOT NULL,
        level VARCHAR NOT NULL CHECK (level IN ('strong', 'ok', 'weak')),
        scorer VARCHAR NOT NULL CHECK (scorer IN ('self', 'instructor')),
        scorer_name VARCHAR NOT NULL,
        reason VARCHAR NOT NULL DEFAULT '',
        scored_at DOUBLE NOT NULL
    );
    CREATE TABLE note_ratings (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        attempt_id BIGINT NOT NULL,
        question_id VARCHAR NOT NULL,
        rating VARCHAR NOT NULL CHECK (rating IN ('full', 'partial', 'missed')),
        rated_at DOUBLE NOT NULL
    );
    CREATE TABLE time_grants (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        attempt_id BIGINT NOT NULL,
        seconds DOUBLE NOT NULL,
        granted_by VARCHAR NOT NULL,
        reason VARCHAR NOT NULL DEFAULT '',
        granted_at DOUBLE NOT NULL
    );
    CREATE TABLE attempt_events (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        attempt_id BIGINT NOT NULL,
        happened_at DOUBLE NOT NULL,
        kind VARCHAR NOT NULL,
        part_id VARCHAR,
        detail VARCHAR NOT NULL DEFAULT '{}'
    );
    CREATE INDEX idx_events_attempt ON attempt_events (attempt_id);
    CREATE INDEX idx_scores_attempt ON rubric_scores (attempt_id);
    """),
    # Derived, never a record: per attempt and grading key, what the instructor board sums from a
    # million answers. drills.reports.tallies.refresh_tallies rebuilds the rows of attempts that gained
    # answers, scores or ratings since its last run (those tables are append-only; tally_marks says
    # where it stopped). No primary key: a refresh deletes and re-inserts rows in one transaction.
    (2, """
    CREATE TABLE attempt_tallies (
        key_id VARCHAR NOT NULL,
        attempt_id BIGINT NOT NULL,
        answer_rows BIGINT NOT NULL,
        score_rows BIGINT NOT NULL,
        rating_rows BIGINT NOT NULL,
        earned DOUBLE NOT NULL,
        answered BIGINT NOT NULL,
        ranges BIGINT NOT NULL,
        hits BIGINT NOT NULL,
        last_at DOUBLE,
        strong BIGINT NOT NULL,
        overridden BIGINT NOT NULL
    );
    CREATE TABLE tally_marks (
        key_id VARCHAR PRIMARY KEY,
        answer_rows BIGINT NOT NULL,
        score_rows BIGINT NOT NULL,
        rating_rows BIGINT NOT NULL,
        refreshed_at DOUBLE NOT NULL
    );
    """),
    # Derived: each grading key the board has used, written once per key id. Reports join these
    # instead of binding the key as hundreds of parameters in every query.
    (3, """
    CREATE TABLE grading_keys (
        key_id VARCHAR NOT NULL,
        question_id VARCHAR NOT NULL,
        part_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        truth DOUBLE,
        band DOUBLE,
        right_choice VARCHAR,
        position BIGINT NOT NULL
    );
    CREATE TABLE grading_key_skills (
        key_id VARCHAR NOT NULL,
        question_id VARCHAR NOT NULL,
        skill_id VARCHAR NOT NULL
    );
    """),
    # Where the last tally refresh stopped in each append-only table (the next rowid), so the next one
    # reads only the rows added since instead of counting every attempt's answers again.
    (4, """
    ALTER TABLE tally_marks ADD COLUMN answer_next BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE tally_marks ADD COLUMN score_next BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE tally_marks ADD COLUMN rating_next BIGINT NOT NULL DEFAULT 0;
    """),
    # A personal resume code per handle, kept only as a hash: with the handle it opens the candidate's
    # history from any browser (no passwords). Written once; never changed.
    (5, """
    CREATE TABLE resume_codes (
        handle VARCHAR PRIMARY KEY,
        code_hash VARCHAR NOT NULL,
        created_at DOUBLE NOT NULL
    );
    """),
    # Which seeded version of the drill's numbers an attempt drew; attempts from before variants
    # existed saw the numbers as written, which is variant 0.
    (6, """
    ALTER TABLE attempts ADD COLUMN variant INTEGER NOT NULL DEFAULT 0;
    """),
    # Derived: a grading key holds one set of rows per variant, and answers join the rows of their
    # attempt's variant.
    (7, """
    ALTER TABLE grading_keys ADD COLUMN variant INTEGER NOT NULL DEFAULT 0;
    """),
    # Spaced review, append-only: one row per review of a (handle, base drill, question) item, holding the
    # FSRS card as it stands after that review; the latest row per item is its state. A row written by a
    # finished attempt names it, once per question, so scheduling an attempt twice adds nothing.
    (8, """
    CREATE TABLE review_log (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        handle VARCHAR NOT NULL,
        drill_id VARCHAR NOT NULL,
        question_id VARCHAR NOT NULL,
        attempt_id BIGINT,
        variant INTEGER NOT NULL,
        guess DOUBLE,
        rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
        reason VARCHAR NOT NULL DEFAULT '',
        card VARCHAR NOT NULL,
        due_at DOUBLE NOT NULL,
        reviewed_at DOUBLE NOT NULL,
        UNIQUE (attempt_id, question_id)
    );
    CREATE INDEX idx_review_item ON review_log (handle, drill_id, question_id);
    """),
    # The share of the mark an answer gave up to graded hints opened before it was locked in: fixed at
    # the lock-in, so a hint opened afterwards can never change a grade.
    (9, """
    ALTER TABLE answers ADD COLUMN hint_cost DOUBLE NOT NULL DEFAULT 0;
    """),
    # Accounts and classes. An account is a provider's (issuer, subject); each class it joins, and its
    # practice outside any class, is a candidates row that names it. Resume codes belong to one handle in
    # one cohort (two people called alex in two cohorts are two people); the old per-handle codes carry over
    # to every cohort that handle used. access_tries keeps every guess at a secret, so a throttle counts
    # them across processes. Classes name their owner and other instructors by e-mail.
    (10, """
    CREATE TABLE accounts (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        issuer VARCHAR NOT NULL,
        subject VARCHAR NOT NULL,
        email VARCHAR NOT NULL DEFAULT '',
        name VARCHAR NOT NULL DEFAULT '',
        created_at DOUBLE NOT NULL,
        UNIQUE (issuer, subject)
    );
    ALTER TABLE candidates ADD COLUMN account_id BIGINT;
    CREATE TABLE candidate_codes (
        candidate_id BIGINT PRIMARY KEY,
        code_hash VARCHAR NOT NULL,
        created_at DOUBLE NOT NULL
    );
    INSERT INTO candidate_codes (candidate_id, code_hash, created_at)
        SELECT c.id, r.code_hash, r.created_at FROM candidates c JOIN resume_codes r ON r.handle = c.handle;
    CREATE TABLE classes (
        cohort VARCHAR PRIMARY KEY,
        title VARCHAR NOT NULL,
        join_hash VARCHAR NOT NULL UNIQUE,
        owner_email VARCHAR NOT NULL,
        requires_sign_in BOOLEAN NOT NULL DEFAULT TRUE,
        created_at DOUBLE NOT NULL
    );
    CREATE TABLE class_instructors (
        cohort VARCHAR NOT NULL,
        email VARCHAR NOT NULL,
        added_by VARCHAR NOT NULL,
        added_at DOUBLE NOT NULL,
        PRIMARY KEY (cohort, email)
    );
    CREATE TABLE access_tries (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        kind VARCHAR NOT NULL,
        target VARCHAR NOT NULL,
        ok BOOLEAN NOT NULL,
        who VARCHAR NOT NULL DEFAULT '',
        tried_at DOUBLE NOT NULL
    );
    CREATE INDEX idx_access_target ON access_tries (kind, target, tried_at);
    CREATE INDEX idx_candidates_account ON candidates (account_id);
    """),
    # One throwaway row that check_writes() rewrites: whether the store takes a commit now (after an outage),
    # asked without touching a record.
    (17, """
    CREATE TABLE store_checks (checked_at DOUBLE NOT NULL);
    """),
) + LIVE_MIGRATIONS   # 20-22: live sessions of a class (drills.live_store)


_ANSWER_COLUMNS = ANSWER_COLUMNS
_ATTEMPT_SELECT = """
    SELECT a.id, a.token, a.candidate_id, c.handle, c.cohort, a.drill_id, a.seed, a.time_box_s, a.started_at,
           COALESCE((SELECT SUM(g.seconds) FROM time_grants g WHERE g.attempt_id = a.id), 0),
           (SELECT MIN(e.happened_at) FROM attempt_events e WHERE e.attempt_id = a.id AND e.kind = 'finished'),
           a.variant, c.account_id
    FROM attempts a JOIN candidates c ON c.id = a.candidate_id
"""


_FINISHED_SQL = "SELECT 1 FROM attempt_events WHERE attempt_id = ? AND kind = 'finished' LIMIT 1"


def _refuse_if_finished(cur, attempt_id: int) -> None:
    """Checked inside the writing transaction, so a lock-in racing a Finish click cannot slip past it."""
    if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is not None:
        raise AttemptFinished(attempt_id)


_BATCH_ROWS = 500   # rows per multi-row statement in the batch writes
_MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE NOT NULL)"


def _placeholders(rows: int, columns: int) -> str:
    return ", ".join(["(" + ", ".join(["?"] * columns) + ")"] * rows)


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def apply_migrations(cur, now: float, migrations: Iterable[tuple[int, str]] = MIGRATIONS,
                     dialect: Callable[[str], str] = str) -> None:
    """Run the `migrations` that `cur`'s database has not recorded yet, each in its own transaction.

    `dialect` spells the bookkeeping table for the backend. The caller makes sure no other writer
    migrates at the same time (a thread lock, an advisory lock).
    """
    cur.execute(dialect(_MIGRATIONS_TABLE))
    done = {row[0] for row in cur.execute("SELECT version FROM schema_migrations").fetchall()}
    for version, sql in migrations:
        if version in done:
            continue
        cur.execute("BEGIN TRANSACTION")
        try:
            cur.execute(sql)
            cur.execute("INSERT INTO schema_migrations VALUES (?, ?)", [version, now])
            cur.execute("COMMIT")
        except Exception:
            cur.execute("ROLLBACK")
            raise


def postgres_dialect(sql: str) -> str:
    """DuckDB DDL as PostgreSQL reads it: the only type spelled differently is DOUBLE."""
    return re.sub(r"\bDOUBLE\b", "DOUBLE PRECISION", sql)


def is_postgres_target(target: str) -> bool:
    """Whether a FAULTLINES_DB value is a PostgreSQL URL rather than a DuckDB file."""
    return target.startswith(("postgresql://", "postgres://"))


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


_REVIEW_COLUMNS = "handle, drill_id, question_id, attempt_id, variant, guess, rating, reason, card, due_at, reviewed_at"
_REVIEW_SELECT = """
    SELECT r.id, r.handle, r.drill_id, r.question_id, r.attempt_id, r.variant, r.guess, r.rating, r.reason, r.card,
           r.due_at, r.reviewed_at,
           (SELECT COUNT(*) FROM review_log n
            WHERE n.handle = r.handle AND n.drill_id = r.drill_id AND n.question_id = r.question_id)
    FROM review_log r
    WHERE r.handle = ? AND r.id = (SELECT MAX(l.id) FROM review_log l
                                   WHERE l.handle = r.handle AND l.drill_id = r.drill_id AND l.question_id = r.question_id)
"""
_LATEST_CARD = ("SELECT id, card FROM review_log WHERE handle = ? AND drill_id = ? AND question_id = ? "
                "ORDER BY id DESC LIMIT 1")

# The scheduler, passed in by drills.review so the store needs no FSRS: (card JSON or None for a new item,
# rating, when) -> (the card JSON after that review, when it is due next).
Advance = Callable[[str | None, int, float], tuple[str, float]]


class StoreCore(AccountsStore, LiveStore):
    """Every public method of the attempt store, written once in DuckDB-flavoured SQL (`?` placeholders).

    A backend supplies the plumbing: `_transaction()` (a cursor whose writes commit together),
    `_reading()` (a cursor for one read), `_hold_attempt` (serialise writers of one attempt),
    `_insert_new` (insert unless the key is taken), `query`, `refresh_derived` and `close`.
    """

    path: str
    clock: Callable[[], float]

    # -- plumbing a backend provides -------------------------------------------------
    def _transaction(self):
        raise NotImplementedError

    def _reading(self):
        raise NotImplementedError

    def _hold_attempt(self, cur, attempt_id: int) -> None:
        """Keep other writers of this attempt out until the transaction ends."""

    def _insert_new(self, cur, table: str, columns: str, values: list, key: dict[str, object]) -> bool:
        raise NotImplementedError

    def query(self, sql: str, params: Iterable | None = None):
        raise NotImplementedError

    def refresh_derived(self, write: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _one(self, sql: str, params: Iterable = ()):
        with self._reading() as cur:
            return cur.execute(sql, list(params)).fetchone()

    def _all(self, sql: str, params: Iterable = ()) -> list:
        with self._reading() as cur:
            return cur.execute(sql, list(params)).fetchall()

    def _guard(self, cur, attempt_id: int) -> None:
        self._hold_attempt(cur, attempt_id)
        _refuse_if_finished(cur, attempt_id)

    def schema_version(self) -> int:
        return self._one("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0]

    def check_writes(self) -> None:
        """Commit one throwaway write, as a lock-in would: raises when the store cannot take one now."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM store_checks")
            cur.execute("INSERT INTO store_checks (checked_at) VALUES (?)", [self.clock()])

    # -- candidates and attempts ---------------------------------------------------
    def ensure_candidate(self, handle: str, cohort: str = "") -> Candidate:
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO candidates (handle, cohort, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [handle, cohort, self.clock()],
            )
            row = cur.execute("SELECT id, handle, cohort FROM candidates WHERE handle = ? AND cohort = ?",
                              [handle, cohort]).fetchone()
        return Candidate(*row)

    def start_attempt(self, drill_id: str, handle: str, cohort: str, time_box_s: float,
                      *, seed: int | None = None, variant: int = 0) -> Attempt:
        return self.start_attempt_for(self.ensure_candidate(handle, cohort), drill_id, time_box_s,
                                      seed=seed, variant=variant)

    def start_attempt_for(self, candidate: Candidate, drill_id: str, time_box_s: float,
                          *, seed: int | None = None, variant: int = 0) -> Attempt:
        """A new attempt of a candidate row already chosen (an account's in its class, or a claimed handle)."""
        with self._transaction() as cur:
            token = self._insert_attempt(cur, candidate.id, drill_id, time_box_s, seed=seed, variant=variant)[1]
        return self.attempt_by_token(token)

    def _insert_attempt(self, cur, candidate_id: int, drill_id: str, time_box_s: float, *, seed: int | None,
                        variant: int) -> tuple[int, str]:
        """Insert an attempt and its 'started' event in the caller's transaction: (its id, its token)."""
        token = secrets.token_urlsafe(18)
        seed = seed if seed is not None else secrets.randbelow(2**31)
        now = self.clock()
        row = cur.execute(
            "INSERT INTO attempts (token, candidate_id, drill_id, seed, time_box_s, started_at, variant) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            [token, candidate_id, drill_id, seed, time_box_s, now, variant],
        ).fetchone()
        cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, 'started', '{}')",
                    [row[0], now])
        return row[0], token

    def attempt_by_token(self, token: str) -> Attempt | None:
        if not token or len(token) > 64:
            return None
        row = self._one(_ATTEMPT_SELECT + " WHERE a.token = ?", [token])
        return Attempt(*row) if row else None

    def attempt_by_id(self, attempt_id: int) -> Attempt | None:
        row = self._one(_ATTEMPT_SELECT + " WHERE a.id = ?", [attempt_id])
        return Attempt(*row) if row else None

    def attempts(self, *, drill_id: str | None = None, cohort: str | None = None,
                 since: float | None = None, until: float | None = None,
                 handle: str | None = None) -> list[Attempt]:
        clauses, params = [], []
        for clause, value in (("a.drill_id = ?", drill_id), ("c.cohort = ?", cohort),
                              ("a.started_at >= ?", since), ("a.started_at < ?", until), ("c.handle = ?", handle)):
            if value is not None:
                clauses.append(clause)
                params.append(value)
        return self._attempts_where(" AND ".join(clauses), params)

    def _attempts_where(self, where: str, params: list) -> list[Attempt]:
        rows = self._all(_ATTEMPT_SELECT + (f" WHERE {where}" if where else "") + " ORDER BY a.started_at, a.id",
                         params)
        return [Attempt(*r) for r in rows]

    # -- lock-ins --------------------------------------------------------------------
    def lock_answer(self, attempt_id: int, question_id: str, part_id: str, kind: str, *,
                    value: float | None = None, low: float | None = None, high: float | None = None,
                    choice: str | None = None, notes: str | None = None,
                    skipped: bool = False, hint_costs: Sequence[float] = ()) -> tuple[LockedAnswer, bool]:
        """Commit one answer. Returns (the stored answer, whether this call created it).

        Locking the same question again returns the first answer unchanged. A finished attempt
        raises AttemptFinished and stores nothing. `hint_costs` are the question's hints' prices in
        order: the answer keeps the sum for the hints opened by now, read in the same transaction.
        """
        now = self.clock()
        with self._transaction() as cur:
            self._guard(cur, attempt_id)
            self._refuse_if_live_closed(cur, attempt_id, question_id)   # drills.live_store
            opened = self._hints_opened(cur, attempt_id).get(question_id, set()) if hint_costs else set()
            cost = min(1.0, sum(c for i, c in enumerate(hint_costs) if i in opened))
            fields = [attempt_id, question_id, part_id, kind, value, low, high, choice, notes, skipped, now, cost]
            created = self._insert_new(cur, "answers", _ANSWER_COLUMNS, fields,
                                       {"attempt_id": attempt_id, "question_id": question_id})
            if created:
                cur.execute(
                    "INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) VALUES (?, ?, ?, ?, ?)",
                    [attempt_id, now, "skipped" if skipped else "locked", part_id,
                     json.dumps({"question": question_id})],
                )
                row = fields
            else:   # someone locked it first (this process or another): theirs is the answer
                row = cur.execute(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE attempt_id = ? AND question_id = ?",
                                  [attempt_id, question_id]).fetchone()
        return LockedAnswer(*row), created

    def lock_answers(self, attempt_id: int, entries: Iterable[AnswerEntry]) -> list[tuple[LockedAnswer, bool]]:
        """Commit many answers of one attempt in one transaction, as lock_answer would one by one.

        The first answer to a question wins (stored earlier or earlier in `entries`); each answer
        created logs one 'locked' or 'skipped' event, in the order given. Returns, per entry, the
        stored answer and whether this call created it. A finished attempt raises AttemptFinished.
        """
        entries = list(entries)
        if not entries:
            return []
        now = self.clock()
        first: dict[str, AnswerEntry] = {}
        for entry in entries:
            first.setdefault(entry.question_id, entry)
        fresh = list(first.values())
        with self._transaction() as cur:
            self._guard(cur, attempt_id)
            created: set[str] = set()
            for chunk in _chunks(fresh, _BATCH_ROWS):
                rows = [[attempt_id, e.question_id, e.part_id, e.kind, e.value, e.low, e.high, e.choice, e.notes,
                         e.skipped, now if e.at is None else e.at, e.hint_cost] for e in chunk]
                created.update(r[0] for r in cur.execute(
                    f"INSERT INTO answers ({_ANSWER_COLUMNS}) VALUES {_placeholders(len(rows), 12)} "
                    "ON CONFLICT DO NOTHING RETURNING question_id", [x for row in rows for x in row]).fetchall())
            events = [[attempt_id, now if e.at is None else e.at, "skipped" if e.skipped else "locked", e.part_id,
                       json.dumps({"question": e.question_id})] for e in fresh if e.question_id in created]
            for chunk in _chunks(events, _BATCH_ROWS):
                # One statement, rows in the given order: event ids follow the order of the lock-ins.
                cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) VALUES "
                            f"{_placeholders(len(chunk), 5)}", [x for row in chunk for x in row])
            stored = {}
            for chunk in _chunks(list(first), _BATCH_ROWS):
                stored.update((r[1], LockedAnswer(*r)) for r in cur.execute(
                    f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE attempt_id = ? AND question_id IN "
                    f"({', '.join(['?'] * len(chunk))})", [attempt_id, *chunk]).fetchall())
        results, seen = [], set()
        for entry in entries:
            qid = entry.question_id
            results.append((stored[qid], qid in created and qid not in seen))
            seen.add(qid)
        return results

    def answers(self, attempt_id: int) -> dict[str, LockedAnswer]:
        rows = self._all(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE attempt_id = ? ORDER BY locked_at",
                         [attempt_id])
        return {r[1]: LockedAnswer(*r) for r in rows}

    # -- reveals, ratings, rubric ----------------------------------------------------
    def record_reveal(self, attempt_id: int, part_id: str, section: str) -> bool:
        """Record a reveal the first time it is pressed; a finished attempt (all shown) records nothing."""
        now = self.clock()
        with self._transaction() as cur:
            if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is not None:
                return False
            created = self._insert_new(cur, "reveals", "attempt_id, part_id, section, revealed_at",
                                       [attempt_id, part_id, section, now],
                                       {"attempt_id": attempt_id, "part_id": part_id, "section": section})
            if created:
                cur.execute(
                    "INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) "
                    "VALUES (?, ?, 'revealed', ?, ?)",
                    [attempt_id, now, part_id, json.dumps({"section": section})],
                )
        return created

    def record_reveals(self, attempt_id: int, entries: Iterable[RevealEntry]) -> list[bool]:
        """Commit many reveals of one attempt in one transaction, as record_reveal would one by one.

        Returns, per entry, whether this call created it; each one created logs one 'revealed' event.
        """
        entries = list(entries)
        if not entries:
            return []
        now = self.clock()
        first: dict[tuple[str, str], RevealEntry] = {}
        for entry in entries:
            first.setdefault((entry.part_id, entry.section), entry)
        fresh = list(first.values())
        with self._transaction() as cur:
            if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is not None:
                return [False] * len(entries)
            created: set[tuple[str, str]] = set()
            for chunk in _chunks(fresh, _BATCH_ROWS):
                rows = [[attempt_id, e.part_id, e.section, now if e.at is None else e.at] for e in chunk]
                created.update((p, sec) for p, sec in cur.execute(
                    f"INSERT INTO reveals VALUES {_placeholders(len(rows), 4)} ON CONFLICT DO NOTHING "
                    "RETURNING part_id, section", [x for row in rows for x in row]).fetchall())
            events = [[attempt_id, now if e.at is None else e.at, e.part_id, json.dumps({"section": e.section})]
                      for e in fresh if (e.part_id, e.section) in created]
            for chunk in _chunks(events, _BATCH_ROWS):
                cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) VALUES "
                            + ", ".join(["(?, ?, 'revealed', ?, ?)"] * len(chunk)), [x for row in chunk for x in row])
        results, seen = [], set()
        for entry in entries:
            pair = (entry.part_id, entry.section)
            results.append(pair in created and pair not in seen)
            seen.add(pair)
        return results

    def reveals(self, attempt_id: int) -> dict[tuple[str, str], float]:
        rows = self._all("SELECT part_id, section, revealed_at FROM reveals WHERE attempt_id = ?", [attempt_id])
        return {(p, s): at for p, s, at in rows}

    def rate_note(self, attempt_id: int, question_id: str, rating: str) -> None:
        """The candidate's own rating of a notes answer; refused (AttemptFinished) once the attempt is finished."""
        with self._transaction() as cur:
            self._guard(cur, attempt_id)
            cur.execute(
                "INSERT INTO note_ratings (attempt_id, question_id, rating, rated_at) VALUES (?, ?, ?, ?)",
                [attempt_id, question_id, rating, self.clock()],
            )

    def note_ratings(self, attempt_id: int) -> dict[str, str]:
        rows = self._all("SELECT question_id, rating FROM note_ratings WHERE attempt_id = ? ORDER BY rated_at, id",
                         [attempt_id])
        return dict(rows)  # later rows overwrite earlier ones: the latest rating wins

    def add_rubric_score(self, attempt_id: int, skill_id: str, level: str, *, scorer: str = "self",
                         scorer_name: str = "", reason: str = "") -> None:
        """Append a rubric score. Self-scores are refused (AttemptFinished) once the attempt is finished;
        an instructor's override is what a finished attempt is for."""
        now = self.clock()
        with self._transaction() as cur:
            if scorer == "self":
                self._guard(cur, attempt_id)
            cur.execute(
                "INSERT INTO rubric_scores (attempt_id, skill_id, level, scorer, scorer_name, reason, scored_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [attempt_id, skill_id, level, scorer, scorer_name, reason, now],
            )
            cur.execute(
                "INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, 'scored', ?)",
                [attempt_id, now, json.dumps({"skill": skill_id, "level": level, "scorer": scorer})],
            )

    def rubric_history(self, attempt_id: int) -> list[RubricScore]:
        rows = self._all(
            "SELECT skill_id, level, scorer, scorer_name, reason, scored_at FROM rubric_scores "
            "WHERE attempt_id = ? ORDER BY scored_at, id", [attempt_id])
        return [RubricScore(*r) for r in rows]

    # -- time and events -------------------------------------------------------------
    def grant_time(self, attempt_id: int, seconds: float, *, granted_by: str, reason: str = "") -> None:
        now = self.clock()
        with self._transaction() as cur:
            cur.execute(
                "INSERT INTO time_grants (attempt_id, seconds, granted_by, reason, granted_at) VALUES (?, ?, ?, ?, ?)",
                [attempt_id, seconds, granted_by, reason, now],
            )
            cur.execute(
                "INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, 'extra_time', ?)",
                [attempt_id, now, json.dumps({"seconds": seconds, "by": granted_by})],
            )

    # -- graded hints ------------------------------------------------------------------
    def open_hint(self, attempt_id: int, question_id: str, part_id: str, index: int) -> bool:
        """Record that hint `index` of a question was opened; True the first time, before its lock-in.

        Opening it again, or after the question is locked, records nothing (and so costs nothing).
        A finished attempt raises AttemptFinished.
        """
        with self._transaction() as cur:
            self._guard(cur, attempt_id)
            if index in self._hints_opened(cur, attempt_id).get(question_id, set()):
                return False
            if cur.execute("SELECT 1 FROM answers WHERE attempt_id = ? AND question_id = ?",
                           [attempt_id, question_id]).fetchone() is not None:
                return False
            cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) "
                        "VALUES (?, ?, ?, ?, ?)", [attempt_id, self.clock(), EventKind.HINT_OPENED.value, part_id,
                                                   json.dumps({"question": question_id, "hint": index})])
        return True

    def hints_opened(self, attempt_id: int) -> dict[str, set[int]]:
        """question id -> the indexes of its hints opened so far."""
        with self._reading() as cur:
            return self._hints_opened(cur, attempt_id)

    @staticmethod
    def _hints_opened(cur, attempt_id: int) -> dict[str, set[int]]:
        opened: dict[str, set[int]] = {}
        for (detail,) in cur.execute("SELECT detail FROM attempt_events WHERE attempt_id = ? AND kind = ?",
                                     [attempt_id, EventKind.HINT_OPENED.value]).fetchall():
            data = json.loads(detail)
            opened.setdefault(data["question"], set()).add(int(data["hint"]))
        return opened

    def log_event(self, attempt_id: int, kind: str, part_id: str | None = None,
                  detail: Mapping[str, object] | None = None) -> bool:
        """Append a candidate's event; a finished attempt gains none (False), only instructor actions."""
        with self._transaction() as cur:
            if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is not None:
                return False
            cur.execute(
                "INSERT INTO attempt_events (attempt_id, happened_at, kind, part_id, detail) VALUES (?, ?, ?, ?, ?)",
                [attempt_id, self.clock(), kind, part_id, json.dumps(dict(detail or {}))],
            )
        return True

    def events(self, attempt_id: int) -> list[Event]:
        rows = self._all(
            "SELECT happened_at, kind, part_id, detail FROM attempt_events WHERE attempt_id = ? "
            "ORDER BY happened_at, id", [attempt_id])
        return [Event(at, kind, part, json.loads(detail)) for at, kind, part, detail in rows]

    def last_opened_part(self, attempt_id: int) -> str | None:
        """The part the candidate opened last, where a resumed attempt picks up."""
        row = self._one(
            "SELECT part_id FROM attempt_events WHERE attempt_id = ? AND kind = 'opened' "
            "ORDER BY happened_at DESC, id DESC LIMIT 1", [attempt_id])
        return row[0] if row else None

    def finish(self, attempt_id: int) -> None:
        """Mark the attempt finished once; a second call changes nothing."""
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is None:
                cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, 'finished', '{}')",
                            [attempt_id, self.clock()])

    # -- spaced review -----------------------------------------------------------------
    def schedule_reviews(self, attempt_id: int, handle: str, entries: Iterable[ReviewEntry], advance: Advance) -> int:
        """Put a finished attempt's review items on `handle`'s schedule, the attempt counting as one review of each.

        An item the attempt already scheduled is left alone, so finishing twice or a reload adds nothing.
        Returns how many rows were added.
        """
        entries = list(entries)
        if not entries:
            return 0
        now = self.clock()
        added = 0
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            done = {row[0] for row in cur.execute("SELECT question_id FROM review_log WHERE attempt_id = ?",
                                                  [attempt_id]).fetchall()}
            for entry in entries:
                if entry.question_id in done:
                    continue
                done.add(entry.question_id)
                at = now if entry.at is None else entry.at
                latest = cur.execute(_LATEST_CARD, [handle, entry.drill_id, entry.question_id]).fetchone()
                card, due_at = advance(latest[1] if latest else None, entry.rating, at)
                cur.execute(f"INSERT INTO review_log ({_REVIEW_COLUMNS}) VALUES ({', '.join(['?'] * 11)})",
                            [handle, entry.drill_id, entry.question_id, attempt_id, entry.variant, entry.guess,
                             entry.rating, entry.reason, card, due_at, at])
                added += 1
        return added

    def record_review(self, handle: str, drill_id: str, question_id: str, *, based_on: int, variant: int,
                      guess: float | None, rating: int, advance: Advance) -> ReviewState | None:
        """Append one review answered on the review page; the card moves on from the item's latest row.

        `based_on` is the id of the row the candidate was shown: if the item has moved on since (another tab
        reviewed it first), nothing is stored and None comes back.
        """
        now = self.clock()
        with self._transaction() as cur:
            # Row ids come from the one sequence attempts use, so no attempt shares this lock key.
            self._hold_attempt(cur, based_on)
            latest = cur.execute(_LATEST_CARD, [handle, drill_id, question_id]).fetchone()
            if latest is None or latest[0] != based_on:
                return None
            card, due_at = advance(latest[1], rating, now)
            new_id = cur.execute(
                f"INSERT INTO review_log ({_REVIEW_COLUMNS}) VALUES ({', '.join(['?'] * 11)}) RETURNING id",
                [handle, drill_id, question_id, None, variant, guess, rating, "", card, due_at, now]).fetchone()[0]
        return next(s for s in self.review_items(handle) if s.id == new_id)

    def review_items(self, handle: str) -> list[ReviewState]:
        """Every item on `handle`'s review schedule as its latest row leaves it, soonest due first."""
        rows = self._all(_REVIEW_SELECT + " ORDER BY r.due_at, r.id", [handle])
        return [ReviewState(*row) for row in rows]

    def due_reviews(self, handle: str, at: float | None = None) -> list[ReviewState]:
        """The items due by `at` (default: now), longest overdue first."""
        at = self.clock() if at is None else at
        rows = self._all(_REVIEW_SELECT + " AND r.due_at <= ? ORDER BY r.due_at, r.id", [handle, at])
        return [ReviewState(*row) for row in rows]

    def count_due(self, handle: str, at: float | None = None) -> int:
        at = self.clock() if at is None else at
        return int(self._one(f"SELECT COUNT(*) FROM ({_REVIEW_SELECT} AND r.due_at <= ?) due", [handle, at])[0])


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
