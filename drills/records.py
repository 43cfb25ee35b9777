"""The attempt's records as plain values: what the store returns and scoring, the time box and reports read.

Also the names every layer shares: the kinds of attempt event. No SQL, no Streamlit.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum


class EventKind(StrEnum):
    """What an attempt event records; stored as its text in attempt_events.kind."""

    STARTED = "started"
    OPENED = "opened"                  # the candidate moved to a part
    LOCKED = "locked"
    SKIPPED = "skipped"
    REVEALED = "revealed"
    SCORED = "scored"
    EXTRA_TIME = "extra_time"
    FINISHED = "finished"
    SIM_OPENED = "sim_opened"          # a simulation page opened while questions it answers were open
    RESULTS_VIEWED = "results_viewed"  # the results page of an open attempt
    HINT_OPENED = "hint_opened"        # a graded hint opened before the question was locked in
    LIVE = "live"                      # the attempt is a candidate's seat in a live session (detail: session)


@dataclass(frozen=True)
class Candidate:
    id: int
    handle: str
    cohort: str


@dataclass(frozen=True)
class Attempt:
    id: int
    token: str
    candidate_id: int
    handle: str
    cohort: str
    drill_id: str
    seed: int
    time_box_s: float
    started_at: float
    extra_s: float
    finished_at: float | None
    variant: int = 0   # which seeded version of the drill's numbers the attempt drew (0: as written)
    account_id: int | None = None   # the signed-in account it belongs to (None: an anonymous handle's)


# The answers table's columns in LockedAnswer's field order, for every SELECT that builds one.
ANSWER_COLUMNS = ("attempt_id, question_id, part_id, kind, value, low, high, choice, notes, skipped, locked_at, "
                  "hint_cost")


@dataclass(frozen=True)
class LockedAnswer:
    attempt_id: int
    question_id: str
    part_id: str
    kind: str
    value: float | None
    low: float | None
    high: float | None
    choice: str | None
    notes: str | None
    skipped: bool
    locked_at: float
    hint_cost: float = 0.0   # share of the mark given up to hints opened before this lock-in


@dataclass(frozen=True)
class AttemptRecords:
    """What an attempt's page shows that changes while it is worked, as one read returns it (the store's
    attempt_records) or a lock-in's own transaction leaves it (lock_in): no second read after a write."""

    answers: Mapping[str, LockedAnswer]            # question id -> its answer, in the order they were locked
    reveals: Mapping[tuple[str, str], float]       # (part id, section) -> when it was revealed
    note_ratings: Mapping[str, str]                # question id -> the latest self-rating
    hints: Mapping[str, frozenset[int]]            # question id -> indexes of the graded hints opened
    finished_at: float | None
    extra_s: float                                 # time granted on top of the time box
    last_opened: str | None                        # the part opened last (where a resumed attempt picks up)
    live_seat: bool = False                        # a candidate's seat in a live room (its lock-ins are checked)

    def with_answer(self, answer: LockedAnswer) -> AttemptRecords:
        """These records with one more answer, as the transaction that stored it leaves them."""
        return replace(self, answers={**self.answers, answer.question_id: answer})


@dataclass(frozen=True)
class AnswerEntry:
    """One answer for AttemptStore.lock_answers; `at` is when it was locked (None: the store's clock)."""

    question_id: str
    part_id: str
    kind: str
    value: float | None = None
    low: float | None = None
    high: float | None = None
    choice: str | None = None
    notes: str | None = None
    skipped: bool = False
    at: float | None = None
    hint_cost: float = 0.0


@dataclass(frozen=True)
class RevealEntry:
    """One reveal for AttemptStore.record_reveals; `at` is when it was opened (None: the store's clock)."""

    part_id: str
    section: str
    at: float | None = None


@dataclass(frozen=True)
class RubricScore:
    skill_id: str
    level: str
    scorer: str
    scorer_name: str
    reason: str
    scored_at: float


@dataclass(frozen=True)
class Event:
    at: float
    kind: str
    part_id: str | None
    detail: Mapping[str, object]


class LockRefused(ValueError):
    """Every refusal a lock-in can meet: nothing was stored, and the message says why.

    Catch a subclass for what only it means (AttemptFinished: the whole attempt is read-only now); catch this
    one where any refused press gets the same treatment (its message shown, the form kept)."""


class AttemptFinished(LockRefused):
    """A finished attempt takes no more lock-ins, self-scores or note ratings (instructors may still score)."""

    def __init__(self, attempt_id: int):
        super().__init__(f"attempt {attempt_id} is finished: its answers and self-scores can no longer change")
        self.attempt_id = attempt_id


@dataclass(frozen=True)
class ReviewEntry:
    """One question a finished attempt puts up for review, and how the attempt went on it (an FSRS rating)."""

    drill_id: str            # the base drill: a break or essentials attempt reviews the full drill's item
    question_id: str
    variant: int             # the numbers the attempt showed
    rating: int              # fsrs.Rating: 1 again, 2 hard, 3 good, 4 easy
    guess: float | None = None
    reason: str = ""
    at: float | None = None  # when the attempt answered it (None: now)


@dataclass(frozen=True)
class ReviewState:
    """One review item as its latest row leaves it: the FSRS card, when it is due, how often it was reviewed."""

    id: int
    handle: str
    drill_id: str
    question_id: str
    attempt_id: int | None   # the attempt that wrote this row; None for a review answered on the review page
    variant: int
    guess: float | None
    rating: int
    reason: str
    card: str                # fsrs.Card as JSON
    due_at: float
    reviewed_at: float
    reviews: int
