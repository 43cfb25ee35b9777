"""Live sessions of a class: the instructor's pacing (append-only steps), who joined, and their seats' answers.

A mixin of StoreCore, so DuckDB and PostgreSQL share the SQL. The room's state is the latest step row of its
session, so every process reads the same state; a candidate's answers are an ordinary attempt of the class.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from drills.records import ANSWER_COLUMNS, Candidate, EventKind, LockedAnswer, LockRefused
from drills.store.contract import StorePart

WAITING, OPEN, CLOSED, REVEALED, ENDED = "waiting", "open", "closed", "revealed", "ended"
# What the instructor can press; "next" opens the following question (the first one from the waiting room).
NEXT, CLOSE, REVEAL, END, INJECT = "next", "close", "reveal", "end", "inject"
ALL_LOCKED = "all locked"   # the reason of a close no instructor pressed: everyone present had locked in
# A seat's page beats every HEARTBEAT_S (from the fragment that already polls); a seat not seen for PRESENT_S
# (three beats missed) has left: the console no longer counts it present and the auto-close stops waiting for it.
HEARTBEAT_S = 5.0
PRESENT_S = 15.0


def is_present(seen_at: float | None, now: float) -> bool:
    return seen_at is not None and now - seen_at <= PRESENT_S


class LiveRefused(ValueError):
    """A move the room's state does not allow (or another tab moved it first); nothing was stored."""


class LiveClosed(LockRefused):
    """A Lock in on a live question that is not open (a form left over from before the close): not stored.

    A LockRefused, not an AttemptFinished: the seat's attempt goes on, only this press was too late."""


@dataclass(frozen=True)
class LiveSession:
    id: int
    cohort: str
    drill_id: str
    variant: int
    owner: str
    created_at: float
    version: int              # the id of the latest step: it changes with every move
    state: str
    step_no: int              # index into the drill's questions (-1 in the waiting room)
    question_id: str | None
    part_id: str | None
    reason: str
    since: float              # when the latest step happened
    scenario: str | None      # the injected platform-sim scenario, if any


@dataclass(frozen=True)
class LiveStep:
    state: str
    step_no: int
    question_id: str | None
    reason: str
    at: float


@dataclass(frozen=True)
class Seat:
    """A candidate in the room: their class name and the attempt their answers go to."""

    candidate_id: int
    handle: str
    attempt_id: int
    joined_at: float
    seen_at: float | None = None   # the seat's last heartbeat (its join, at first)

    def present(self, now: float) -> bool:
        """Seen within PRESENT_S of `now`: the one meaning of "present" the console and the auto-close share."""
        return is_present(self.seen_at, now)


@dataclass(frozen=True)
class Move:
    state: str
    step_no: int
    scenario: str | None


def plan_move(session: LiveSession, action: str, questions: int, scenario: str | None = None) -> Move:
    """Where `action` takes the room, or LiveRefused saying why it cannot be taken now. Pure."""
    state, step = session.state, session.step_no
    if state == ENDED:
        raise LiveRefused("This live session has ended.")
    if action == NEXT:
        if state == OPEN:
            raise LiveRefused("Close the open question first.")
        if step + 1 >= questions:
            raise LiveRefused("That was the last question: end the session.")
        return Move(OPEN, step + 1, session.scenario)
    if action == CLOSE:
        if state != OPEN:
            raise LiveRefused("No question is open.")
        return Move(CLOSED, step, session.scenario)
    if action == REVEAL:
        if state != CLOSED:
            raise LiveRefused("Close the question before revealing its answer.")
        return Move(REVEALED, step, session.scenario)
    if action == END:
        return Move(ENDED, step, session.scenario)
    if action == INJECT:
        return Move(state, step, scenario)
    raise LiveRefused(f"Unknown move {action!r}.")


_SESSION_SELECT = """
    SELECT s.id, s.cohort, s.drill_id, s.variant, s.owner, s.created_at, t.id, t.state, t.step_no, t.question_id,
           t.part_id, t.reason, t.happened_at, t.scenario
    FROM live_sessions s JOIN live_steps t ON t.session_id = s.id
    WHERE t.id = (SELECT MAX(l.id) FROM live_steps l WHERE l.session_id = s.id)
"""
_STEP_COLUMNS = "session_id, state, step_no, question_id, part_id, reason, actor, happened_at, scenario"


