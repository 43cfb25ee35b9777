"""Spaced review: which questions a finished attempt puts up for review, how a review answer is rated, and
the FSRS card each review leaves behind (the `fsrs` package schedules; the store keeps one row per review).

Only numeric questions graded by a formula come back: their truths follow the drawn givens, so each review
can ask with fresh numbers. Simulation-graded questions have one reference result and are not reviewed.
"""
from __future__ import annotations

import math
import random
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from fsrs import Card, Rating, Scheduler

from drills.draws import WRITTEN, base_id, draw_for_seed, drawn_givens, given_uses, varies
from drills.loaded import LoadedDrill
from drills.variants import usable_numbers
from drills.schema import NumericQuestion
from drills.scoring import QuestionResult, grade_numeric
from drills.store import ReviewEntry, ReviewState

MAX_PER_WEAK_SKILL = 3   # a weak skill brings back at most this many of its questions, so a session stays short
# One due time per answer (no fuzz), so a reload, a second process or a test sees the same schedule. The
# learning steps are FSRS's defaults: a miss returns a minute after it was answered, a first hit ten later.
SCHEDULER = Scheduler(enable_fuzzing=False, learning_steps=(timedelta(minutes=1), timedelta(minutes=10)))
ACCURACY_RATING = {1.0: Rating.Good, 0.5: Rating.Hard, 0.0: Rating.Again}
RATING_WORDS = {Rating.Again: "again", Rating.Hard: "hard", Rating.Good: "good", Rating.Easy: "easy"}


def reviewable(question) -> bool:
    """A numeric question whose truth is a formula over the givens (so a variant changes it)."""
    return isinstance(question, NumericQuestion) and question.answer is not None and question.sim is None


def graded(guess: float, truth: float, question: NumericQuestion) -> tuple[float, Rating]:
    """The guess's accuracy by the one grading rule (1, 0.5 or 0) and the review rating it earns: in tolerance
    Good; within twice the tolerance Hard; further off Again."""
    accuracy = grade_numeric(guess, truth, question.tolerance)
    return accuracy, ACCURACY_RATING[accuracy]


def rating(guess: float, truth: float, question: NumericQuestion) -> Rating:
    return graded(guess, truth, question)[1]


def _attempt_rating(result: QuestionResult | None, question: NumericQuestion) -> Rating:
    """How the attempt went on a question: skipped or never answered counts as Again."""
    answer = result.answer if result is not None else None
    if answer is None or answer.skipped:
        return Rating.Again
    return rating(answer.value, result.truth, question)


def items_after(loaded: LoadedDrill, results: Sequence[QuestionResult], weak_skills: Collection[str],
                variant: int) -> list[ReviewEntry]:
    """What a finished attempt puts up for review, in the drill's order.

    Each reviewable question answered outside its tolerance or skipped; then, for each skill scored weak,
    up to MAX_PER_WEAK_SKILL of that skill's reviewable questions not already in (essential ones first).
    Questions the attempt never reached are not missed ones: they come back only through a weak skill.
    """
    drill = loaded.drill
    by_id: Mapping[str, QuestionResult] = {r.question_id: r for r in results}
    questions = [q for q in drill.all_questions() if reviewable(q)]
    base = base_id(drill.id)
    chosen: dict[str, ReviewEntry] = {}
    for q in questions:
        result = by_id.get(q.id)
        if result is None or result.answer is None:
            continue
        rated = _attempt_rating(result, q)
        if result.answer.skipped or rated != Rating.Good:
            chosen[q.id] = ReviewEntry(base, q.id, variant, int(rated), None if result.answer.skipped
                                       else result.answer.value, "skipped" if result.answer.skipped else "missed",
                                       result.answer.locked_at)
    for skill in drill.rubric:
        if skill.id not in weak_skills:
            continue
        extra = sorted((q for q in questions if skill.id in q.skills and q.id not in chosen),
                       key=lambda q: not q.essential)[:MAX_PER_WEAK_SKILL]
        for q in extra:
            result = by_id.get(q.id)
            answer = result.answer if result is not None else None
            guess = answer.value if answer is not None and not answer.skipped else None
            chosen[q.id] = ReviewEntry(base, q.id, variant, int(_attempt_rating(result, q)), guess,
                                       f"weak skill: {skill.name}", answer.locked_at if answer else None)
    order = {q.id: n for n, q in enumerate(questions)}
    return sorted(chosen.values(), key=lambda e: order[e.question_id])


def _utc(unix_seconds: float) -> datetime:
    return datetime.fromtimestamp(unix_seconds, timezone.utc)


def next_card(card_json: str | None, rated: int, at: float) -> tuple[str, float]:
    """The FSRS card after a review rated `rated` at `at` (a new card when `card_json` is None), and its due time."""
    card = Card.from_json(card_json) if card_json else Card(card_id=int(at * 1000), due=_utc(at))
    card, _log = SCHEDULER.review_card(card, Rating(rated), review_datetime=_utc(at))
    return card.to_json(), card.due.timestamp()


