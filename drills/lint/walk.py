"""Walking a drill: where each text and question sits, what a finding is, and which numbers are labels.

Every family of content rules (drills.lint.*) reads a drill through these.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping

from drills.schema import ChoiceQuestion, Drill, NotesQuestion, NumericQuestion, Part

SIM_PLACEHOLDER = 1.0  # stands in for simulation answers while text is checked at load time

# Parts that set the scene may state its figures in words; every later text names them as {placeholders}.
SCENARIO_KINDS = frozenset({"prompt", "board", "baseline"})


# A number typed in a text: digits with optional thousands separators or decimals, not part of a name.
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")

# Numbers that name or label something rather than state a quantity; a drill's text may type these.
LABELS = re.compile(
    r"\b\d{1,2}:\d{2}(:\d{2})?\b"                      # clock times: 15:00, 15:00:30
    r"|\b(200|201|202|204|301|302|304|400|401|402|403|404|409|429|500|502|503|504)s?\b"
    r"|\b[1-5]xx\b"                                    # HTTP statuses and classes
    r"|\bBreaks \d+ and \d+\b"
    r"|\b(Ch|JS|Postgres|Region|Break|Drill|Part|Step)\s+\d+\b"
    r"|\b(19|20)\d\d\b"                                # years
    r"|\bp(50|90|95|99|999)\b"                         # percentiles by name
    r"|\b80% range\b"                                  # the app's own calibration range
    r"|\b1/"                                           # a probability written as 1/{n}
    r"|-1\b"                                           # 'no limit' settings
)

Loc = tuple[str | int, ...]
# Labels that name something with a number in it, never a quantity: what rule_varied_figures lets a text type
# even when the number equals a varied given. Unlike LABELS, no years and no HTTP statuses.
NAMES = re.compile(
    r"\b\d{1,2}:\d{2}(:\d{2})?\b"
    r"|\bBreaks \d+ and \d+\b"
    r"|\b(Ch|JS|Postgres|Region|Break|Drill|Part|Step)\s+\d+\b"
    r"|\bp(50|90|95|99|999)\b"
    r"|\b80% range\b"
    r"|\b1/"
    r"|-1\b"
)
NO_LABELS = re.compile(r"\b\d{1,2}:\d{2}(:\d{2})?\b|\bp(50|90|95|99|999)\b|\b80% range\b")  # clocks, percentile names, the app's range


@dataclass(frozen=True)
class Finding:
    """A broken rule, before it is placed in a file: where (keys and list indexes) and what is wrong."""

    loc: Loc
    message: str
    rule: str = ""   # the registered rule that found it (drills.lint.registry)

# -- walking a drill -------------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    """One text a candidate reads, where it sits, and the part it belongs to."""

    part: Part
    loc: Loc
    template: str


def questions(drill: Drill) -> Iterator[tuple[Loc, NumericQuestion | ChoiceQuestion | NotesQuestion]]:
    """Every question with its location: a part's own questions, then its follow-up's."""
    for p_index, part in enumerate(drill.parts):
        for q_index, q in enumerate(part.questions):
            yield ("parts", p_index, "questions", q_index), q
        if part.followup:
            for q_index, q in enumerate(part.followup.questions):
                yield ("parts", p_index, "followup", "questions", q_index), q


def texts(drill: Drill) -> Iterator[Text]:
    """Every templated text in the drill: bodies, reveal sections, follow-ups, prompts, answers, options."""
    for p_index, part in enumerate(drill.parts):
        base: Loc = ("parts", p_index)
        yield Text(part, base + ("body",), part.body)
        for s_index, section in enumerate(part.reveal):
            yield Text(part, base + ("reveal", s_index, "text"), section.text)
        if part.followup:
            yield Text(part, base + ("followup", "prompt"), part.followup.prompt)
            yield Text(part, base + ("followup", "answer"), part.followup.answer)
    parts = drill.parts
    for loc, q in questions(drill):
        part = parts[loc[1]]
        yield Text(part, loc + ("prompt",), q.prompt)
        for attr in ("strong_answer", "explain"):
            if getattr(q, attr, ""):
                yield Text(part, loc + (attr,), getattr(q, attr))
        for o_index, option in enumerate(getattr(q, "options", ())):
            yield Text(part, loc + ("options", o_index, "text"), option.text)
        for h_index, hint in enumerate(getattr(q, "hints", ())):
            yield Text(part, loc + ("hints", h_index, "text"), hint.text)



def stand_ins(drill: Drill, values: Mapping[str, float]) -> dict[str, float]:
    """The values text is checked against: simulation answers, and formulas that failed (already reported),
    stand in as SIM_PLACEHOLDER."""
    check = dict(values)
    names = [d.name for d in drill.derived] + [q.id for _, q in questions(drill) if isinstance(q, NumericQuestion)]
    for name in names:
        check.setdefault(name, SIM_PLACEHOLDER)
    return check


def strip(template: str, labels: re.Pattern[str] = LABELS) -> str:
    """The template without code, list markers, placeholders and label numbers: what is left are figures."""
    text = re.sub(r"```.*?```", "", template, flags=re.S)     # code blocks are code, not figures
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"(?m)^\s*\d+\.\s", "", text)              # numbered list markers
    text = re.sub(r"\{[^{}]*\}", "", text)                    # placeholders are what we want
    return labels.sub("", text)


def literal_figures(template: str, labels: re.Pattern[str] = LABELS) -> set[str]:
    """Numbers the template types itself instead of naming a given or an answer."""
    return set(NUMBER.findall(strip(template, labels)))


def figures_in(text: str) -> set[Decimal]:
    return {Decimal(n.replace(",", "")) for n in NUMBER.findall(text)}

