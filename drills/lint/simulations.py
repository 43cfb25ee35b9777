"""Content rules on simulation-graded questions: the graded run uses the drill's own numbers in every draw."""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from drills.draws import given_uses
from drills.formulas import FormulaError, evaluate
from drills.lint.numbers import AS_WRITTEN, Draw
from drills.lint.registry import register, the_question
from drills.lint.walk import Finding, Loc, questions
from drills.schema import Drill, NumericQuestion

if TYPE_CHECKING:
    from sims.presets import SimPreset


def _numbers(params: object) -> dict[str, float]:
    """The numeric fields of a model's frozen params (switches and names left out)."""
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    return {name: v for name, v in fields.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def rule_simulations(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """A simulation-graded question is graded against a run of the drill's own numbers, as written and in
    every variant.

    Each embedded preset says what every number of its params stands for (`SimPreset.mirrors`): a formula
    over the drill's values, or None for the model's own assumption. Each formula must give the number the
    graded run uses, on the written values and on every variant's; a run follows a variant only through the
    values its preset reads (`inputs`). A run that hard-codes a given the drill varies would show a retake
    the drawn number and grade it against the written one.
    """
    embedded: dict[str, tuple[Loc, str]] = {}
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.sim is not None:
            embedded.setdefault(q.sim, (loc + ("sim",), q.id))
    if not embedded:
        return
    from sims.presets import PRESETS

    runs = [(AS_WRITTEN, written)] + [(label, values) for label, values, failures in drawn if not failures]
    uses = given_uses(drill)
    for preset_id, (loc, question) in embedded.items():
        if preset_id in PRESETS:   # rule_presets names an unknown one
            yield from _run_findings(PRESETS[preset_id], f"simulation preset {preset_id!r} (graded question "
                                     f"{question})", loc, drill, runs, uses)


def _run_findings(preset: SimPreset, name: str, loc: Loc, drill: Drill, runs: Sequence[tuple[str, Mapping[str, float]]],
                  uses: Callable[[str], set[str]]) -> Iterator[Finding]:
    """rule_simulations for one preset: its mirrors are complete, and each holds in every run it grades."""
    mirrors, numbers, written = preset.mirrors or {}, _numbers(preset.params), runs[0][1]
    missing = [field for field in numbers if field not in mirrors]
    if missing:
        yield Finding(loc, f"{name} does not say what its {', '.join(missing)} "
                           f"{'stands' if len(missing) == 1 else 'stand'} for in this drill; in sims/presets.py "
                           "give each a formula over the drill's values in the preset's `mirrors`, or None when "
                           "it is the model's own assumption")
    strays = [field for field in mirrors if field not in numbers]
    if strays:
        yield Finding(loc, f"{name} mirrors {', '.join(strays)}, which its params do not have as numbers")
    undefined = [value for value in preset.inputs if value not in written]
    if undefined:
        yield Finding(loc, f"{name} is built from {', '.join(undefined)}, which this drill does not define")
        return
    pending = {field: expr for field, expr in mirrors.items() if expr is not None and field in numbers}
    read = set().union(*(uses(value) for value in preset.inputs))   # the givens the run follows
    for variant, values in runs:
        try:
            params = preset.params_for(values)
        except (ValueError, TypeError) as exc:
            where = variant if variant == AS_WRITTEN else f"{variant}'s numbers"
            yield Finding(loc, f"{name} cannot build its run from {where}: {exc}")
            return
        for field, expr in list(pending.items()):
            try:
                expected = evaluate(expr, values)
            except FormulaError as exc:
                if variant == AS_WRITTEN:   # a variant's failing formulas are rule_variants' to report
                    del pending[field]
                    yield Finding(loc, f"{name} mirrors {field} by a formula this drill cannot compute: {exc}")
                continue
            actual = getattr(params, field)
            if math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12):
                continue
            del pending[field]
            runs_it = f"runs {field}={actual:g} where this drill's {expr} gives {expected:g}"
            moved = [g for g in drill.givens if g.name in uses(expr) - read and values[g.name] != written[g.name]]
            if variant == AS_WRITTEN:
                yield Finding(loc, f"{name} {runs_it}: the run contradicts the drill as written; make the "
                                   "drill's numbers and the preset agree")
            elif moved:
                drew = ", ".join(f"{g.name} is {values[g.name]:g} (written {g.value:g})" for g in moved)
                names = " and ".join(g.name for g in moved)
                yield Finding(("givens", drill.givens.index(moved[0]), "vary"),
                              f"in {variant}, {drew}, but {name} still {runs_it}: add {names} (or a value "
                              f"derived from it) to the preset's inputs in sims/presets.py and build {field} "
                              f"from it, or stop varying {names}")
            else:
                yield Finding(loc, f"in {variant}, {name} {runs_it}: its build in sims/presets.py must "
                                   f"carry its inputs ({', '.join(preset.inputs)}) into {field}")


def _pool_question(data: dict) -> None:
    """A pool preset mirrors pool_sim_calls and pool_sim_limit, which this drill does not define."""
    data["givens"][0].pop("vary")   # no formula question is left to use a drawn rate
    question = the_question(data)
    question.pop("answer")
    question["sim"] = "concurrency_pool.pool10_rejected"


register("simulations", 160, lambda s: rule_simulations(s.drill, s.values, s.drawn), _pool_question,
         needs_draws=True)
