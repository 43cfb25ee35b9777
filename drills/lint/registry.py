"""The registry of content rules: each rule with the one minimal drill that breaks it and nothing else.

A rule is registered with `register`, giving a function from a `Subject` (the drill and what the rules share
about it: its values and its sampled draws) to findings, and `breaks`, an edit of BASE that only that rule
refuses. tests/test_lint_registry.py builds one test per rule from here, so a rule cannot exist without a case.
"""
from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from drills.draws import LOAD_DRAWS
from drills.lint.numbers import Draw, compute_values, drawn_variants
from drills.lint.walk import Finding
from drills.schema import Drill


@dataclass
class Subject:
    """A drill under check, and what several rules need about it, computed once."""

    drill: Drill
    file_stem: str | None = None
    draws: int = LOAD_DRAWS

    @cached_property
    def _computed(self) -> tuple[dict[str, float], list[Finding]]:
        return compute_values(self.drill)

    @property
    def values(self) -> dict[str, float]:
        """Every given, derived value and formula answer as written."""
        return self._computed[0]

    @property
    def formula_findings(self) -> list[Finding]:
        return self._computed[1]

    @cached_property
    def drawn(self) -> list[Draw]:
        """The sampled draws and the corners of the ranges, with their values and failing formulas."""
        return drawn_variants(self.drill, self.draws)


@dataclass(frozen=True)
class Rule:
    """One content rule: its name, what it holds, how to run it, and the edit of BASE that breaks only it."""

    name: str
    order: int
    check: Callable[[Subject], Iterable[Finding]] = field(repr=False)
    breaks: Callable[[dict], None] = field(repr=False)
    doc: str = ""
    needs_draws: bool = False   # runs only when every formula works as written (draws would repeat the error)


RULES: dict[str, Rule] = {}


def register(name: str, order: int, check: Callable[[Subject], Iterable[Finding]], breaks: Callable[[dict], None],
             doc: str = "", needs_draws: bool = False) -> Rule:
    """Add a rule; `breaks` edits a copy of BASE into the smallest drill this rule alone refuses."""
    if name in RULES:
        raise ValueError(f"content rule {name!r} is registered twice")
    RULES[name] = Rule(name, order, check, breaks, doc or (getattr(check, "__doc__", "") or ""), needs_draws)
    return RULES[name]


def run_rules(subject: Subject, rules: Iterable[Rule] | None = None) -> list[Finding]:
    """Every registered rule over one drill, in their order; each finding names the rule that made it."""
    findings: list[Finding] = []
    for rule in sorted(rules if rules is not None else RULES.values(), key=lambda r: r.order):
        if rule.needs_draws and subject.formula_findings:
            continue
        findings += [dataclasses.replace(f, rule=rule.name) for f in rule.check(subject)]
    return findings


# The smallest drill that passes every rule: a scene, one break with a numeric question, a worked answer, and a
# rate drawn afresh by every attempt (1,000 values) so its truth moves. Each rule's `breaks` edits a deep copy of it.
BASE: dict = {
    "id": "base",
    "title": "A base drill",
    "summary": "Jobs arrive at a steady rate; count them.",
    "time_box_min": 10,
    "givens": [
        {"name": "rate", "value": 5, "unit": "jobs/s", "note": "Jobs arriving each second",
         "vary": {"low": 2, "high": 1001, "step": 1}},
        {"name": "window", "value": 60, "unit": "s", "note": "How long we watch"},
    ],
    "parts": [
        {"id": "scene", "title": "The scene", "kind": "prompt", "minutes": 2,
         "body": "Jobs reach one queue at a steady pace."},
        {"id": "only", "title": "The count", "kind": "break", "minutes": 8,
         "body": "Jobs arrive at {rate} a second, and we watch for {window} s.",
         "questions": [
             {"id": "per_window", "kind": "numeric", "prompt": "How many jobs arrive while we watch?",
              "unit": "jobs", "answer": "rate * window", "tolerance": {"kind": "relative", "value": 0.1},
              "decimals": 0, "skills": ["sizing"]},
         ],
         "reveal": [{"stage": "worked", "text": "{rate} × {window} = **{per_window:,.0f} jobs**."}]},
    ],
    "rubric": [{"id": "sizing", "name": "Sizing", "strong": "Works it out", "ok": "Gets there", "weak": "Guesses"}],
    "verdict": {"strong_needed": 1, "pass_message": "Well done.", "short_message": "Not yet."},
}


def base() -> dict:
    """A fresh copy of BASE to edit."""
    return copy.deepcopy(BASE)


def broken_case(rule: Rule) -> dict:
    """BASE with `rule`'s breaking edit applied."""
    data = base()
    rule.breaks(data)
    return data


# Edits the cases share: the break, its numeric question, and a varying rate with 1,000+ values to draw.
def the_break(data: dict) -> dict:
    return data["parts"][1]


def the_question(data: dict) -> dict:
    return the_break(data)["questions"][0]


def vary_rate(data: dict, vary: dict | None = None) -> None:
    data["givens"][0]["vary"] = vary or {"low": 2, "high": 1001, "step": 1}
