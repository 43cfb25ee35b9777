"""Content rules on the written values: answers a candidate can lock in, placeholders that name something."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from drills.formulas import FormulaError, placeholders, render
from drills.lint.registry import register, the_break, the_question
from drills.lint.walk import Finding, questions, stand_ins, texts
from drills.schema import Drill, NumericQuestion


def rule_answerable(drill: Drill, values: Mapping[str, float]) -> Iterator[Finding]:
    """A formula answer must be a number a candidate can lock in: the lock-in refuses guesses below zero."""
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.answer is not None and values.get(q.id, 0.0) < 0:
            yield Finding(loc + ("answer",), f"gives {values[q.id]:g}, below zero, but candidates cannot lock in a "
                                             "negative guess; ask for the size of the change instead")


def rule_placeholders(drill: Drill, values: Mapping[str, float]) -> Iterator[Finding]:
    """Each {placeholder} names a given, a derived value or an answer, with a format that works."""
    check = stand_ins(drill, values)
    for text in texts(drill):
        try:
            unknown = [name for name in placeholders(text.template) if name not in check]
            if unknown:
                yield Finding(text.loc, f"text refers to unknown name {{{unknown[0]}}} "
                                        "(not a given, a derived value or a numeric answer)")
                continue
            render(text.template, check)
        except FormulaError as exc:
            yield Finding(text.loc, str(exc))


register("formulas", 60, lambda s: s.formula_findings, lambda d: the_question(d).update(answer="rate / (window - 60)"))
register("answerable", 70, lambda s: rule_answerable(s.drill, s.values),
         lambda d: the_question(d).update(answer="-rate * window"))
register("placeholders", 80, lambda s: rule_placeholders(s.drill, s.values),
         lambda d: the_break(d).update(body=the_break(d)["body"] + " {no_such_value}"))