def numbers_vary(loaded: LoadedDrill, question: NumericQuestion) -> bool:
    """Whether any given the question's answer reaches is drawn afresh by each attempt."""
    used = given_uses(loaded.drill)(question.answer or "")
    return any(g.vary is not None and g.name in used for g in loaded.drill.givens)


def fresh_variant(loaded: LoadedDrill, question: NumericQuestion, last_variant: int, salt: str) -> int:
    """The draw a review asks in: one whose numbers for this question differ from the draw last seen
    (a drill that does not vary asks as written).

    `salt` names the review (the item and its latest row), so reruns of one page ask the same numbers.
    """
    if not varies(loaded.drill):
        return WRITTEN
    drill = loaded.whole or loaded.drill
    used = sorted(given_uses(drill)(question.answer or ""))
    seen = drawn_givens(drill, last_variant)
    seed = random.Random(salt).randrange(2**31)
    draw = draw_for_seed(seed)
    for attempt in range(1, 50):
        if (draw != last_variant and [drawn_givens(drill, draw)[n] for n in used] != [seen[n] for n in used]
                and usable_numbers(drill, draw) is not None):   # never a draw that breaks a holds: condition
            break
        draw = draw_for_seed(seed, attempt)
    return draw


def salt(item: ReviewState) -> str:
    """What seeds the variant of an item's next review: the item and the row it was last left at."""
    return f"{item.drill_id}#{item.question_id}#{item.id}"


@dataclass(frozen=True)
class GivenShown:
    """A number a review question needs, as the variant draws it."""

    name: str
    value: float
    unit: str
    note: str


def _read_with(drill, question: NumericQuestion) -> str:
    """The text the candidate read the question in: its part's scenario, the follow-up's prompt, the question."""
    for part in drill.parts:
        if any(q.id == question.id for q in part.questions):
            return "\n\n".join((part.body, question.prompt))
        if part.followup and any(q.id == question.id for q in part.followup.questions):
            return "\n\n".join((part.body, part.followup.prompt, question.prompt))
    return question.prompt


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n\s*[-*]\s+")


def _as_stated(loaded: LoadedDrill, text: str, given) -> tuple[str, str] | None:
    """(unit, sentence) where the question's own text states `given` as a rate in another unit than the
    given's: Hot Tenant's hot_rate is write units/s as given, yet Break 2 says "the tenant still sends
    {hot_rate} events/s" and asks in events/s. None where the text keeps the given's unit (or never says)."""
    for sentence in _SENTENCES.split(text):
        found = re.search(r"\{%s(?::[^}]*)?\}\**\s*([^\s*.,;:!?()]+/[^\s*.,;:!?()]+)" % re.escape(given.name),
                          sentence)
        if found and found.group(1) != given.unit:
            said = " ".join(loaded.text(sentence).replace("**", "").split()).lstrip("-* ")
            return found.group(1), said
    return None


def givens_for(loaded: LoadedDrill, question: NumericQuestion) -> list[GivenShown]:
    """The givens the question's answer formula reaches (through derived values too), in the drill's order:
    a prompt read alone may not state every number the answer needs.

    Each is shown as the question's own part states it: where the part restates a rate in another unit
    (the write units/s given that Break 2 calls events/s), its unit and sentence replace the given's, so
    the review never hands over a units/s figure for an events/s question."""
    used = given_uses(loaded.drill)(question.answer or "")
    text = _read_with(loaded.drill, question)
    shown = []
    for g in loaded.drill.givens:
        if g.name not in used:
            continue
        stated = _as_stated(loaded, text, g)
        unit, note = stated if stated else (g.unit, g.note)
        shown.append(GivenShown(g.name, loaded.values[g.name], unit, note))
    return shown


def is_due(due_at: float, at: float) -> bool:
    """Whether an item may be reviewed at `at`: the one test the page asks with, and the one its words follow."""
    return due_at <= at


def wait_words(seconds: float) -> str:
    """How long until an item comes back, the way a person says it: 'now', 'in 40 seconds', 'in 10 minutes',
    'in 3 days'. Only an item already due (seconds <= 0, see is_due) is 'now': one a few seconds away is not
    offered yet, so calling it 'now' would contradict the page."""
    if seconds <= 0:
        return "now"
    whole = math.ceil(seconds)   # never "in 0 seconds" for a time still ahead
    if whole < 60:
        return f"in {whole} second{'' if whole == 1 else 's'}"
    minutes = max(1, round(seconds / 60))
    if minutes < 90:
        return f"in {minutes} minute{'' if minutes == 1 else 's'}"
    hours = round(seconds / 3600)
    if hours < 36:
        return f"in {hours} hours"
    days = round(seconds / 86400)
    return f"in {days} days"
