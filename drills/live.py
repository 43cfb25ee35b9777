"""What a live room shows: every locked guess against the truth, the share of each option, the scoreboard.

Pure functions over the store's records. Grading is drills.scoring's, each seat graded against its own
attempt's variant as the results page grades it; the scoreboard ranks numbers by the proper interval score of
their 80% ranges (scoring.range_points) and choices by their grade, never by time.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

from drills import scoring
from drills.store.live import CLOSED, ENDED, OPEN, LiveStep, Seat
from drills.loader import LoadedDrill
from drills.records import LockedAnswer
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.timebox import Clock, planned_part


@dataclass(frozen=True)
class Grader:
    """One seat's attempt as grading sees it: the drill in the attempt's variant and its simulations' truths."""

    loaded: LoadedDrill
    sim_values: Mapping[str, float]

    def grade(self, question, answer: LockedAnswer | None, part_id: str) -> scoring.QuestionResult:
        return scoring.grade_question(self.loaded, question, answer, sim_values=self.sim_values, note_rating=None,
                                      part_id=part_id)


def questions_in_order(loaded: LoadedDrill) -> list[tuple[str, str]]:
    """(question id, part id) in the order the room takes them: the drill's own order."""
    out = []
    for part in loaded.drill.parts:
        for q in part.questions + (part.followup.questions if part.followup else ()):
            out.append((q.id, part.id))
    return out


def closed_at(steps: Sequence[LiveStep]) -> dict[str, float]:
    """When each question was first closed: answers locked later (a stale form) are left out of the room."""
    out: dict[str, float] = {}
    for step in steps:
        if step.state == CLOSED and step.question_id is not None:
            out.setdefault(step.question_id, step.at)
    return out


def counted(answers: Mapping[int, Mapping[str, LockedAnswer]], attempt_id: int, question_id: str,
            until: float | None) -> LockedAnswer | None:
    """The attempt's answer to the question as the room counts it: locked by `until` (the question's close)."""
    answer = answers.get(attempt_id, {}).get(question_id)
    if answer is None or (until is not None and answer.locked_at > until):
        return None
    return answer


@dataclass(frozen=True)
class Guess:
    value: float
    low: float | None
    high: float | None
    truth: float
    in_range: bool | None
    score: float
    own: bool


@dataclass(frozen=True)
class NumericRoom:
    question_id: str
    unit: str
    guesses: tuple[Guess, ...]    # sorted by value; no names
    seats: int
    skipped: int

    @property
    def truths(self) -> tuple[float, ...]:
        """The distinct truths (one unless seats drew different variants)."""
        return tuple(sorted({g.truth for g in self.guesses}))

    @cached_property
    def ranges_held(self) -> tuple[int, int]:
        ranged = [g for g in self.guesses if g.in_range is not None]
        return sum(1 for g in ranged if g.in_range), len(ranged)

    @cached_property
    def first_row(self) -> Mapping[tuple, int]:
        """(value, low, high) -> the row of its first guess: after a Close every page of the room finds its own
        guess in the one room its process shares, so the search is made once, not once a page."""
        rows: dict[tuple, int] = {}
        for row, g in enumerate(self.guesses):
            rows.setdefault((g.value, g.low, g.high), row)
        return rows


def numeric_room(question: NumericQuestion, part_id: str, seats: Sequence[Seat], graders: Mapping[int, Grader],
                 answers: Mapping[int, Mapping[str, LockedAnswer]], *, own_attempt: int | None,
                 until: float | None) -> NumericRoom:
    guesses, skipped = [], 0
    for seat in seats:
        answer = counted(answers, seat.attempt_id, question.id, until)
        if answer is None:
            continue
        if answer.skipped:
            skipped += 1
            continue
        result = graders[seat.attempt_id].grade(question, answer, part_id)
        guesses.append(Guess(answer.value, answer.low, answer.high, result.truth, result.in_range, result.score,
                             seat.attempt_id == own_attempt))
    guesses.sort(key=lambda g: (g.value, not g.own))
    return NumericRoom(question.id, question.unit, tuple(guesses), len(seats), skipped)


