"""Everything one page run needs to know about an attempt, read from the store once.

Pages build an AttemptView at the top and pass it to the widgets, so each run reads the store once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import streamlit as st

from drills import scoring
from drills.disclosure import LEGACY_SEED, disclosed, graded_seed_of, question_seed
from drills.loader import LoadedDrill
from drills.schema import NumericQuestion
from drills.store import Attempt, AttemptStore, LockedAnswer
from drills.variants import drawn_numbers, in_variant


@st.cache_data(show_spinner="Running the simulations this drill embeds…", max_entries=20_000)
def simulation_truths(drill_id: str, seed: int, preset_ids: tuple[tuple[str, str], ...],
                      inputs: tuple[tuple[str, float], ...] = ()) -> dict[str, float]:
    """Truths for simulation-backed questions: each preset run once per (drill, seed, numbers it reads)."""
    from sims import presets  # imported lazily: only drills with embeds pay for the models

    values = dict(inputs)
    return {question_id: presets.evaluate(preset_id, seed, values) for question_id, preset_id in preset_ids}


def sim_truths_of(loaded: LoadedDrill, graded_seed: int = LEGACY_SEED) -> dict[str, float]:
    """The graded run of each simulation question, on the numbers of `loaded`'s variant, each at its question's
    seed of the attempt's `graded_seed` (drills.disclosure.question_seed; seed 0 for a legacy attempt)."""
    preset_ids = tuple((q.id, q.sim) for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim)
    if not preset_ids:
        return {}
    from sims import presets

    # Cached per preset on the numbers that preset reads and its seed: two attempts that agree on both share
    # the run even where their numbers differ elsewhere.
    truths: dict[str, float] = {}
    for question_id, preset_id in preset_ids:
        inputs = presets.inputs_of([preset_id], loaded.values)
        truths |= simulation_truths(loaded.drill.id, question_seed(graded_seed, question_id),
                                    ((question_id, preset_id),), inputs)
    return truths


class SimTruths(Mapping[str, float]):
    """The graded simulation runs of an attempt's numbers (sim_truths_of), run the first time one is read.

    Most page runs never read them: a part's lock-ins need no truth until it is revealed, and a text needs them
    only where it names a simulation question. So a class arriving at once does not run every draw's models
    before anyone has locked in a number; the results and the reveals run them when they first need them.
    """

    def __init__(self, loaded: LoadedDrill, graded_seed: int = LEGACY_SEED) -> None:
        self._loaded = loaded
        self.graded_seed = graded_seed
        self._values: dict[str, float] | None = None
        self.ids = frozenset(q.id for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim)

    def _run(self) -> dict[str, float]:
        if self._values is None:
            self._values = sim_truths_of(self._loaded, self.graded_seed)
        return self._values

    def __getitem__(self, question_id: str) -> float:
        return self._run()[question_id]

    def __iter__(self):
        return iter(self._run())

    def __len__(self) -> int:
        return len(self._run())

    def __contains__(self, question_id: object) -> bool:
        return question_id in self.ids

    def read_by(self, template: str) -> bool:
        """Whether `template` may name a simulation question ({id} or {id:spec}); True when unsure."""
        return any("{" + question_id in template for question_id in self.ids)


@dataclass(frozen=True)
class AttemptView:
    store: AttemptStore
    attempt: Attempt
    loaded: LoadedDrill
    answers: Mapping[str, LockedAnswer]
    reveals: Mapping[tuple[str, str], float]
    note_ratings: Mapping[str, str]
    sim_values: Mapping[str, float]
    disclosed: frozenset[str]           # question ids whose truth this attempt may see now
    hints: Mapping[str, frozenset[int]]  # question id -> indexes of the graded hints opened
    graded_seed: int = LEGACY_SEED       # the attempt's graded seed (drills.disclosure.graded_seed_of)

    @classmethod
    def load(cls, store: AttemptStore, attempt: Attempt, loaded: LoadedDrill) -> AttemptView:
        loaded = in_variant(loaded, attempt.variant)   # the numbers this attempt drew
        graded_seed = graded_seed_of(store, attempt, loaded.drill)
        sim_values = SimTruths(loaded, graded_seed)
        answers, reveals = store.answers(attempt.id), store.reveals(attempt.id)
        hinted = any(getattr(q, "hints", ()) for q in loaded.drill.all_questions())   # spare the event scan
        hints = {q: frozenset(opened) for q, opened in store.hints_opened(attempt.id).items()} if hinted else {}
        return cls(store, attempt, loaded, answers, reveals, store.note_ratings(attempt.id), sim_values,
                   disclosed(loaded.drill, answers, reveals, attempt.finished_at is not None), hints, graded_seed)

    @property
    def finished(self) -> bool:
        return self.attempt.finished_at is not None

    def text(self, template: str) -> str:
        sims = self.sim_values
        if isinstance(sims, SimTruths) and not sims.read_by(template):   # no model run for a text without one
            return self.loaded.text(template)
        return self.loaded.text(template, sims)

    @property
    def drawn_numbers(self) -> str:
        """The numbers this attempt drew (`name=value; …`, or "as written"), for the board to show."""
        return drawn_numbers(self.loaded)

    def question_seed(self, question_id: str) -> int:
        """The seed of the run this attempt grades `question_id` against (for its chart and its replay)."""
        return question_seed(self.graded_seed, question_id)

    def truth(self, question_id: str) -> float:
        return self.loaded.truth(question_id, self.sim_values)

    def revealed(self, part_id: str, section: str) -> bool:
        return (part_id, section) in self.reveals

    def all_answered(self, questions) -> bool:
        return all(q.id in self.answers for q in questions)

    def results(self) -> list[scoring.QuestionResult]:
        return scoring.grade_attempt(self.loaded, self.answers, sim_values=self.sim_values,
                                     note_ratings=self.note_ratings)

    def unrated_notes(self) -> int:
        """Notes answers locked in but not yet self-rated: they earn nothing once the attempt finishes."""
        return scoring.totals(self.results()).unrated_notes
