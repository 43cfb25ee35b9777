"""What every drill's content test shares: a drill's brief as data, its numeric questions, its texts.

Each tests/test_content_<drill>.py states its brief's figures in a DrillBrief; test_content_common.py checks them.
The content rules themselves (typed figures, option lengths) live in drills.loader, which applies them at load time.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

from drills.lint import texts
from drills.loaded import LoadedDrill
from drills.schema import Drill, NumericQuestion

# Attempts' graded seeds (drills.disclosure.draw_graded_seed) the checks read the simulations at, besides the
# brief's own seed: every attempt is graded against runs at seeds of its own, so what the text claims of a run
# must hold at any of them.
GRADED_SAMPLE = (100_000, 271_828, 577_215, 999_999)
Figure = tuple[float, float, str]                   # the brief's figure, relative tolerance, where it says so
SimFigure = tuple[str, float | None, float, str]    # preset id, the brief's figure or None, tolerance, where


@dataclass(frozen=True, eq=False)
class DrillBrief:
    """One drill and the figures its brief states, for the checks every drill must pass."""

    loaded: LoadedDrill
    answers: Mapping[str, Figure]       # question id -> figure the formula answer must give
    derived: Mapping[str, Figure]       # derived value -> figure
    sims: Mapping[str, SimFigure]       # simulation-graded question -> its preset and figure
    labels: re.Pattern[str]             # numbers that are names or labels rather than quantities
    time_box_min: int
    sim_seed: int = 1
    figures_allowed_in: frozenset[str] = frozenset()   # parts that may type figures (the board states them)

    @property
    def drill(self) -> Drill:
        return self.loaded.drill

    @property
    def values(self) -> Mapping[str, float]:
        return self.loaded.values

    @cached_property
    def sim_values(self) -> dict[str, float]:
        """Each simulation-graded question's truth at the brief's seed, run once per test session."""
        from sims import presets

        return {q.id: presets.evaluate(q.sim, self.sim_seed) for q in numeric(self.drill, with_answer=False)}

    @cached_property
    def attempt_sim_values(self) -> tuple[dict[str, float], ...]:
        """Each simulation-graded question's truth as attempts with the GRADED_SAMPLE seeds are graded: the run
        at its question's seed of theirs (drills.disclosure.question_seed), on the numbers as written."""
        from drills.disclosure import question_seed
        from sims import presets

        return tuple({q.id: presets.evaluate(q.sim, question_seed(graded, q.id), self.values)
                      for q in numeric(self.drill, with_answer=False)} for graded in GRADED_SAMPLE)

    @property
    def every_sim_values(self) -> tuple[dict[str, float], ...]:
        """The brief's seed's truths, then each sampled attempt's."""
        return (self.sim_values, *self.attempt_sim_values)


def numeric(drill: Drill, with_answer: bool | None = None) -> list[NumericQuestion]:
    """The drill's numeric questions: all, those with a formula answer (True) or simulation-graded (False)."""
    out = [q for q in drill.all_questions() if isinstance(q, NumericQuestion)]
    if with_answer is None:
        return out
    return [q for q in out if (q.answer is not None) == with_answer]


def close(value: float, figure: float, rel: float) -> bool:
    return math.isclose(value, figure, rel_tol=rel, abs_tol=1e-9)


def templates(drill: Drill) -> Iterator[tuple[str, str, str]]:
    """Every text a candidate reads, as (part id, where in the drill, template): the loader's own walk."""
    for text in texts(drill):
        yield text.part.id, ".".join(str(item) for item in text.loc[2:]), text.template


def fixed_texts(drill: Drill) -> list[tuple[str, str]]:
    """Text shown as written in every variant (no placeholders): part titles, rubric rows, the givens' notes."""
    found = [(f"parts.{p.id}.title", p.title) for p in drill.parts]
    found += [(f"rubric.{s.id}", f"{s.name} {s.strong} {s.ok} {s.weak}") for s in drill.rubric]
    found += [(f"givens.{g.name}.note", g.note or "") for g in drill.givens]
    return found
