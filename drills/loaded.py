"""A drill as the app serves it: the validated model plus the numbers its formulas give.

Kept apart from the loader and its rules so that drills.scope and drills.draws can build on it without an
import circle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from drills.formulas import render
from drills.schema import Drill, NumericQuestion


@dataclass(frozen=True)
class LoadedDrill:
    """A validated drill plus the numbers its formulas give (simulation answers excepted)."""

    drill: Drill
    values: Mapping[str, float]
    source: str
    units: Mapping[str, str] = field(default_factory=dict)
    variant: int = 0   # which seeded version of the numbers `values` holds (0: as written)
    # Variants of this drill already computed (drills.variants.in_variant); not part of its identity.
    variant_cache: dict = field(default_factory=dict, compare=False, repr=False)
    # For a shorter practice cut from a drill (drills.scope): the whole drill, whose formulas give the numbers
    # the cut's text still quotes from questions it dropped. None for a whole drill.
    whole: Drill | None = field(default=None, compare=False, repr=False)

    def truth(self, question_id: str, sim_values: Mapping[str, float] | None = None) -> float:
        question = self.drill.question(question_id)
        if not isinstance(question, NumericQuestion):
            raise TypeError(f"{question_id} is not numeric")
        if question.sim is not None:
            if sim_values is None or question_id not in sim_values:
                raise KeyError(f"{question_id} needs its simulation result")
            return sim_values[question_id]
        return self.values[question_id]

    def text(self, template: str, sim_values: Mapping[str, float] | None = None) -> str:
        values = dict(self.values)
        if sim_values:
            values.update(sim_values)
        return render(template, values)

