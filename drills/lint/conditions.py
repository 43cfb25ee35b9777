"""Content rules on what a sentence relies on: declared conditions hold in every draw, comparisons are declared,
figures are written one way.

A text states beside it the relations its sentences rely on (`holds:`), and a given may be drawn jointly with
others (`vary.when:`). Both are checked on the written numbers, every sampled draw and the corners of the ranges.
"""
from __future__ import annotations

import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from drills.draws import given_uses, joint_conditions
from drills.formulas import FormulaError, condition_holds
from drills.lint.numbers import AS_WRITTEN, Draw
from drills.lint.registry import register, the_break, vary_rate
from drills.lint.walk import Finding, Loc, questions, stand_ins, texts
from drills.schema import Drill

# Words that compare two figures, or bound one, which a sentence may use only beside a declared condition.
COMPARISON = re.compile(
    r"\b(?:more|fewer|less|greater|larger|smaller|higher|lower|longer|shorter) than\b|\bbelow\b|\babove\b"
    r"|\bexceed\w*|\bclears?\b|\bat (?:least|most)\b|\bjust over\b|\bboth\b|×\s+the\b"
    r"|\bworst case\b|\b(?:every|each) run\b", re.I)
# Words that bound a figure against every outcome: they need a condition wherever the text quotes a figure.
BOUND = re.compile(r"\bworst case\b|\b(?:every|each) run\b", re.I)
_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*)?\}")
# "The table above", "the three fixes below": places in the text, not comparisons.
_PLACE = re.compile(r"\b(?:table|fixes|answers?|chains?|list|steps|section)\s+(?:above|below)\b", re.I)


@dataclass(frozen=True)
class Holder:
    """Something that may declare conditions: where its `holds` sits, what they are, and the texts beside them."""

    loc: Loc
    holds: tuple[str, ...]
    texts: tuple[tuple[Loc, str], ...]


def holders(drill: Drill) -> Iterator[Holder]:
    """Each part (its body), reveal section, follow-up and question, with its conditions and its texts."""
    for p_index, part in enumerate(drill.parts):
        base: Loc = ("parts", p_index)
        yield Holder(base + ("holds",), part.holds, ((base + ("body",), part.body),))
        for s_index, section in enumerate(part.reveal):
            at = base + ("reveal", s_index)
            yield Holder(at + ("holds",), section.holds, ((at + ("text",), section.text),))
        if part.followup is not None:
            at = base + ("followup",)
            yield Holder(at + ("holds",), part.followup.holds,
                         ((at + ("prompt",), part.followup.prompt), (at + ("answer",), part.followup.answer)))
    for loc, q in questions(drill):
        shown = [(loc + ("prompt",), q.prompt)]
        shown += [(loc + (attr,), getattr(q, attr)) for attr in ("strong_answer", "explain") if getattr(q, attr, "")]
        shown += [(loc + ("options", i, "text"), o.text) for i, o in enumerate(getattr(q, "options", ()))]
        shown += [(loc + ("hints", i, "text"), h.text) for i, h in enumerate(getattr(q, "hints", ()))]
        yield Holder(loc + ("holds",), q.holds, tuple(shown))


