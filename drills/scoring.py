"""Grading: numeric guesses by tolerance, choices exactly, notes by self-assessment.

Also calibration of the 80% ranges and their proper score (the interval score the live room ranks by), the
rubric's current levels and the verdict. Pure functions.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from drills.loaded import LoadedDrill
from drills.schema import ChoiceQuestion, Drill, NumericQuestion, Tolerance
from drills.records import LockedAnswer, RubricScore

NOTE_SCORES = {"full": 1.0, "partial": 0.5, "missed": 0.0}
CLAIMED_COVERAGE = 0.8
# How far the hit rate may sit from the claim, either side and edges included, and still read as calibrated.
CALIBRATION_MARGIN = 0.15
# With fewer ranges one miss swings the hit rate by 25 points or more, so no verdict is given.
MIN_RANGES_TO_JUDGE = 5
# The share of outcomes an 80% range leaves out (half each side): exact, so the miss penalty 2/alpha is exactly 10.
RANGE_ALPHA = 1 - Fraction(str(CLAIMED_COVERAGE))
# The worst a range scores, as a share of the truth: what no range scores, and any range ten times the truth wide.
# Without a cap one absurd range (the answer checks allow ±1e12) would outweigh every other question of a room.
WIDEST_RANGE = 10.0


def tolerance_band(truth: float, tolerance: Tolerance) -> float:
    if tolerance.kind == "relative":
        return tolerance.value * abs(truth) if truth else tolerance.value
    return tolerance.value


def grade_numeric(guess: float, truth: float, tolerance: Tolerance) -> float:
    """1 inside the tolerance, 0.5 inside twice it, else 0."""
    band = tolerance_band(truth, tolerance)
    miss = abs(guess - truth)
    if miss <= band * (1 + 1e-9):
        return 1.0
    if miss <= 2 * band * (1 + 1e-9):
        return 0.5
    return 0.0


def relative_error(guess: float, truth: float) -> float | None:
    return None if truth == 0 else (guess - truth) / abs(truth)


@dataclass(frozen=True)
class QuestionResult:
    question_id: str
    part_id: str
    kind: str
    prompt: str
    answer: LockedAnswer | None
    truth: float | str | None      # number, right option id, or None for notes
    score: float | None            # None: not answered yet, or notes not yet self-rated
    in_range: bool | None          # numeric with a range only
    rel_error: float | None


def interval_score(low: float, high: float, truth: float, alpha: Fraction = RANGE_ALPHA) -> float:
    """Gneiting and Raftery's (2007) interval score of a central (1 - alpha) range, the Winkler score: its width,
    plus 2/alpha times how far the truth fell outside it. Lower is better, and it is proper: a candidate scores
    best, on average, by giving their real 10th and 90th percentiles, neither wider nor narrower."""
    miss = float(2 / alpha)
    return (high - low) + miss * max(0.0, low - truth) + miss * max(0.0, truth - high)


def range_score(answer: LockedAnswer | None, truth: float, tolerance: Tolerance) -> float:
    """An answer's interval score made scale-free: a share of the truth (of the question's tolerance band when the
    truth is 0), capped at WIDEST_RANGE, which is also what a missing range scores (no answer, a skip, no range)."""
    if answer is None or answer.skipped or answer.low is None or answer.high is None:
        return WIDEST_RANGE
    scale = abs(truth) or tolerance_band(truth, tolerance)
    return min(WIDEST_RANGE, interval_score(answer.low, answer.high, truth) / scale)


def range_points(answer: LockedAnswer | None, truth: float, tolerance: Tolerance) -> float:
    """What a numeric answer earns in the live room, 0 to 1: its range score's distance from the widest, as a
    share of it (an affine map of a proper score stays proper), less the share given up to hints."""
    points = 1 - range_score(answer, truth, tolerance) / WIDEST_RANGE
    return points * (1 - answer.hint_cost) if answer is not None else 0.0


def _part_of(drill: Drill) -> dict[str, str]:
    out = {}
    for part in drill.parts:
        for q in part.questions:
            out[q.id] = part.id
        if part.followup:
            for q in part.followup.questions:
                out[q.id] = part.id
    return out


@dataclass(frozen=True)
class AnswerGrade:
    """One locked answer's grade, as every page and report shows it (the SQL in drills.reports.grading_key
    gives the same score and range, checked cell by cell in tests/test_grading_rule.py)."""

    accuracy: float | None     # numeric: 1, 0.5 or 0 by the tolerance; choice: 1 or 0; notes: by the rating
    score: float | None        # what the answer earns: the accuracy less the share given up to hints
    in_range: bool | None      # numeric with a range only


def grade_answer(question, answer: LockedAnswer, truth: float | None, note_rating: str | None = None) -> AnswerGrade:
    """The one grading rule: a skip earns 0; a number by its tolerance, less its hint cost; a choice by the
    right option; notes by their (latest) self-rating, None until rated."""
    if answer.skipped:
        return AnswerGrade(0.0, 0.0, None)
    if isinstance(question, NumericQuestion):
        accuracy = grade_numeric(answer.value, truth, question.tolerance)
        in_range = answer.low <= truth <= answer.high if answer.low is not None else None
        return AnswerGrade(accuracy, accuracy * (1 - answer.hint_cost), in_range)
    if isinstance(question, ChoiceQuestion):
        accuracy = 1.0 if answer.choice == question.answer else 0.0
        return AnswerGrade(accuracy, accuracy, None)
    score = NOTE_SCORES.get(note_rating) if note_rating else None
    return AnswerGrade(score, score, None)


def grade_question(loaded: LoadedDrill, question, answer: LockedAnswer | None, *,
                   sim_values: Mapping[str, float], note_rating: str | None,
                   part_id: str) -> QuestionResult:
    truth: float | str | None = None
    score: float | None = None
    in_range: bool | None = None
    rel: float | None = None
    if isinstance(question, NumericQuestion):
        truth = loaded.truth(question.id, sim_values)
    elif isinstance(question, ChoiceQuestion):
        truth = question.answer
    if answer is not None:
        grade = grade_answer(question, answer, truth if isinstance(question, NumericQuestion) else None, note_rating)
        score, in_range = grade.score, grade.in_range
        if isinstance(question, NumericQuestion) and not answer.skipped:
            rel = relative_error(answer.value, truth)
    return QuestionResult(question.id, part_id, question.kind, question.prompt, answer, truth, score, in_range, rel)


def grade_attempt(loaded: LoadedDrill, answers: Mapping[str, LockedAnswer], *,
                  sim_values: Mapping[str, float] | None = None,
                  note_ratings: Mapping[str, str] | None = None) -> list[QuestionResult]:
    parts = _part_of(loaded.drill)
    return [
        grade_question(loaded, q, answers.get(q.id), sim_values=sim_values or {},
                       note_rating=(note_ratings or {}).get(q.id), part_id=parts[q.id])
        for q in loaded.drill.all_questions()
    ]


@dataclass(frozen=True)
class Calibration:
    ranges: int       # numeric answers that gave an 80% range
    hits: int         # of those, how many contained the truth

    @property
    def hit_rate(self) -> float | None:
        return self.hits / self.ranges if self.ranges else None

    @property
    def judgeable(self) -> bool:
        """Enough ranges that the hit rate says something about the candidate, not about luck."""
        return self.ranges >= MIN_RANGES_TO_JUDGE

    @property
    def verdict(self) -> str:
        rate = self.hit_rate
        if rate is None:
            return "No ranges given, so there is nothing to calibrate yet."
        if not self.judgeable:
            given = f"{self.ranges} range was" if self.ranges == 1 else f"{self.ranges} ranges were"
            return (f"Too few ranges to judge calibration: {given} given, and it takes at least "
                    f"{MIN_RANGES_TO_JUDGE}. Give an 80% range with more of your numbers.")
        # Exact fractions, so both edges (65% and 95%) read as calibrated whatever floating point makes of 0.8 ± 0.15.
        off = Fraction(self.hits, self.ranges) - Fraction(str(CLAIMED_COVERAGE))
        if off < -Fraction(str(CALIBRATION_MARGIN)):
            return "Your ranges are too narrow: the truth fell outside them more often than you claimed."
        if off > Fraction(str(CALIBRATION_MARGIN)):
            return (f"Your ranges held more often than the {CLAIMED_COVERAGE:.0%} you claimed, so they are likely wider "
                    f"than they need to be: a range scores best when it is as tight as it can be and still holds "
                    f"about {CLAIMED_COVERAGE:.0%} of the time.")
        return "Your ranges held about as often as you claimed. Well calibrated."


def calibration(results: Sequence[QuestionResult]) -> Calibration:
    with_range = [r for r in results if r.in_range is not None]
    return Calibration(len(with_range), sum(1 for r in with_range if r.in_range))


@dataclass(frozen=True)
class Totals:
    earned: float
    possible: int
    answered: int          # questions with a locked answer, skips included
    unrated_notes: int
    skipped: int

    @property
    def locked(self) -> int:
        """Questions answered with a guess, a choice or notes: the results page and history say "Locked in"."""
        return self.answered - self.skipped

    @property
    def percent(self) -> float:
        return 100.0 * self.earned / self.possible if self.possible else 0.0


def totals(results: Sequence[QuestionResult]) -> Totals:
    scored = [r for r in results if r.score is not None]
    return Totals(
        earned=sum(r.score for r in scored),
        possible=len(results),
        answered=sum(1 for r in results if r.answer is not None),
        unrated_notes=sum(1 for r in results if r.kind == "notes" and r.answer is not None and r.score is None),
        skipped=sum(1 for r in results if r.answer is not None and r.answer.skipped),
    )


def current_levels(history: Sequence[RubricScore]) -> dict[str, RubricScore]:
    """Per skill, the score that counts: the latest instructor score if any, else the latest self score."""
    latest_self: dict[str, RubricScore] = {}
    latest_instructor: dict[str, RubricScore] = {}
    for row in history:  # history is in time order, so later rows overwrite
        (latest_instructor if row.scorer == "instructor" else latest_self)[row.skill_id] = row
    return {**latest_self, **latest_instructor}


@dataclass(frozen=True)
class VerdictResult:
    strong: int
    needed: int
    passed: bool
    message: str
    warnings: tuple[str, ...]
    complete: bool
    tally: str         # e.g. "Staff on 1 skill; 3 needed.", in the drill's own level names


def verdict(drill: Drill, levels: Mapping[str, RubricScore]) -> VerdictResult:
    strong = sum(1 for s in drill.rubric if s.id in levels and levels[s.id].level == "strong")
    needed = drill.verdict.strong_needed
    passed = strong >= needed
    weak = drill.level_label("weak")
    warnings = tuple(
        f"{drill.skill(skill_id).name} ({weak}): {drill.verdict.watch_message}"
        for skill_id in drill.verdict.watch_skills
        if skill_id in levels and levels[skill_id].level == "weak"
    )
    tally = f"{drill.level_label('strong')} on {strong} skill{'' if strong == 1 else 's'}; {needed} needed."
    return VerdictResult(strong, needed, passed,
                         drill.verdict.pass_message if passed else drill.verdict.short_message,
                         warnings, complete=all(s.id in levels for s in drill.rubric), tally=tally)


def sim_truths(loaded: LoadedDrill, seed: int, evaluate_preset) -> dict[str, float]:
    """Run each simulation-backed question's preset with the attempt's seed."""
    return {
        q.id: evaluate_preset(q.sim, seed)
        for q in loaded.drill.all_questions()
        if isinstance(q, NumericQuestion) and q.sim is not None
    }
