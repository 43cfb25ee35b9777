"""Content rules on drawn numbers: every draw sensible and different, and enough of them."""
from __future__ import annotations

import math
import re
import string
from collections.abc import Iterator, Mapping, Sequence

from drills.draws import asked_givens, given_uses
from drills.lint.numbers import Draw
from drills.lint.registry import register, vary_rate
from drills.lint.walk import Finding, questions, texts
from drills.scoring import grade_numeric
from drills.schema import Drill, NumericQuestion


def _simulated_givens(drill: Drill) -> set[str]:
    """The givens the runs of the drill's simulation questions read (their presets' inputs and mirrors)."""
    embedded = {q.sim for q in drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    if not embedded:
        return set()
    from sims.presets import PRESETS   # only drills that embed a simulation pay for importing the models

    uses = given_uses(drill)
    read: set[str] = set()
    for preset in (PRESETS[p] for p in embedded if p in PRESETS):
        read |= set().union(*(uses(name) for name in preset.inputs))
        read |= set().union(*(uses(expr) for expr in (preset.mirrors or {}).values() if expr))
    return read


def rule_variants(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """Drawn numbers stay sensible: every draw's formulas work, no answer drops below zero, no answer comes
    out equal to a given its formula uses while differing from it as written (the board would then show the
    answer), and every draw differs from the written numbers in a given some question uses."""
    varying = [(i, g) for i, g in enumerate(drill.givens) if g.vary is not None]
    for i, given in varying:
        allowed = given.vary.values()
        if not any(math.isclose(given.value, v, rel_tol=1e-9, abs_tol=1e-12) for v in allowed):
            yield Finding(("givens", i, "vary"), f"the written value {given.value:g} is not one of the values a "
                                                 f"draw takes ({min(allowed):g} to {max(allowed):g}"
                                                 f"{', in steps of ' + format(given.vary.step, 'g') if given.vary.step else ''}"
                                                 "); write one of them, so the written numbers are a draw too")
    asked = asked_givens(drill) | _simulated_givens(drill)
    if varying and not any(g.name in asked for _, g in varying):
        yield Finding(("givens", varying[0][0], "vary"), "no given a question uses varies, so every retake would "
                                                        "ask the written numbers; vary one a question's formula uses")
    shown = {g.name: g.vary.values() for _, g in varying}
    for text in texts(drill):   # a drawn value the text rounds away would state a number the drill does not use
        for _, field, spec, _ in string.Formatter().parse(text.template):
            decimals = re.fullmatch(r"[,_]?\.(\d+)[f%]", spec or "")
            if field in shown and decimals:
                places = int(decimals.group(1)) + (2 if spec.endswith("%") else 0)
                lost = [v for v in shown[field] if not math.isclose(round(v, places), v, abs_tol=1e-12)]
                if lost:
                    yield Finding(text.loc, f"{{{field}:{spec}}} rounds the drawn value {lost[0]:g} away; "
                                            f"give it more decimals or draw values it shows exactly")
    answers = [q for _, q in questions(drill) if isinstance(q, NumericQuestion) and q.answer is not None]
    uses = given_uses(drill)
    reported: set[tuple] = set()   # each problem once, named by the first draw that shows it

    def once(*key) -> bool:
        fresh = key not in reported
        reported.add(key)
        return fresh
    for label, values, failures in drawn:
        for failure in failures:
            if once("fails", failure.loc):
                yield Finding(failure.loc, f"in {label}: {failure.message}")
        if label.startswith("draw") and asked and all(values[n] == written[n] for n in asked) and once("same"):
            yield Finding(("givens",), f"{label} asks every question on the written numbers")
        if label.startswith("draw") and answers and not failures and once("passable", label) and not any(
                grade_numeric(written[q.id], values[q.id], q.tolerance) < 1 for q in answers):
            if once("passable"):
                yield Finding(("givens",), f"{label} draws numbers the written answers still pass (every answer "
                                           "moves less than its tolerance); draw values further from the written ones")
        for q in answers:
            value = values.get(q.id)
            if value is None:
                continue
            if value < 0 and written.get(q.id, 0.0) >= 0 and once("negative", q.id):   # else rule_answerable's
                yield Finding(("givens",), f"in {label}, {q.id} gives {value:g}, below zero")
            same = sorted(n for n in uses(q.answer) if math.isclose(values[n], value, rel_tol=1e-9)
                          and not math.isclose(written[n], written[q.id], rel_tol=1e-9))
            if same and once("equal", q.id):
                yield Finding(("givens",), f"in {label}, {q.id} equals the given {same[0]} "
                                           f"({value:g}), so the board would give it away")


# -- what each path shows, and what it must not --------------------------------------------------
# The fewest distinct sets of asked numbers a varying drill's draws may reach: fewer, and a handful of
# throwaway attempts would see every key a later retake can draw.
MIN_DRAW_SPACE = 1000


def rule_draw_space(drill: Drill) -> Iterator[Finding]:
    """A drill that varies draws from enough combinations of the givens its questions use."""
    asked = asked_givens(drill)
    varying = [(i, g) for i, g in enumerate(drill.givens) if g.vary is not None and g.name in asked]
    if not varying:
        return
    space = math.prod(len(g.vary.values()) for _, g in varying)
    if space < MIN_DRAW_SPACE:
        names = ", ".join(g.name for _, g in varying)
        yield Finding(("givens", varying[0][0], "vary"),
                      f"the varying givens the questions use ({names}) make only {space} combinations, so "
                      f"{space} throwaway attempts would see every key a retake can draw; vary more givens or "
                      f"widen their ranges to at least {MIN_DRAW_SPACE} combinations")


register("draw_space", 130, lambda s: rule_draw_space(s.drill), lambda d: vary_rate(d, {"choices": [4, 5, 6]}))
# 1,001 rates within 2% of the written 5: every draw's answer still passes the written one's tolerance.
register("variants", 140, lambda s: rule_variants(s.drill, s.values, s.drawn),
         lambda d: vary_rate(d, {"low": 4.9, "high": 5.1, "step": 0.0002}), needs_draws=True)