class LiveStore(StorePart):
    """The store's live sessions (mixed into StoreCore; the same plumbing as the rest of it)."""

    def _live_notify(self, cur, session_id: int) -> None:
        """Tell other processes the room moved (PostgreSQL: NOTIFY at commit); DuckDB pages poll instead."""

    def start_live_session(self, cohort: str, drill_id: str, owner: str, *, variant: int = 0) -> LiveSession:
        now = self.clock()
        with self._transaction() as cur:
            session_id = cur.execute(
                "INSERT INTO live_sessions (cohort, drill_id, variant, owner, created_at) VALUES (?, ?, ?, ?, ?) "
                "RETURNING id", [cohort, drill_id, variant, owner[:200], now]).fetchone()[0]
            cur.execute(f"INSERT INTO live_steps ({_STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [session_id, WAITING, -1, None, None, "", owner[:200], now, None])
            self._live_notify(cur, session_id)
        return self.live_session(session_id)

    def live_session(self, session_id: int) -> LiveSession | None:
        row = self._one(_SESSION_SELECT + " AND s.id = ?", [session_id])
        return LiveSession(*row) if row else None

    def live_sessions(self, cohort: str, *, running: bool = True) -> list[LiveSession]:
        """The class's sessions, newest first; only those not ended unless `running` is False."""
        rows = self._all(_SESSION_SELECT + " AND s.cohort = ?" + (" AND t.state <> 'ended'" if running else "")
                         + " ORDER BY s.id DESC", [cohort])
        return [LiveSession(*r) for r in rows]

    def live_move(self, session_id: int, action: str, *, seen_version: int, questions: list[tuple[str, str]],
                  actor: str, scenario: str | None = None) -> LiveSession:
        """Take the instructor's `action`; `questions` are the drill's (question id, part id) in order.

        Refused (LiveRefused) unless the room is still on the question it was on at `seen_version`, so a double
        click or a second instructor tab cannot move it on twice; a move that is no longer legal where the room
        stands is refused by plan_move. A press drawn before a move on the same question (Reveal, then Next at once,
        before the console drew the reveal) is taken: what it asks for is still what the room can do. Ending the
        session finishes every seat's attempt.
        """
        with self._transaction() as cur:
            self._hold_attempt(cur, session_id)   # ids share one sequence, so no attempt shares this lock key
            row = cur.execute(_SESSION_SELECT + " AND s.id = ?", [session_id]).fetchone()
            if row is None:
                raise LiveRefused("No such live session.")
            session = LiveSession(*row)
            seen = cur.execute("SELECT step_no FROM live_steps WHERE id = ? AND session_id = ?",
                               [seen_version, session_id]).fetchone()
            if session.version != seen_version and (seen is None or seen[0] != session.step_no):
                raise LiveRefused("The room moved on meanwhile (another tab?): look again and press once more.")
            move = plan_move(session, action, len(questions), scenario)
            qid, pid = questions[move.step_no] if 0 <= move.step_no < len(questions) else (None, None)
            cur.execute(f"INSERT INTO live_steps ({_STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [session_id, move.state, move.step_no, qid, pid, "", actor[:200], self.clock(), move.scenario])
            self._live_notify(cur, session_id)
        if move.state == ENDED:
            for seat in self.live_seats(session_id):
                self.finish(seat.attempt_id)
        return self.live_session(session_id)

    def live_join(self, session_id: int, candidate: Candidate, time_box_s: float) -> Seat:
        """The candidate's seat in the room: a new attempt of the session's drill (marked live) the first time."""
        with self._transaction() as cur:
            self._hold_attempt(cur, session_id)
            session = cur.execute("SELECT drill_id, variant FROM live_sessions WHERE id = ?", [session_id]).fetchone()
            if session is None:
                raise LiveRefused("No such live session.")
            found = cur.execute("SELECT attempt_id FROM live_presence WHERE session_id = ? AND candidate_id = ?",
                                [session_id, candidate.id]).fetchone()
            if found is None:
                # Deliberately one draw for the whole room (the session's variant, 0 unless chosen), not a draw
                # per attempt as a solo drill makes: the room's strip plots every guess against one truth, and
                # the worked answer everyone opens at once quotes one set of givens.
                attempt_id, _ = self._insert_attempt(cur, candidate.id, session[0], time_box_s, seed=None,
                                                     variant=session[1])
                cur.execute("INSERT INTO live_presence (session_id, candidate_id, attempt_id, joined_at, seen_at) "
                            "VALUES (?, ?, ?, ?, ?)", [session_id, candidate.id, attempt_id, self.clock(), self.clock()])
                cur.execute("INSERT INTO attempt_events (attempt_id, happened_at, kind, detail) VALUES (?, ?, ?, ?)",
                            [attempt_id, self.clock(), EventKind.LIVE.value, json.dumps({"session": session_id})])
                self._live_notify(cur, session_id)
            else:   # back in the room (a reload, another tab): present again
                cur.execute("UPDATE live_presence SET seen_at = ? WHERE session_id = ? AND candidate_id = ?",
                            [self.clock(), session_id, candidate.id])
        return next(s for s in self.live_seats(session_id) if s.candidate_id == candidate.id)

    def live_heartbeat(self, session_id: int, candidate_id: int) -> None:
        """The seat's page is still open. No notification: the console looks at presence on its own beat, and
        a room of 200 beating would otherwise wake every page several times a second."""
        self.live_heartbeats(session_id, [candidate_id])

    def live_heartbeats(self, session_id: int, candidate_ids: Iterable[int]) -> None:
        """live_heartbeat for several seats of one room in one statement: what a process beats for the pages of
        the room it serves (ui.live.push)."""
        ids = sorted(set(candidate_ids))
        if not ids:
            return
        with self._transaction() as cur:
            cur.execute(f"UPDATE live_presence SET seen_at = ? WHERE session_id = ? AND candidate_id IN "
                        f"({', '.join('?' * len(ids))})", [self.clock(), session_id, *ids])

    def _present_and_locked(self, cur, session_id: int, question_id: str | None) -> tuple[int, int]:
        """(seats present now, how many of them have locked `question_id`), by Seat.present's rule."""
        rows = cur.execute("SELECT p.seen_at, a.attempt_id FROM live_presence p LEFT JOIN answers a "
                           "ON a.attempt_id = p.attempt_id AND a.question_id = ? WHERE p.session_id = ?",
                           [question_id, session_id]).fetchall()
        now = self.clock()
        present = [locked is not None for seen, locked in rows if is_present(seen, now)]
        return len(present), sum(present)

    def _refuse_if_live_closed(self, cur, attempt_id: int, *question_ids: str) -> None:
        """In a lock-in's transaction (one answer or a batch): a live seat locks only the question its room
        has open, so a batch that holds any other question stores none of it."""
        row = cur.execute("SELECT session_id FROM live_presence WHERE attempt_id = ?", [attempt_id]).fetchone()
        if row is None:
            return   # not a live attempt
        self._hold_attempt(cur, row[0])   # a close of the room waits for this lock-in, or this sees the close
        state, open_question = cur.execute(
            "SELECT state, question_id FROM live_steps WHERE session_id = ? ORDER BY id DESC LIMIT 1",
            [row[0]]).fetchone()
        if state != OPEN or any(q != open_question for q in question_ids):
            raise LiveClosed("This question closed before your Lock in arrived, so it was not counted.")

    def live_attempt_ids(self, attempt_ids: Iterable[int]) -> set[int]:
        """Which of these attempts were seats in a live room (for a history to mark them)."""
        ids = list(attempt_ids)
        if not ids:
            return set()
        rows = self._all("SELECT attempt_id FROM live_presence WHERE attempt_id = ANY(?)", [ids])
        return {r[0] for r in rows}

    def live_account_seated(self, session_id: int, account_id: int) -> bool:
        """Whether one of this account's candidates holds a seat in the room."""
        return self._one("SELECT 1 FROM live_presence p JOIN candidates c ON c.id = p.candidate_id "
                         "WHERE p.session_id = ? AND c.account_id = ?", [session_id, account_id]) is not None

    def live_seats(self, session_id: int) -> list[Seat]:
        rows = self._all("SELECT p.candidate_id, c.handle, p.attempt_id, p.joined_at, p.seen_at FROM live_presence p "
                         "JOIN candidates c ON c.id = p.candidate_id WHERE p.session_id = ? "
                         "ORDER BY p.joined_at, p.candidate_id", [session_id])
        return [Seat(*r) for r in rows]

    def live_steps(self, session_id: int) -> list[LiveStep]:
        rows = self._all("SELECT state, step_no, question_id, reason, happened_at FROM live_steps "
                         "WHERE session_id = ? ORDER BY id", [session_id])
        return [LiveStep(*r) for r in rows]

    def live_answers(self, session_id: int) -> dict[int, dict[str, LockedAnswer]]:
        """Every seat's locked answers: attempt id -> question id -> answer."""
        cols = ", ".join(f"a.{c.strip()}" for c in ANSWER_COLUMNS.split(","))
        rows = self._all(f"SELECT {cols} FROM answers a JOIN live_presence p ON p.attempt_id = a.attempt_id "
                         "WHERE p.session_id = ? ORDER BY a.locked_at", [session_id])
        out: dict[int, dict[str, LockedAnswer]] = {}
        for row in rows:
            out.setdefault(row[0], {})[row[1]] = LockedAnswer(*row)
        return out

    def live_version(self, session_id: int) -> tuple[int, int, int]:
        """(the latest step's id, seats present, present seats that locked the current question): changes with
        anything the room's pages show."""
        with self._reading() as cur:
            step = cur.execute("SELECT id, question_id FROM live_steps WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                               [session_id]).fetchone()
            if step is None:
                return 0, 0, 0
            return (int(step[0]), *self._present_and_locked(cur, session_id, step[1]))

    def live_locked(self, session_id: int, *, notify: bool = True) -> bool:
        """After a seat's lock-in: close the open question when every seat present has locked it. True if this
        closed it. Tells the other processes (unless `notify` is False and nothing closed), so counts move."""
        with self._transaction() as cur:
            self._hold_attempt(cur, session_id)
            row = cur.execute(_SESSION_SELECT + " AND s.id = ?", [session_id]).fetchone()
            if row is None:
                return False
            session = LiveSession(*row)
            closed = False
            if session.state == OPEN:
                present, locked = self._present_and_locked(cur, session_id, session.question_id)
                if present and present == locked:
                    cur.execute(f"INSERT INTO live_steps ({_STEP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [session_id, CLOSED, session.step_no, session.question_id, session.part_id,
                                 ALL_LOCKED, "", self.clock(), session.scenario])
                    closed = True
            if notify or closed:
                self._live_notify(cur, session_id)
        return closed
