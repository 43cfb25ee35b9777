"""Content rules on figures in the text: named not typed, none equal to a drawn given, no truth shown early."""
from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from decimal import Decimal

from drills.formulas import FormulaError, format_quantity, half_up, render
from drills.lint.numbers import Draw
from drills.lint.paths import shown_on_arrival
from drills.lint.registry import register, the_break, vary_rate
from drills.lint.walk import (LABELS, NAMES, NO_LABELS, SCENARIO_KINDS, Finding, Loc, figures_in, literal_figures,
                              questions, stand_ins, strip, texts)
from drills.schema import Drill, NumericQuestion


def typed_figures(drill: Drill, labels: re.Pattern[str] = LABELS,
                  free_parts: Collection[str] | None = None) -> list[Finding]:
    """Texts that type a figure instead of a {placeholder}. `free_parts`: ids of parts allowed to type
    figures; by default the parts that set the scene (prompt, board, baseline)."""
    findings = []
    for text in texts(drill):
        free = text.part.id in free_parts if free_parts is not None else text.part.kind in SCENARIO_KINDS
        found = set() if free else literal_figures(text.template, labels)
        if found:
            findings.append(Finding(text.loc, f"types {', '.join(sorted(found))} into the text; name the given, "
                                              "derived value or answer as a {placeholder} instead"))
    return findings


LEAK_DRAWS = 8   # draws the leak rule renders besides the written numbers (a leak follows every one of them)


def _visible(drill: Drill) -> Iterator[tuple[Loc, str]]:
    """Every text a candidate can read before any worked answer: the picker opens any part, so every part's
    body, prompts, options, hints and follow-up prompt."""
    for p_index, part in enumerate(drill.parts):
        for loc, template in shown_on_arrival(part):
            yield ("parts", p_index) + loc, template
    for loc, q in questions(drill):
        for h_index, hint in enumerate(getattr(q, "hints", ())):
            yield loc + ("hints", h_index, "text"), hint.text



def rule_no_leaks(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """No text a candidate sees before a question's worked answer states that question's truth at the
    precision the truth is shown with: not another part's body or prompt, an option, or any hint (a hint may
    state only its own question's inputs). A figure counts when it follows the truth in the written
    numbers and in every draw checked, so a coincidence in one set of numbers is not a leak."""
    asked = [(loc, q) for loc, q in questions(drill) if isinstance(q, NumericQuestion) and q.answer is not None]
    runs = [written] + [values for _, values, failures in drawn if not failures and _][:LEAK_DRAWS]
    check = [stand_ins(drill, values) for values in runs]
    givens = {g.name for g in drill.givens}
    given_values = {Decimal(repr(float(g.value))) for g in drill.givens}
    for loc, template in _visible(drill):
        # A given's own figure states the given (a coincidence with a truth is rule_variants' to catch).
        own = re.sub(r"\{(\w+)[^{}]*\}", lambda m: "" if m[1] in givens else m[0], template)
        try:
            shown = [figures_in(strip(render(own, values), NO_LABELS)) for values in check]
            typed = figures_in(strip(own))
            shown = [figures - (typed & given_values) for figures in shown]
        except FormulaError:
            continue   # rule_placeholders reports it
        for q_loc, q in asked:
            if all(half_up(values[q.id], q.decimals) in figures for values, figures in zip(check, shown)):
                truth = format_quantity(written[q.id], q.unit, q.decimals)
                yield Finding(loc, f"states {truth}, the truth of {q.id}, before its worked answer; "
                                   "say it without the figure, or ask the question before the text that needs it")


def rule_varied_figures(drill: Drill) -> Iterator[Finding]:
    """A number typed in any text that equals a given the draws change is an error, whatever it looks like
    (a year, an HTTP status, a scenario's figure): a retake would show the written number beside a drawn one.
    Only names that carry a number (Break 2, Region 1, p99, clock times; `NAMES`) are not read as numbers."""
    varied: dict[Decimal, str] = {}
    for g in drill.givens:
        if g.vary is not None:
            varied.setdefault(Decimal(repr(float(g.value))), g.name)
    if not varied:
        return
    for text in texts(drill):
        typed = figures_in(strip(text.template, NAMES))
        hits = sorted({varied[n] for n in typed if n in varied})
        if hits:
            yield Finding(text.loc, f"types the written value of {', '.join(hits)}, which each attempt draws afresh; "
                                    "name it as a {placeholder}, or reword so no figure equals it")


def _typed_varied_rate(data: dict) -> None:
    vary_rate(data)
    data["parts"][0]["body"] += " Up to 5 of them a second."   # the scene may type figures, not a drawn one


register("typed_figures", 90, lambda s: typed_figures(s.drill),
         lambda d: the_break(d)["reveal"][0].update(text="That is 300 jobs."))
register("varied_figures", 100, lambda s: rule_varied_figures(s.drill), _typed_varied_rate)
register("no_leaks", 150, lambda s: rule_no_leaks(s.drill, s.values, s.drawn),
         lambda d: d["parts"][0].update(body="About {per_window:,.0f} jobs will arrive."), needs_draws=True)
