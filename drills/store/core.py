"""The attempt store's SQL, written once for both backends: candidates, attempts and what they lock in.

StoreCore holds every public method in DuckDB-flavoured SQL (`?` placeholders); drills.store.duckdb
(the embedded file) and drills.store.postgres (the server) supply the plumbing. Accounts, live sessions,
throttles, spaced review and the timeline of events and hints are mixins of it (drills.store.accounts,
drills.store.live, drills.store.throttle, drills.store.reviews, drills.store.timeline), each a StorePart
(drills.store.contract).

Rows are never updated in place: a change of mind is a new row, and the latest one wins.
Times are UNIX seconds (DOUBLE) so that clocks are easy to inject and compare.
"""
from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from drills.store.accounts import AccountsStore
from drills.store.live import LiveStore
from drills.store.lti import LtiStore
from drills.records import (ANSWER_COLUMNS, AnswerEntry, Attempt, AttemptFinished, AttemptRecords, Candidate,
                            LockedAnswer, RevealEntry, RubricScore)
from drills.store.graded_seeds import GradedSeedStore
from drills.store.reviews import ReviewStore
from drills.store.throttle import ThrottleStore
from drills.store.timeline import FINISHED_SQL as _FINISHED_SQL
from drills.store.timeline import TimelineStore
from drills.store.views import AttemptViewStore

if TYPE_CHECKING:
    import duckdb

DEFAULT_DB = Path(__file__).resolve().parents[2] / "data" / "faultlines.duckdb"
DB_ENV = "FAULTLINES_DB"


def database_path() -> str:
    """The one setting for where the store lives: FAULTLINES_DB, else data/faultlines.duckdb.

    A value starting with postgresql:// or postgres:// names a PostgreSQL database (see open_store).
    """
    return os.environ.get(DB_ENV) or str(DEFAULT_DB)


def is_postgres_target(target: str) -> bool:
    """Whether a FAULTLINES_DB value is a PostgreSQL URL rather than a DuckDB file."""
    return target.startswith(("postgresql://", "postgres://"))


_ANSWER_COLUMNS = ANSWER_COLUMNS
_ATTEMPT_SELECT = """
    SELECT a.id, a.token, a.candidate_id, c.handle, c.cohort, a.drill_id, a.seed, a.time_box_s, a.started_at,
           COALESCE((SELECT SUM(g.seconds) FROM time_grants g WHERE g.attempt_id = a.id), 0),
           (SELECT MIN(e.happened_at) FROM attempt_events e WHERE e.attempt_id = a.id AND e.kind = 'finished'),
           a.variant, c.account_id
    FROM attempts a JOIN candidates c ON c.id = a.candidate_id
"""


def _refuse_if_finished(cur, attempt_id: int) -> None:
    """Checked inside the writing transaction, so a lock-in racing a Finish click cannot slip past it."""
    if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is not None:
        raise AttemptFinished(attempt_id)


_BATCH_ROWS = 500   # rows per multi-row statement in the batch writes


def _placeholders(rows: int, columns: int) -> str:
    return ", ".join(["(" + ", ".join(["?"] * columns) + ")"] * rows)


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


