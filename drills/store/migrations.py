"""The store's numbered schema migrations, and how a database is brought up to date with them.

Applied by version number at start-up, each in its own transaction; gaps are allowed, so a feature can
reserve numbers. Never edit one that has shipped: a change is a new number. The SQL is DuckDB's; the
PostgreSQL store runs the same list through postgres_dialect (PG_MIGRATIONS).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Union

from drills.store.accounts import handle_key
from drills.store.graded_seeds import GRADED_SEEDS_MIGRATION, GRADING_KEY_SEEDS_MIGRATION
from drills.store.lti_grades import LTI_GRADES_MIGRATION
from drills.store.lti_roster import LTI_ROSTER_MIGRATION

# A migration is DuckDB SQL, or a function of a cursor for what SQL cannot say in both backends (NFKC).
Migration = Union[str, Callable[[object], None]]


def _key_every_handle(cur) -> None:
    """Fill candidates.handle_key: each row's handle as people read it (drills.store.accounts.handle_key).

    Where two rows of one cohort already read the same (ADA and ada, both taken before keys existed), the
    older keeps the key and the later is left without one: still found by the handle exactly as typed, so its
    owner keeps their history, while nobody new can take a third look-alike. No index may stand on the table
    while DuckDB alters it, and none may be made in the transaction that updated it: version 32 makes them."""
    cur.execute("DROP INDEX idx_candidates_account")
    cur.execute("ALTER TABLE candidates ADD COLUMN handle_key VARCHAR")
    keyed: set[tuple[str, str]] = set()
    for candidate_id, handle, cohort in cur.execute("SELECT id, handle, cohort FROM candidates ORDER BY id").fetchall():
        key = (handle_key(handle), cohort)
        if key not in keyed:
            keyed.add(key)
            cur.execute("UPDATE candidates SET handle_key = ? WHERE id = ?", [key[0], candidate_id])

# Every feature's numbers, in this one list and in version order (a test holds it), so the last one is the
# latest and a database gains them in the order they were numbered.
# No FOREIGN KEY clauses: in DuckDB they tripled the cost of a lock-in commit, and every
# child row is written by AttemptStore for an attempt it has just looked up.
MIGRATIONS: tuple[tuple[int, Migration], ...] = (
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
    # Live sessions of a class (drills.store.live). Steps are never changed: a move is a new row, the latest row
    # is the room's state, and its id is the version every page polls or is notified of.
    (20, """
    CREATE TABLE live_sessions (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        cohort VARCHAR NOT NULL,
        drill_id VARCHAR NOT NULL,
        variant INTEGER NOT NULL DEFAULT 0,
        owner VARCHAR NOT NULL,
        created_at DOUBLE NOT NULL
    );
    CREATE TABLE live_steps (
        id BIGINT PRIMARY KEY DEFAULT nextval('seq_ids'),
        session_id BIGINT NOT NULL,
        state VARCHAR NOT NULL CHECK (state IN ('waiting', 'open', 'closed', 'revealed', 'ended')),
        step_no INTEGER NOT NULL,
        question_id VARCHAR,
        part_id VARCHAR,
        reason VARCHAR NOT NULL DEFAULT '',
        actor VARCHAR NOT NULL DEFAULT '',
        happened_at DOUBLE NOT NULL
    );
    CREATE INDEX idx_live_steps_session ON live_steps (session_id, id);
    CREATE TABLE live_presence (
        session_id BIGINT NOT NULL,
        candidate_id BIGINT NOT NULL,
        attempt_id BIGINT NOT NULL,
        joined_at DOUBLE NOT NULL,
        PRIMARY KEY (session_id, candidate_id)
    );
    """),
    # The break the instructor injected into a simulation for the whole room (a platform scenario), carried
    # on every later step so the latest row alone says what the room's sim pages show.
    (21, """
    ALTER TABLE live_steps ADD COLUMN scenario VARCHAR;
    """),
    # Presence is a heartbeat: a seat's page writes when it was last seen, and "present" means seen within
    # PRESENT_S. The index finds a lock-in's seat (a Lock in is only taken while its question is open).
    (22, """
    ALTER TABLE live_presence ADD COLUMN seen_at DOUBLE;
    UPDATE live_presence SET seen_at = joined_at;
    CREATE INDEX idx_live_presence_attempt ON live_presence (attempt_id);
    """),
    # Accounts and throttles from 30. A try is counted by the browser and the network address it came from as
    # well as by its target (drills.store.throttle); '' where unknown, as for every try before this. (DuckDB
    # alters no table an index depends on: the index goes while the columns come.)
    (30, """
    DROP INDEX idx_access_target;
    ALTER TABLE access_tries ADD COLUMN browser VARCHAR NOT NULL DEFAULT '';
    ALTER TABLE access_tries ADD COLUMN address VARCHAR NOT NULL DEFAULT '';
    CREATE INDEX idx_access_target ON access_tries (kind, target, tried_at);
    CREATE INDEX idx_access_browser ON access_tries (kind, browser, tried_at);
    CREATE INDEX idx_access_address ON access_tries (kind, address, tried_at);
    """),
    # Handles compared as people read them: claimed and looked up by their key (case-folded, NFKC, spaces
    # collapsed), unique per cohort, while `handle` keeps what was typed first.
    (31, _key_every_handle),
    (32, """
    CREATE INDEX idx_candidates_account ON candidates (account_id);
    CREATE UNIQUE INDEX idx_candidates_key ON candidates (handle_key, cohort);
    """),
    # The LTI tool (drills.store.lti): nonces of accepted launches until their token expires, and one-time
    # launch codes, kept as hashes only; which class each LMS course (context) is.
    (40, """
    CREATE TABLE lti_nonces (
        issuer VARCHAR NOT NULL,
        nonce VARCHAR NOT NULL,
        expires_at DOUBLE NOT NULL,
        PRIMARY KEY (issuer, nonce)
    );
    CREATE TABLE lti_codes (
        code_hash VARCHAR PRIMARY KEY,
        launch VARCHAR NOT NULL,
        expires_at DOUBLE NOT NULL
    );
    CREATE TABLE lti_classes (
        platform VARCHAR NOT NULL,
        context_id VARCHAR NOT NULL,
        cohort VARCHAR NOT NULL,
        PRIMARY KEY (platform, context_id)
    );
    """),
    # LTI grade passback: grade targets and the outbox (its SQL beside the code that uses it).
    (41, LTI_GRADES_MIGRATION),
    (42, LTI_ROSTER_MIGRATION),   # LTI rosters: each class's NRPS source and members (drills.store.lti_roster)
    (46, GRADED_SEEDS_MIGRATION),   # each attempt's graded seed, written once (drills.store.graded_seeds)
    (47, GRADING_KEY_SEEDS_MIGRATION),   # derived: a grading key's rows per (variant, graded seed)
)


_MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE NOT NULL)"


def apply_migrations(cur, now: float, migrations: Iterable[tuple[int, Migration]] = MIGRATIONS,
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
            cur.execute(sql) if isinstance(sql, str) else sql(cur)
            cur.execute("INSERT INTO schema_migrations VALUES (?, ?)", [version, now])
            cur.execute("COMMIT")
        except Exception:
            cur.execute("ROLLBACK")
            raise


def postgres_dialect(sql: str) -> str:
    """DuckDB DDL as PostgreSQL reads it: the only type spelled differently is DOUBLE."""
    return re.sub(r"\bDOUBLE\b", "DOUBLE PRECISION", sql)


# The same numbered migrations, spelled for PostgreSQL. Versions 2 to 4 create the derived tables there
# too, unused: reports keep theirs in the in-memory DuckDB copy (drills.store.postgres.ReportCopy), so
# version numbers and schema_version() agree with the DuckDB store.
PG_MIGRATIONS: tuple[tuple[int, Migration], ...] = tuple(
    (version, postgres_dialect(sql) if isinstance(sql, str) else sql) for version, sql in MIGRATIONS)
