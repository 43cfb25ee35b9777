"""The attempt store: candidates, attempts and everything they lock in, kept in DuckDB or PostgreSQL.

- `core`: StoreCore, every public method's SQL written once for both backends, and where the store lives
  (database_path, FAULTLINES_DB);
- the parts StoreCore is mixed from, each a StorePart (`contract`, which names what a part may call on the core):
  `accounts` (accounts, classes, handles, resume codes), `throttle` (guesses at secrets), `live` (live sessions),
  `reviews` (spaced review) and `timeline` (events and hints);
- `migrations`: the numbered MIGRATIONS and apply_migrations;
- `duckdb`: AttemptStore, the embedded DuckDB file, and the DuckDB plumbing;
- `postgres`: PostgresAttemptStore, the same store on a server. Not imported here, so a DuckDB-only
  process never loads psycopg; drills.backends.open_store picks the backend a FAULTLINES_DB value names.

The names below are the store's front door; callers import them from drills.store.
"""
from drills.records import (ANSWER_COLUMNS, AnswerEntry, Attempt, AttemptFinished, AttemptRecords, Candidate, Event,
                            EventKind, LockedAnswer, LockRefused, RevealEntry, ReviewEntry, ReviewState, RubricScore)
from drills.store.core import DB_ENV, DEFAULT_DB, StoreCore, database_path, is_postgres_target
from drills.store.duckdb import AttemptStore, ThreadCursors, duckdb_transaction
from drills.store.migrations import MIGRATIONS, apply_migrations
from drills.store.reviews import Advance

__all__ = [
    "ANSWER_COLUMNS", "AnswerEntry", "Attempt", "AttemptFinished", "AttemptRecords", "Candidate", "Event", "EventKind", "LockedAnswer",
    "LockRefused", "RevealEntry", "ReviewEntry", "ReviewState", "RubricScore",
    "DB_ENV", "DEFAULT_DB", "StoreCore", "database_path", "is_postgres_target",
    "AttemptStore", "ThreadCursors", "duckdb_transaction",
    "MIGRATIONS", "apply_migrations", "Advance",
]