@dataclass(frozen=True)
class OptionShare:
    option_id: str
    text: str
    count: int
    share: float        # of the seats that picked an option
    right: bool
    own: bool           # the viewer picked it


@dataclass(frozen=True)
class ChoiceRoom:
    question_id: str
    options: tuple[OptionShare, ...]   # in the drill's display order
    answered: int
    seats: int


def choice_room(question: ChoiceQuestion, seats: Sequence[Seat], answers: Mapping[int, Mapping[str, LockedAnswer]],
                *, own_attempt: int | None, until: float | None) -> ChoiceRoom:
    counts = {o.id: 0 for o in question.options}
    own = None
    for seat in seats:
        answer = counted(answers, seat.attempt_id, question.id, until)
        if answer is None or answer.skipped or answer.choice not in counts:
            continue
        counts[answer.choice] += 1
        if seat.attempt_id == own_attempt:
            own = answer.choice
    answered = sum(counts.values())
    return ChoiceRoom(question.id, tuple(
        OptionShare(o.id, o.text, counts[o.id], counts[o.id] / answered if answered else 0.0, o.id == question.answer,
                    o.id == own) for o in question.options), answered, len(seats))


def for_viewer(room: NumericRoom | ChoiceRoom, answers: Mapping[int, Mapping[str, LockedAnswer]],
               viewer: int | None, *, until: float | None) -> NumericRoom | ChoiceRoom:
    """A room drawn for nobody (own_attempt=None) as `viewer`'s attempt sees it: their guess, or the option they
    picked, marked as their own. After a Close every page shows the same room, so it is made once and marked
    per page. Of equal guesses (value and range) the first is marked: on the strip they look the same."""
    answer = counted(answers, viewer, room.question_id, until) if viewer is not None else None
    if answer is None or answer.skipped:
        return room
    if isinstance(room, ChoiceRoom):
        return replace(room, options=tuple(replace(o, own=o.option_id == answer.choice) for o in room.options))
    mine = room.first_row.get((answer.value, answer.low, answer.high))
    if mine is None:
        return room
    guesses = room.guesses   # sliced around the one marked: every page of a room of hundreds does this at a Close
    return replace(room, guesses=guesses[:mine] + (replace(guesses[mine], own=True),) + guesses[mine + 1:])


@dataclass(frozen=True)
class Standing:
    rank: int
    handle: str
    attempt_id: int
    points: float          # what the closed questions earned (scoring.range_points for a number, the grade for a choice)
    questions: int         # closed numeric and choice questions: unanswered ones earn nothing
    ranges: int
    hits: int

    @property
    def share(self) -> float:
        return self.points / self.questions if self.questions else 0.0

    @property
    def held(self) -> float | None:
        return self.hits / self.ranges if self.ranges else None


def score_rule() -> str:
    """The scoreboard's rule in one plain sentence, its numbers taken from scoring's."""
    miss = float(2 / scoring.RANGE_ALPHA)
    return (f"Each closed question earns up to 1 point: a right option 1, and a number by its "
            f"{scoring.CLAIMED_COVERAGE:.0%} range, which loses points for its width plus {miss:g} times any miss of "
            f"the truth (both as a share of the truth), so a tight range that holds earns most and no range, or one "
            f"{scoring.WIDEST_RANGE:g} times the truth wide, earns nothing; time to answer never counts.")


def question_points(grader: Grader, question, answer: LockedAnswer | None, part_id: str) -> tuple[float, bool | None]:
    """(points, range held) of one answer to a closed question: a number by the proper score of its range
    (scoring.range_points), so a wide range cannot buy a place; a choice by its grade."""
    result = grader.grade(question, answer, part_id)
    if isinstance(question, NumericQuestion):
        return scoring.range_points(answer, result.truth, question.tolerance), result.in_range
    return result.score or 0.0, result.in_range


