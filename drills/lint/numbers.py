"""A drill's numbers: every given, derived value and formula answer, as written and in each sampled draw."""
from __future__ import annotations

import re
from collections.abc import Mapping

from drills.draws import LOAD_DRAWS, drawn_givens, given_uses, joint_conditions, meets, sampled
from drills.formulas import FormulaError, evaluate
from drills.lint.walk import Finding, Loc, questions
from drills.schema import Drill, NumericQuestion


def compute_values(drill: Drill) -> tuple[dict[str, float], list[Finding]]:
    """Every given, derived value and formula answer; a formula that fails is a finding, and so is not
    repeated for the formulas that use it."""
    values: dict[str, float] = {g.name: g.value for g in drill.givens}
    findings: list[Finding] = []
    failed: set[str] = set()

    def attempt(name: str, expr: str, loc: Loc) -> None:
        if failed and failed & set(re.findall(r"[A-Za-z_]\w*", expr)):   # no scan while nothing failed
            failed.add(name)
            return
        try:
            values[name] = evaluate(expr, values)
        except FormulaError as exc:
            failed.add(name)
            findings.append(Finding(loc, str(exc)))

    for i, item in enumerate(drill.derived):
        attempt(item.name, item.expr, ("derived", i, "expr"))
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.answer is not None:
            attempt(q.id, q.answer, loc + ("answer",))
    return values, findings


def variant_values(drill: Drill, variant: int) -> tuple[dict[str, float], list[Finding]]:
    """Every given, derived value and formula answer of an attempt's draw, and any formula that fails on it,
    or a joint condition (`vary.when`) the draw breaks: such a draw is refused, never shown."""
    givens = drawn_givens(drill, variant)
    values, findings = values_for(drill, givens)
    if not meets(drill, givens):
        conditions = joint_conditions(drill)
        uses = given_uses(drill)
        reads = ", ".join(f"{name}={givens[name]:g}" for name in sorted(set().union(*map(uses, conditions))))
        findings.append(Finding(("givens",), f"draw {variant} breaks a joint condition, "
                                             f"{' and '.join(conditions)}, with {reads}"))
    return values, findings


Draw = tuple[str, Mapping[str, float], list[Finding]]   # a label, the values it gives, the formulas failing on it
AS_WRITTEN = "the written numbers"


def values_for(drill: Drill, givens: Mapping[str, float]) -> tuple[dict[str, float], list[Finding]]:
    """Every derived value and formula answer on these givens, and any formula that fails on them."""
    return compute_values(drill.model_copy(update={"givens": tuple(g.model_copy(update={"value": givens[g.name]})
                                                                   for g in drill.givens)}))


def drawn_variants(drill: Drill, draws: int = LOAD_DRAWS) -> list[Draw]:
    """`draws` seeded draws and the corners of the vary ranges, their values and failing formulas; none when
    no given varies. Each label names the draw and the givens it drew, so a message quoting it shows why."""
    return [(f"{label} ({drawn_label(drill, givens)})", *values_for(drill, givens))
            for label, givens in sampled(drill, draws)]


def drawn_label(drill: Drill, givens: Mapping[str, float]) -> str:
    """The varying givens a draw moved off their written values, as `name=value` ("as written" when none)."""
    moved = [f"{g.name}={givens[g.name]:g}" for g in drill.givens if g.vary is not None and givens[g.name] != g.value]
    return ", ".join(moved) or "every given as written"
