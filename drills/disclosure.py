"""What an attempt may show its candidate: which truths are out, in which order options appear, and which
simulation pages and seeds would give an answer away while its questions are open.

One rule for the drill page and the results page alike, so neither can leak the answer key early.
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from drills.schema import ChoiceQuestion, Drill, NumericQuestion, Option
from drills.scoring import QuestionResult
from drills.records import LockedAnswer

FOLLOWUP = "followup"   # the reveal section id of a part's follow-up answer
# Every candidate is graded against the same run of each simulation question, so the board, the export,
# the Attempt tab and the candidate's own results agree, and the embedded model shows that same run.
SIMULATION_SEED = 0


def disclosed(drill: Drill, answers: Mapping[str, LockedAnswer], reveals: Collection[tuple[str, str]],
              finished: bool) -> frozenset[str]:
    """Question ids whose truth (and so whose score) this attempt may see now.

    Everything once the attempt is finished. Before that, a skipped question (forfeited for good), and a
    locked one once the worked answer that follows it has been opened: a part's questions by any of its
    reveal sections, a follow-up's by the follow-up answer. A part with no worked answer shows its
    truths once every one of its questions is locked. An unanswered question never shows its truth.
    """
    if finished:
        return frozenset(q.id for q in drill.all_questions())
    out: set[str] = set()
    opened_parts = {part_id for part_id, _ in reveals}
    for part in drill.parts:
        groups = [(part.questions, part.id in opened_parts if part.reveal else None)]
        if part.followup is not None:
            groups.append((part.followup.questions, (part.id, FOLLOWUP) in reveals))
        for questions, answer_opened in groups:
            if answer_opened is None:   # no worked answer to wait for: the group's lock-ins settle it
                answer_opened = all(q.id in answers for q in questions)
            for q in questions:
                answer = answers.get(q.id)
                if answer is not None and (answer.skipped or answer_opened):
                    out.add(q.id)
    return frozenset(out)


def option_order(question: ChoiceQuestion, seed: int) -> list[Option]:
    """The question's options shuffled for one attempt: stable across reloads, different between attempts.

    Seeded by the attempt's seed and the question id (hashed, so two questions of one attempt do not
    share a permutation); never the global random state, which every session of the process shares.
    """
    digest = hashlib.sha256(f"{seed}:{question.id}".encode()).digest()
    options = list(question.options)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(options)
    return options


def open_questions_answered_by(drill: Drill, models: Collection[str], answers: Mapping[str, LockedAnswer],
                               preset_models: Mapping[str, str]) -> list[str]:
    """Unanswered simulation questions whose preset runs one of `models` (what a sim page would give away)."""
    return [q.id for q in drill.all_questions()
            if isinstance(q, NumericQuestion) and q.sim and q.id not in answers
            and preset_models.get(q.sim) in models]


def seed_may_run(seed: int, graded_questions_open: Collection[str]) -> bool:
    """Whether a simulation page may run ``seed`` now: never the graded seed while a question graded against
    it is still open, so the graded run stays unseen until its question is locked (or the attempt ends)."""
    return seed != SIMULATION_SEED or not graded_questions_open


def withhold(results: Sequence[QuestionResult], shown: Collection[str]) -> list[QuestionResult]:
    """Results with the truth, score and range verdict blanked for every question not in `shown`.

    The candidate still sees their own locked answer; notes keep theirs (a self-rating exists only after
    the reveal that discloses it).
    """
    return [r if r.question_id in shown or r.kind == "notes"
            else replace(r, truth=None, score=None, in_range=None, rel_error=None) for r in results]
