"""What every drill's content test shares: a drill's brief as data, its numeric questions, its texts.

Each tests/test_content_<drill>.py states its brief's figures in a DrillBrief; test_content_common.py checks them.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

from drills.loader import LoadedDrill
from drills.schema import ChoiceQuestion, Drill, NumericQuestion

Figure = tuple[float, float, str]                   # the brief's figure, relative tolerance, where it says so
SimFigure = tuple[str, float | None, float, str]    # preset id, the brief's figure or None, tolerance, where

# How far option length may point at the answer: the right option at most this much longer than
# the longest wrong one, and strictly the longest in at most this share of a drill's choice questions.
RIGHT_OPTION_MAX_RATIO = 1.15
RIGHT_OPTION_LONGEST_SHARE = 1 / 3

# A number typed in a text: digits with optional thousands separators or decimals, not part of a name.
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")


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


def numeric(drill: Drill, with_answer: bool | None = None) -> list[NumericQuestion]:
    """The drill's numeric questions: all, those with a formula answer (True) or simulation-graded (False)."""
    out = [q for q in drill.all_questions() if isinstance(q, NumericQuestion)]
    if with_answer is None:
        return out
    return [q for q in out if (q.answer is not None) == with_answer]


def close(value: float, figure: float, rel: float) -> bool:
    return math.isclose(value, figure, rel_tol=rel, abs_tol=1e-9)


def templates(drill: Drill) -> Iterator[tuple[str, str, str]]:
    """Every text a candidate reads, as (part id, where in the part, template)."""
    for part in drill.parts:
        yield part.id, "body", part.body
        for section in part.reveal:
            yield part.id, section.stage, section.text
        questions = list(part.questions)
        if part.followup:
            yield part.id, "followup.prompt", part.followup.prompt
            yield part.id, "followup.answer", part.followup.answer
            questions += list(part.followup.questions)
        for q in questions:
            yield part.id, q.id, q.prompt
            for extra in (getattr(q, "strong_answer", ""), getattr(q, "explain", "")):
                if extra:
                    yield part.id, q.id, extra
            for option in getattr(q, "options", ()):
                yield part.id, q.id, option.text


def strip(template: str, labels: re.Pattern[str]) -> str:
    """The template without code, list markers, placeholders and label numbers: what is left are figures."""
    text = re.sub(r"```.*?```", "", template, flags=re.S)     # code blocks are code, not figures
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"(?m)^\s*\d+\.\s", "", text)              # numbered list markers
    text = re.sub(r"\{[^{}]*\}", "", text)                    # placeholders are what we want
    return labels.sub("", text)


def literal_figures(template: str, labels: re.Pattern[str]) -> set[str]:
    """Numbers the template types itself instead of naming a given or an answer."""
    return set(_NUMBER.findall(strip(template, labels)))


@dataclass(frozen=True)
class OptionLengths:
    """One choice question's right option against its longest wrong one, in characters as the candidate reads them."""

    question: str
    right: int
    longest_distractor: int

    @property
    def right_is_longest(self) -> bool:
        return self.right > self.longest_distractor


def option_lengths(drill: Drill, render: Callable[[str], str] = lambda text: text) -> list[OptionLengths]:
    """Every choice question of the drill, its options rendered by `render` before they are measured."""
    out = []
    for q in drill.all_questions():
        if not isinstance(q, ChoiceQuestion):
            continue
        right = next(len(render(o.text)) for o in q.options if o.id == q.answer)
        longest = max(len(render(o.text)) for o in q.options if o.id != q.answer)
        out.append(OptionLengths(q.id, right, longest))
    return out


def length_giveaways(lengths: list[OptionLengths]) -> list[str]:
    """How option length would let a candidate pick the right answer without knowing it; empty when it cannot."""
    problems = [f"{m.question}: right option {m.right} chars, longest wrong one {m.longest_distractor}"
                for m in lengths if m.right > RIGHT_OPTION_MAX_RATIO * m.longest_distractor]
    longest = [m.question for m in lengths if m.right_is_longest]
    if len(longest) > RIGHT_OPTION_LONGEST_SHARE * len(lengths):
        problems.append(f"the right option is the longest in {len(longest)} of {len(lengths)} questions: {longest}")
    return problems