def scoreboard(loaded: LoadedDrill, steps: Sequence[LiveStep], seats: Sequence[Seat], graders: Mapping[int, Grader],
               answers: Mapping[int, Mapping[str, LockedAnswer]]) -> list[Standing]:
    """Seats ranked by the points of the closed questions (score_rule), most first; equal points, equal rank.

    Time to answer is never looked at."""
    closed = closed_at(steps)
    parts = dict(questions_in_order(loaded))
    graded = [loaded.drill.question(qid) for qid in closed
              if isinstance(loaded.drill.question(qid), (NumericQuestion, ChoiceQuestion))]
    rows = []
    for seat in seats:
        points, ranges, hits = 0.0, 0, 0
        for question in graded:
            answer = counted(answers, seat.attempt_id, question.id, closed[question.id])
            earned, held = question_points(graders[seat.attempt_id], question, answer, parts[question.id])
            points += earned
            if held is not None:
                ranges += 1
                hits += held
        rows.append((seat, points, ranges, hits))

    def key(row) -> float:
        return -round(row[1], 9)   # sums of the same points in another order are equal points

    rows.sort(key=lambda r: (key(r), r[0].handle))
    out, rank, previous = [], 0, None
    for index, row in enumerate(rows):
        if key(row) != previous:
            rank, previous = index + 1, key(row)
        seat, points, ranges, hits = row
        out.append(Standing(rank, seat.handle, seat.attempt_id, points, len(graded), ranges, hits))
    return out


@dataclass(frozen=True)
class RoomClock:
    """The instructor's clock, which the whole room keeps (seats have no clock of their own): it starts when the
    first question opens and runs against the drill's time box, paced by the drill's suggested minutes."""

    started_at: float | None    # when the first question opened (None: still the waiting room)
    limit_s: float
    elapsed_s: float
    part_id: str | None         # the part of the question the room is on
    planned_part_id: str | None  # where the suggested pacing puts the room by now
    parts_ahead: int            # > 0 ahead of the pace, < 0 behind
    ended: bool = False         # the session has ended: the clock stopped there

    @property
    def clock(self) -> Clock:
        return Clock(limit_s=self.limit_s, elapsed_s=self.elapsed_s, remaining_s=self.limit_s - self.elapsed_s,
                     finished=self.ended)


def room_clock(loaded: LoadedDrill, steps: Sequence[LiveStep], now: float) -> RoomClock:
    drill = loaded.drill
    limit = drill.time_box_min * 60
    first = next((s for s in steps if s.state == OPEN), None)
    if first is None:
        return RoomClock(None, limit, 0.0, None, None, 0)
    ended = next((s.at for s in steps if s.state == ENDED), None)
    elapsed = max(0.0, (ended if ended is not None else now) - first.at)
    order = questions_in_order(loaded)
    latest = next((s for s in reversed(steps) if s.question_id is not None), first)
    part_id = order[latest.step_no][1] if 0 <= latest.step_no < len(order) else None
    parts = [p.id for p in drill.parts]
    # The parts before the first question (the prompt) are read in the waiting room: the pace starts at the
    # first question's part, so a room that opens it is on pace.
    first_part = order[first.step_no][1] if 0 <= first.step_no < len(order) else parts[0]
    before = sum(p.minutes * 60 for p in drill.parts[:parts.index(first_part)]) if first_part in parts else 0.0
    planned = planned_part(drill, before + elapsed)
    ahead = parts.index(part_id) - parts.index(planned) if part_id in parts else 0
    return RoomClock(first.at, limit, elapsed, part_id, planned, ahead, ended is not None)


def pace_words(room: RoomClock) -> str:
    """The room's pacing in a few words, for the console and the seats."""
    if room.started_at is None:
        return "The room's clock starts when the first question opens."
    if room.parts_ahead == 0:
        return "On pace."
    parts = "part" if abs(room.parts_ahead) == 1 else "parts"
    return f"{abs(room.parts_ahead)} {parts} {'ahead of' if room.parts_ahead > 0 else 'behind'} the suggested pace."
