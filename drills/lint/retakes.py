"""Content rules for retakes: a retake must be worked out again, so truths move with the draw and none is typed.

A candidate who finished once knows every truth that is the same in every draw, and a figure typed into the
scene stays the written one while the draw moves the truth it was copied from.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal

from drills.formulas import half_up
from drills.lint.numbers import Draw
from drills.lint.registry import register
from drills.lint.walk import SCENARIO_KINDS, Finding, figures_in, questions, strip
from drills.schema import Drill, NumericQuestion

# The share of a drill's formula truths that may be the same in every draw (those marked `fixed` aside).
MAX_FIXED_SHARE = 0.10


def _moving(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> dict[str, bool]:
    """Each formula truth: True when some draw gives it another value than the written numbers do."""
    runs = [values for _, values, failures in drawn if not failures]
    return {q.id: any(not math.isclose(v[q.id], written[q.id], rel_tol=1e-9, abs_tol=1e-12) for v in runs)
            for _, q in questions(drill) if isinstance(q, NumericQuestion) and q.answer is not None}


def rule_fixed_truths(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """At most a tenth of a varying drill's formula truths may be the same in every draw, unless a truth is
    marked `fixed` with its reason; a truth marked fixed must really be."""
    if not drawn:
        return   # a drill that varies nothing has no retake to differ (draw_space and variants ask for one)
    moving = _moving(drill, written, drawn)
    where = {q.id: loc for loc, q in questions(drill)}
    marked = {q.id for _, q in questions(drill) if isinstance(q, NumericQuestion) and q.fixed}
    for question in sorted(marked & {q for q, moves in moving.items() if moves}):
        yield Finding(where[question] + ("fixed",), f"{question} is marked fixed but moves with the draw; drop "
                                                   "`fixed`")
    fixed = [q for q, moves in moving.items() if not moves and q not in marked]
    allowed = math.floor(MAX_FIXED_SHARE * len(moving))
    if len(fixed) > allowed:
        yield Finding(where[fixed[0]] + ("answer",),
                      f"{len(fixed)} of {len(moving)} formula truths are the same in every draw ({', '.join(fixed)}); "
                      f"at most {allowed} may be, so a retake is worked out again: vary a given each one uses, or "
                      "mark a truth `fixed` with the reason it cannot move")


def rule_typed_truths(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """The parts that set the scene may type figures, but not a truth: a number equal to a moving truth's
    written value ("54 requests will pile up" on the board) is refused, with or without
    `first_attempt_as_written` (an attempt on the written numbers would read its answer, a retake a stale one)."""
    moving = _moving(drill, written, drawn)
    truths: dict[Decimal, str] = {}
    for _, q in questions(drill):
        if isinstance(q, NumericQuestion) and moving.get(q.id):
            truths.setdefault(half_up(written[q.id], q.decimals).normalize(), q.id)
    givens = {Decimal(repr(float(g.value))).normalize() for g in drill.givens}
    for p_index, part in enumerate(drill.parts):
        if part.kind not in SCENARIO_KINDS:
            continue   # elsewhere every typed figure is refused already (typed_figures)
        scene = [(("body",), part.body)] + [(("questions", i, "prompt"), q.prompt) for i, q in enumerate(part.questions)]
        for loc, template in scene:
            for figure in sorted(figures_in(strip(template)) - givens):
                if figure.normalize() in truths:
                    yield Finding(("parts", p_index) + loc,
                                  f"types {figure}, the truth of {truths[figure.normalize()]} as written; a draw "
                                  "moves that truth, so name the value as a {placeholder} or leave it out")


def _fixed_second_question(data: dict) -> None:
    """A second truth over the fixed window alone: 1 of 2 truths the same in every draw, where none may be."""
    data["parts"][1]["questions"].append({"id": "minutes", "kind": "numeric", "prompt": "How many minutes is that?",
                                          "unit": "min", "answer": "window / 60", "decimals": 0,
                                          "tolerance": {"kind": "relative", "value": 0.1}, "skills": ["sizing"]})


def _typed_truth(data: dict) -> None:
    data["parts"][0]["body"] += " About 300 of them will pile up."


register("fixed_truths", 200, lambda s: rule_fixed_truths(s.drill, s.values, s.drawn), _fixed_second_question,
         needs_draws=True)
register("typed_truths", 210, lambda s: rule_typed_truths(s.drill, s.values, s.drawn), _typed_truth, needs_draws=True)

__all__ = ["MAX_FIXED_SHARE", "rule_fixed_truths", "rule_typed_truths"]
