"""Everything one page run needs to know about an attempt, read from the store once.

Pages build an AttemptView at the top and pass it to the widgets, so each run reads the store once.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

import streamlit as st

from drills import scoring
from drills.disclosure import LEGACY_SEED, disclosed, graded_seed_of, question_seed
from drills.loader import LoadedDrill
from drills.schema import NumericQuestion
from drills.store import Attempt, AttemptRecords, AttemptStore, LockedAnswer
from drills.variants import drawn_numbers, in_variant
from ui import keys
from ui.runtime import seam

_KEPT = keys.register("view", __name__)("kept")   # (the fragment run, the view a lock-in left for it)


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
    last_opened: str | None = None      # the part opened last (where a resumed attempt picks up)
    graded_seed: int = LEGACY_SEED       # the attempt's graded seed (drills.disclosure.graded_seed_of)

    @classmethod
    def load(cls, store: AttemptStore, attempt: Attempt, loaded: LoadedDrill) -> AttemptView:
        """The attempt as the store holds it now: one read (the store's attempt_records)."""
        return cls.of(store, attempt, loaded, store.attempt_records(attempt.id))

    @classmethod
    def of(cls, store: AttemptStore, attempt: Attempt, loaded: LoadedDrill, records: AttemptRecords) -> AttemptView:
        """The view `records` describe (a read's, or what a lock-in's own transaction left): no store read but
        the attempt's graded seed, once a process (drills.disclosure.graded_seed_of)."""
        attempt = replace(attempt, finished_at=records.finished_at, extra_s=records.extra_s)
        loaded = in_variant(loaded, attempt.variant)   # the numbers this attempt drew
        graded_seed = graded_seed_of(store, attempt, loaded.drill)   # read once a process, then kept
        answers, reveals = records.answers, records.reveals
        return cls(store, attempt, loaded, answers, reveals, records.note_ratings, SimTruths(loaded, graded_seed),
                   disclosed(loaded.drill, answers, reveals, attempt.finished_at is not None), records.hints,
                   records.last_opened, graded_seed)

    def kept_for_this_run(self) -> AttemptView:
        """Keep this view for the fragments of this fragment run (a Lock in's callback runs before them), so
        they draw from what the lock-in's transaction returned instead of reading the store again."""
        st.session_state[_KEPT] = (seam.fragment_run_key(), self)
        return self

    @staticmethod
    def kept(run: object | None) -> AttemptView | None:
        """The view kept for fragment run `run` (seam.fragment_run_key), if one was."""
        kept_run, view = st.session_state.get(_KEPT, (None, None))
        return view if run is not None and kept_run is run else None

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