class StoreCore(AccountsStore, ThrottleStore, LiveStore, ReviewStore, TimelineStore, LtiStore, AttemptViewStore,
                GradedSeedStore):
    """Every public method of the attempt store, written once in DuckDB-flavoured SQL (`?` placeholders).

    A backend supplies the plumbing drills.store.contract.StorePart declares (`_transaction`, `_reading`,
    `_hold_attempt`, `_insert_new`) and `query`, `refresh_derived` and `close`; the parts mixed in reach
    the rest of the store only through StorePart. The core in turn calls two of theirs inside a lock-in's
    transaction: LiveStore's `_refuse_if_live_closed` and AttemptViewStore's `_attempt_records`.
    """

    path: str

    # -- plumbing a backend provides -------------------------------------------------
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

    def probe(self) -> None:
        """Return when the store answers now; raise a store fault when it does not (ui.store_watch asks every
        second). A DuckDB file lives in this process and has no server that could hang: nothing to ask."""

    def check_writes(self) -> None:
        """Commit one throwaway write, as a lock-in would: raises when the store cannot take one now."""
        with self._transaction() as cur:
            cur.execute("DELETE FROM store_checks")
            cur.execute("INSERT INTO store_checks (checked_at) VALUES (?)", [self.clock()])

    # -- candidates and attempts ---------------------------------------------------
    def start_attempt(self, drill_id: str, handle: str, cohort: str, time_box_s: float,
                      *, seed: int | None = None, variant: int = 0) -> Attempt:
        return self.start_attempt_for(self.ensure_candidate(handle, cohort), drill_id, time_box_s,
                                      seed=seed, variant=variant)

    def start_attempt_for(self, candidate: Candidate, drill_id: str, time_box_s: float,
                          *, seed: int | None = None, variant: int = 0, graded_seed: int | None = None) -> Attempt:
        """A new attempt of a candidate row already chosen (an account's in its class, or a claimed handle), with
        its graded seed when it has one (drills.disclosure draws it): one transaction, the attempt read inside it."""
        with self._transaction() as cur:
            attempt_id = self._insert_attempt(cur, candidate.id, drill_id, time_box_s, seed=seed, variant=variant)[0]
            if graded_seed is not None:   # a new attempt has none yet: stored with it, never a second transaction
                cur.execute("INSERT INTO graded_seeds (attempt_id, seed) VALUES (?, ?)", [attempt_id, graded_seed])
            return Attempt(*cur.execute(_ATTEMPT_SELECT + " WHERE a.id = ?", [attempt_id]).fetchone())

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
        answer, created, _ = self.lock_in(attempt_id, question_id, part_id, kind, value=value, low=low, high=high,
                                          choice=choice, notes=notes, skipped=skipped, hint_costs=hint_costs)
        return answer, created

    def lock_in(self, attempt_id: int, question_id: str, part_id: str, kind: str, *,
                value: float | None = None, low: float | None = None, high: float | None = None,
                choice: str | None = None, notes: str | None = None,
                skipped: bool = False, hint_costs: Sequence[float] = ()) -> tuple[LockedAnswer, bool, AttemptRecords]:
        """lock_answer, also returning the attempt's records as its own transaction leaves them.

        The records are read once, inside the transaction and after the attempt is held (drills.store.views):
        that read is also the finished check, the live-seat check, the answer already there and the hints
        opened, so the page that locked in draws from them without reading the store again.
        """
        now = self.clock()
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            records = self._attempt_records(cur, attempt_id)   # drills.store.views
            if records.finished_at is not None:
                raise AttemptFinished(attempt_id)
            if records.live_seat:   # a seat is written with its attempt (live_join): no attempt becomes one later
                self._refuse_if_live_closed(cur, attempt_id, question_id)   # drills.store.live
            if question_id in records.answers:   # locked before (this tab or another): that answer stands
                return records.answers[question_id], False, records
            opened = records.hints.get(question_id, frozenset())
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
            else:   # a writer that does not hold the attempt got there first: theirs is the answer
                row = cur.execute(f"SELECT {_ANSWER_COLUMNS} FROM answers WHERE attempt_id = ? AND question_id = ?",
                                  [attempt_id, question_id]).fetchone()
        answer = LockedAnswer(*row)
        return answer, created, records.with_answer(answer)

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
            self._refuse_if_live_closed(cur, attempt_id, *first)   # drills.store.live
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

    def finish(self, attempt_id: int) -> None:
        """Mark the attempt finished once; a second call changes nothing."""
        with self._transaction() as cur:
            self._hold_attempt(cur, attempt_id)
            if cur.execute(_FINISHED_SQL, [attempt_id]).fetchone() is None:
                cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, 'finished', '{}')",
                            [attempt_id, self.clock()])