def _split(prose: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+(?=[A-Z*{(\"])", prose)


def sentences(template: str) -> Iterator[str]:
    """A text's sentences, with each table cell and each list item on its own."""
    for block in re.split(r"\n\s*\n", template):
        prose: list[str] = []
        for line in block.splitlines():
            stripped = line.strip()
            if stripped.startswith("|"):   # a table row compares nothing across its cells
                yield from (cell.strip() for cell in stripped.strip("|").split("|") if cell.strip())
                continue
            if re.match(r"(?:[-*]|\d+\.)\s", stripped) and prose:
                yield from _split(" ".join(prose))
                prose = []
            prose.append(stripped)
        if prose:
            yield from _split(" ".join(prose))


def _names(expr: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_]\w*", expr))


def _sentence_naming(texts: Sequence[tuple[Loc, str]], names: set[str]) -> str:
    """The sentence beside a condition that it speaks for, for the message: one that names its values, a
    comparing one first, then the one naming most of them."""
    best: tuple[int, int, str] | None = None
    for _, template in texts:
        for sentence in sentences(template):
            named = len(names & set(_PLACEHOLDER.findall(sentence)))
            if named:
                rank = (bool(COMPARISON.search(_PLACE.sub("", sentence))), named, sentence.strip())
                if best is None or rank[:2] > best[:2]:
                    best = rank
    if best is not None:
        return best[2]
    return texts[0][1].strip().splitlines()[0] if texts and texts[0][1].strip() else ""


def rule_conditions(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """Every declared condition holds as written and in every draw checked: a `holds` beside a text, and each
    given's `vary.when`. A finding quotes the sentence, the condition and the givens of the draw that breaks it."""
    runs = [(AS_WRITTEN, stand_ins(drill, written))] + [(label, stand_ins(drill, values))
                                                        for label, values, failures in drawn if not failures]
    checks: list[tuple[Loc, str, str]] = []
    for holder in holders(drill):
        for index, condition in enumerate(holder.holds):
            checks.append((holder.loc + (index,), condition, _sentence_naming(holder.texts, _names(condition))))
    for g_index, given in enumerate(drill.givens):
        for index, condition in enumerate(given.vary.when if given.vary is not None else ()):
            checks.append((("givens", g_index, "vary", "when", index), condition, ""))
    through = given_uses(drill)
    answers = {q.id: q.answer for _, q in questions(drill) if getattr(q, "answer", None) and q.kind == "numeric"}

    def uses(condition: str) -> set[str]:   # the givens a condition reaches, through answers too
        return through(condition) | set().union(*(through(answers[n]) for n in _names(condition) if n in answers))
    for loc, condition, sentence in checks:
        for label, values in runs:
            try:
                held = condition_holds(condition, values)
            except FormulaError as exc:
                yield Finding(loc, str(exc))
                break
            if not held:
                said = f"{sentence!r} relies on {condition}, " if sentence else f"{condition} "
                where = "as written" if label == AS_WRITTEN else f"in {label}"
                reads = ", ".join(f"{name}={values[name]:g}" for name in sorted(uses(condition)))
                yield Finding(loc, f"{said}which fails {where}, where it reads {reads}; draw the givens "
                                   "jointly (`vary.when`), narrow their ranges, or reword the sentence")
                break


def broken_holds(drill: Drill, values: Mapping[str, float]) -> str | None:
    """The first `holds:` condition of the drill these values break, checked as rule_conditions checks it
    (simulation answers stand in); None when every one holds. One that cannot be evaluated here (it names a
    question a scoped drill left out, or is no comparison) is the rules' to report, not a break."""
    check = stand_ins(drill, values)
    for holder in holders(drill):
        for condition in holder.holds:
            try:
                if not condition_holds(condition, check):
                    return condition
            except FormulaError:
                continue
    return None


def rule_comparisons(drill: Drill) -> Iterator[Finding]:
    """A sentence that compares two figures it names ("more than", "below", "clears", "at least", "both",
    "N× the") must declare the condition it relies on beside it (`holds:`), naming one of those figures;
    otherwise some draw may make it false. A sentence that bounds the text's figures ("worst case", "every
    run") needs a condition over every figure it names, so one that names none must be reworded."""
    for holder in holders(drill):
        declared = set().union(*(_names(c) for c in holder.holds)) if holder.holds else set()
        for loc, template in holder.texts:
            named_in_text = set(_PLACEHOLDER.findall(template))
            for sentence in sentences(template):
                words = {m.group(0).lower() for m in COMPARISON.finditer(_PLACE.sub("", sentence))}
                if not words:
                    continue
                named = set(_PLACEHOLDER.findall(sentence))
                bound = any(BOUND.fullmatch(w) for w in words)
                # A bound on every outcome is backed only by a condition over every figure the sentence names.
                if bound and named_in_text and not (named and named <= declared):
                    yield Finding(loc, f"{sentence.strip()!r} says '{sorted(words)[0]}' of figures this text "
                                       "computes; that is a claim about every outcome, so declare the condition "
                                       "it relies on (`holds:`) or say what the figure is (an estimate, a floor)")
                elif not bound and len(named) >= 2 and not declared & named:
                    yield Finding(loc, f"{sentence.strip()!r} compares {', '.join('{' + n + '}' for n in sorted(named))}"
                                       f" ('{sorted(words)[0]}') with no condition declared beside it; add "
                                       "`holds:` with the relation it relies on, naming one of them")


_SEPARATED = re.compile(r"[,_]")


def rule_number_formats(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """A figure that reaches 1,000 in some draw is shown with a thousands separator ({rate:,.0f}), as the
    default format already does, so 1,667 events/s never sits beside 9000 units."""
    runs = [written] + [values for _, values, failures in drawn if not failures]
    for text in texts(drill):
        for _, field, spec, _ in string.Formatter().parse(text.template):
            if not field or not spec or _SEPARATED.search(spec) or spec == "clock":
                continue
            big = next((v[field] for v in runs if field in v and abs(v[field]) >= 1000), None)
            if big is not None:
                yield Finding(text.loc, f"{{{field}:{spec}}} shows {big:{spec}} without a thousands separator; "
                                        f"write {{{field}:,{spec}}}")


def _unbacked_comparison(data: dict) -> None:
    the_break(data)["reveal"][0]["text"] += " That is more than {rate} × {window}."


def _broken_condition(data: dict) -> None:
    vary_rate(data)
    the_break(data)["reveal"][0]["holds"] = ["per_window < 30000"]


register("conditions", 170, lambda s: rule_conditions(s.drill, s.values, s.drawn), _broken_condition,
         needs_draws=True)
register("comparisons", 180, lambda s: rule_comparisons(s.drill), _unbacked_comparison)
register("number_formats", 190, lambda s: rule_number_formats(s.drill, s.values, s.drawn),
         lambda d: (vary_rate(d), the_break(d)["reveal"][0].update(text="That is **{per_window:.0f} jobs**.")),
         needs_draws=True)

__all__ = ["COMPARISON", "Holder", "broken_holds", "holders", "joint_conditions", "rule_comparisons", "rule_conditions",
           "rule_number_formats", "sentences"]
