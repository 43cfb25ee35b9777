"""Content rule on limits: a limit and the ordinary level of what it limits keep their order in every draw.

A limit (a cap, a budget, a shed level, an alert, a timeout) is always read against the ordinary level of the
quantity it limits (the normal day's spend, the typical lag, the peak rate): a backstop above the ordinary day
never fires on one, a limit below the peak bites every day. Which side the ordinary level sits on is the story,
so it is a comparison whether or not a sentence spells it out. "Normal spend $6,000/day" in one part and "Shed
by plan: Free at 80% ($5,600)" in another compare two figures with no comparison word between them.

The rule finds such pairs from what the drill says about each figure: a given's name and note, a derived
value's name, a question's id and prompt, and a table's column header and row label (the first cell labels
the figures in the second). Two figures of the same unit, one described as a limit and the other as an
ordinary level, whose order as written changes in some draw checked, must be backed by a declared condition
naming both (`holds:` beside the text, or a given's `vary.when`); the conditions rule then checks that one in
every draw. Shares and ratios (%, x, fraction) are left out: two shares of different wholes are no one quantity.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence

from drills.lint.conditions import holders
from drills.lint.numbers import Draw
from drills.lint.registry import register, the_break, the_question
from drills.lint.walk import Finding, Loc, questions, texts
from drills.schema import Drill, NumericQuestion

# Words that make a figure a limit, and words that make it an ordinary level of what a limit limits.
LIMIT = re.compile(r"\b(?:caps?|limits?|budgets?|thresholds?|backstops?|quotas?|ceilings?|shed(?:s|ding)?"
                   r"|alerts?|timeouts?)\b", re.I)
ORDINARY = re.compile(r"\b(?:normal(?:ly)?|usual(?:ly)?|typical(?:ly)?|ordinary|baseline|everyday|healthy|steady"
                      r"|peak)\b", re.I)
# Units of shares and ratios: two of them are comparable only when they are shares of one whole.
RATIO_UNITS = frozenset({"", "%", "x", "×", "fraction", "ratio", "share"})
_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*)?\}")


def _words(name: str) -> str:
    return name.replace("_", " ")


def _table_labels(template: str) -> Iterator[tuple[str, str]]:
    """(figure, what labels it) for each figure in a table cell: its column's header, and for the figure in a
    row's second cell, the row's first cell."""
    header: list[str] | None = None
    for line in template.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            header = None
            continue
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if all(set(cell) <= set("-: ") for cell in cells):
            continue
        for index, cell in enumerate(cells[1:], start=1):
            label = (header[index] if index < len(header) else "") + (" " + cells[0] if index == 1 else "")
            for name in _PLACEHOLDER.findall(cell):
                yield name, _PLACEHOLDER.sub("", label)


def described(drill: Drill) -> tuple[dict[str, list[str]], dict[str, tuple[Loc, str]]]:
    """What the drill says about each figure, and where each is defined with its unit."""
    says: dict[str, list[str]] = {}
    where: dict[str, tuple[Loc, str]] = {}
    for index, given in enumerate(drill.givens):
        says[given.name] = [_words(given.name), given.note]
        where[given.name] = (("givens", index), given.unit)
    for index, item in enumerate(drill.derived):
        says[item.name] = [_words(item.name)]
        where[item.name] = (("derived", index), item.unit)
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion):
            says[q.id] = [_words(q.id), _PLACEHOLDER.sub("", q.prompt)]
            where[q.id] = (loc, q.unit)
    for text in texts(drill):
        for name, label in _table_labels(text.template):
            says.setdefault(name, []).append(label)
    return says, where


def _order(a: float, b: float) -> int:
    if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
        return 0
    return 1 if a > b else -1


_SIGN = {1: ">", 0: "==", -1: "<"}


def declared_pairs(drill: Drill) -> list[set[str]]:
    """The names each declared condition relates: every `holds:` and every given's `vary.when`."""
    conditions = [c for holder in holders(drill) for c in holder.holds]
    conditions += [c for g in drill.givens if g.vary is not None for c in g.vary.when]
    return [set(re.findall(r"[A-Za-z_]\w*", c)) for c in conditions]


def rule_limits(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """A figure the drill describes as a limit (cap, limit, budget, shed, alert, timeout) and one it describes
    as an ordinary level (normal, usual, typical, baseline, healthy, peak) of the same unit must keep the order
    they have as written in every draw checked, unless a declared condition (`holds:` or `vary.when`) names
    both, which the conditions rule then checks: otherwise some draw tells another story (Free tenants shed
    on an ordinary day)."""
    runs = [(label, values) for label, values, failures in drawn if not failures]
    if not runs:
        return
    says, where = described(drill)
    shown = {name for text in texts(drill) for name in _PLACEHOLDER.findall(text.template)}
    figures = sorted(n for n in shown & set(where) & set(written) if where[n][1].strip() not in RATIO_UNITS)
    limits = [n for n in figures if any(LIMIT.search(s) for s in says[n])]
    ordinary = [n for n in figures if any(ORDINARY.search(s) for s in says[n])]
    backed = declared_pairs(drill)
    for limit in limits:
        for level in ordinary:
            if limit == level or where[limit][1].strip() != where[level][1].strip():
                continue
            if any({limit, level} <= names for names in backed):
                continue
            as_written = _order(written[limit], written[level])
            broken = next(((label, values) for label, values in runs
                           if limit in values and level in values
                           and _order(values[limit], values[level]) != as_written), None)
            if broken is None:
                continue
            label, values = broken
            relation = f"{limit} {_SIGN[as_written]} {level}"
            yield Finding(where[limit][0],
                          f"{limit} is a limit and {level} an ordinary level of the same {where[limit][1]}: as "
                          f"written {relation} ({written[limit]:g} against {written[level]:g}), but in {label} "
                          f"{limit} {_SIGN[_order(values[limit], values[level])]} {level} ({values[limit]:g} "
                          f"against {values[level]:g}), so that draw tells another story. Declare the relation "
                          f"the text relies on (`holds: [\"{relation}\"]` beside it) and draw the givens jointly "
                          "(`vary.when`) or narrow their ranges so it holds in every draw.")


def _limit_below_some_windows(data: dict) -> None:
    # A queue cap of 1,000 jobs against an ordinary window that the drawn rate takes from 120 to 60,060 jobs.
    data["givens"].append({"name": "queue_cap", "value": 1000, "unit": "jobs", "note": "Jobs the queue holds"})
    the_break(data)["body"] += " The queue holds {queue_cap:,.0f} jobs."
    the_question(data)["prompt"] = "How many jobs arrive in a normal window?"


register("limits", 175, lambda s: rule_limits(s.drill, s.values, s.drawn), _limit_below_some_windows,
         needs_draws=True)

__all__ = ["LIMIT", "ORDINARY", "RATIO_UNITS", "declared_pairs", "described", "rule_limits"]
