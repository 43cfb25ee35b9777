"""What an attempt may show its candidate: which truths are out, in which order options appear, and which
simulation pages and seeds would give an answer away while its questions are open.

One rule for the drill page and the results page alike, so neither can leak the answer key early.
"""
from __future__ import annotations

import hashlib
import random
import secrets
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from drills.schema import ChoiceQuestion, Drill, NumericQuestion, Option
from drills.scoring import QuestionResult
from drills.records import LockedAnswer

FOLLOWUP = "followup"   # the reveal section id of a part's follow-up answer
# Each attempt of a drill with simulation questions draws its own graded seed when it starts (stored once:
# drills.store.graded_seeds), and each of its simulation questions is graded against the run at a seed
# derived from it and the question (question_seed). The board, the export, the Attempt tab, the candidate's
# results and the embedded chart all read that one stored seed, so they agree; a candidate cannot run it on a
# sim page while its question is open, and nobody else knows it.
LEGACY_SEED = 0   # attempts from before graded seeds (and attempts without one) were graded against seed 0
# Where graded runs' seeds are drawn: never 0 (so no default run is one), above the seeds a sim page's spread
# runs (1 to 100) and its platform page's box (1 to 10,000), and inside a sim page's seed box (ui.sims.tab's
# SEED_MAX), so a finished question's link can replay its run there.
GRADED_SEEDS = range(100_000, 1_000_000)


def draw_graded_seed(rng: random.Random | None = None) -> int:
    """A new attempt's graded seed: from the system's randomness (or a script's own `rng`, so a demo can be
    reproduced), never the global random state."""
    return GRADED_SEEDS[rng.randrange(len(GRADED_SEEDS)) if rng is not None else secrets.randbelow(len(GRADED_SEEDS))]


def question_seed(graded_seed: int, question_id: str) -> int:
    """The seed of one question's graded run: derived from the attempt's graded seed and the question, so the
    seed shown once one question is locked in says nothing about another question still open. A legacy
    attempt's questions all keep seed 0."""
    if graded_seed == LEGACY_SEED:
        return LEGACY_SEED
    digest = hashlib.sha256(f"graded#{graded_seed}#{question_id}".encode()).digest()
    return GRADED_SEEDS[int.from_bytes(digest[:8], "big") % len(GRADED_SEEDS)]


def sim_question_ids(drill: Drill) -> tuple[str, ...]:
    """The drill's questions graded against a simulation run."""
    return tuple(q.id for q in drill.all_questions() if isinstance(q, NumericQuestion) and q.sim)


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


_KNOWN_SEEDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # store -> {attempt id: graded seed}


def start_graded(store, candidate, drill: Drill, time_box_s: float, *, seed: int, variant: int):
    """Start an attempt of `drill` with its graded seed (drawn here when it has simulation questions) in the
    start's own transaction, and know the seed from then on: graded_seed_of reads nothing for it."""
    graded = draw_graded_seed() if sim_question_ids(drill) else None
    attempt = store.start_attempt_for(candidate, drill.id, time_box_s, seed=seed, variant=variant,
                                      graded_seed=graded)
    _KNOWN_SEEDS.setdefault(store, {})[attempt.id] = LEGACY_SEED if graded is None else graded
    return attempt


def graded_seed_of(store, attempt, drill: Drill) -> int:
    """The attempt's graded seed: LEGACY_SEED for a drill without simulation questions, else the stored one.

    The start of an attempt stores it; an attempt that has none yet (a live room's seat, made by the store)
    draws it here, on its first page, before anything of it is graded: unless it already locked in a simulation
    question or finished (made by a script), which keeps seed 0, the seed its answers were graded against.
    A stored seed never changes, so each process reads it once.
    """
    sims = sim_question_ids(drill)
    if not sims:
        return LEGACY_SEED
    known = _KNOWN_SEEDS.setdefault(store, {})
    if attempt.id not in known:
        seed = store.graded_seed(attempt.id)
        if seed is None:
            graded_before = attempt.finished_at is not None or not store.answers(attempt.id).keys().isdisjoint(sims)
            seed = store.keep_graded_seed(attempt.id, LEGACY_SEED if graded_before else draw_graded_seed())
        known[attempt.id] = seed
    return known[attempt.id]


def graded_seeds_of(store, attempts, drill: Drill) -> dict[int, int]:
    """graded_seed_of for many attempts at once (attempt id -> seed): the stored seeds this process does not know
    yet are read in one query (a live room's Close grades every seat at once, while the room's pages wait), the
    rest drawn by graded_seed_of's rule."""
    if sim_question_ids(drill):
        known = _KNOWN_SEEDS.setdefault(store, {})
        unknown = [a.id for a in attempts if a.id not in known]
        if unknown:
            known.update(store.graded_seeds(unknown))   # a stored seed never changes
    return {a.id: graded_seed_of(store, a, drill) for a in attempts}


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


def seed_may_run(seed: int, closed_seeds: Collection[int]) -> bool:
    """Whether a simulation page may run ``seed`` for this reader now: never the seed of a graded run whose
    question is still open (``closed_seeds``, the reader's own), so it stays unseen until locked in."""
    return seed not in closed_seeds


def withhold(results: Sequence[QuestionResult], shown: Collection[str]) -> list[QuestionResult]:
    """Results with the truth, score and range verdict blanked for every question not in `shown`.

    The candidate still sees their own locked answer; notes keep theirs (a self-rating exists only after
    the reveal that discloses it).
    """
    return [r if r.question_id in shown or r.kind == "notes"
            else replace(r, truth=None, score=None, in_range=None, rel_error=None) for r in results]
