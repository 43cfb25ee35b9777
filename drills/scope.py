"""Shorter attempts cut from a whole drill: one break on its own clock, or the essentials path.

A scoped drill is an ordinary LoadedDrill with its own id (``one_tenant~break2``), so scoring, the
time box, results and the instructor board treat it as a drill of its own without knowing about scopes.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from drills.loaded import LoadedDrill
from drills.schema import ChoiceQuestion, Drill, NotesQuestion, Part

SEPARATOR = "~"
FULL = "full"
ESSENTIALS = "essentials"
CONTEXT_KINDS = ("prompt", "board", "baseline")   # the parts a single-break attempt keeps around its break

# A reader's pace and the thinking a lock-in takes, for checking that a path fits its clock. Worked
# answers are read more quickly than a scenario: the candidate is checking, not planning.
READ_WPM = 200
SKIM_WPM = 300
THINK_MIN = {"numeric": 1.5, "choice": 1.0, "notes": 2.5}


@dataclass(frozen=True)
class Scope:
    """One way to take a drill: its scope id, label for the catalogue, the minutes on its clock, and the minutes
    of reading and thinking it asks for (estimated_minutes of the cut)."""

    id: str
    label: str
    minutes: float
    questions: int
    work_min: float = 0.0


def scoped_id(drill_id: str, scope: str) -> str:
    return drill_id if scope == FULL else f"{drill_id}{SEPARATOR}{scope}"


def split_id(drill_id: str) -> tuple[str, str]:
    base, _, scope = drill_id.partition(SEPARATOR)
    return base, scope or FULL


def _essential(questions) -> tuple:
    return tuple(q for q in questions if q.essential)


def _trim_part(part: Part, keep) -> Part:
    followup = part.followup
    if followup is not None:
        followup = followup.model_copy(update={"questions": keep(followup.questions)})
    return part.model_copy(update={"questions": keep(part.questions), "followup": followup})


def _covered_rubric(drill: Drill, parts: tuple[Part, ...]) -> dict:
    """The rubric and verdict restricted to the skills the kept questions evidence."""
    used = {skill for part in parts for q in _questions(part) for skill in q.skills}
    rubric = tuple(s for s in drill.rubric if s.id in used) or drill.rubric
    share = len(rubric) / len(drill.rubric)
    needed = max(1, min(len(rubric), math.ceil(drill.verdict.strong_needed * share)))
    update: dict = {"strong_needed": needed,
                    "watch_skills": tuple(s for s in drill.verdict.watch_skills if s in {r.id for r in rubric})}
    if needed != drill.verdict.strong_needed:   # the drill's own messages name its whole-drill count
        strong, covered = drill.level_label("strong"), len(rubric)
        update["pass_message"] = (f"{strong} on {needed} or more of the {covered} skills this practice covers. "
                                  "Take the whole drill next, on its own clock.")
        update["short_message"] = (f"{strong} on fewer than {needed} of the {covered} skills this practice covers. "
                                   "Go back over the parts you scored lowest and practise again.")
    return {"rubric": rubric, "verdict": drill.verdict.model_copy(update=update)}


def _questions(part: Part) -> list:
    return list(part.questions) + (list(part.followup.questions) if part.followup else [])


def _paced(parts: tuple[Part, ...], minutes: float) -> tuple[Part, ...]:
    """Part minutes that fill `minutes` in proportion to the reading and thinking each part asks for."""
    needs = [max(0.5, part_minutes(p)) for p in parts]
    shares = [round(n * minutes / sum(needs), 1) for n in needs]
    shares[-1] = round(minutes - sum(shares[:-1]), 1)   # rounding never pushes the pacing past the clock
    return tuple(p.model_copy(update={"minutes": share}) for p, share in zip(parts, shares))


def scope_drill(loaded: LoadedDrill, scope: str) -> LoadedDrill:
    """The drill as a `scope` attempt sees it; KeyError for a scope the drill does not offer."""
    drill = loaded.drill
    if scope == FULL:
        return loaded
    if scope == ESSENTIALS:
        if not any(q.essential for q in drill.all_questions()):
            raise KeyError(f"{drill.id} marks no essential questions")
        # The spine of the drill: every break's essential questions and worked answer; the follow-ups and
        # the closing chains are the depth a full attempt adds.
        parts = tuple(_trim_part(p, _essential).model_copy(update={"followup": None})
                      for p in drill.parts if p.kind != "closing")
        parts = _paced(parts, drill.time_box_min)
        title, minutes = f"{drill.title} — essentials", drill.time_box_min
    else:
        chosen = next((p for p in drill.parts if p.id == scope and p.kind == "break"), None)
        if chosen is None:
            raise KeyError(f"{drill.id} has no break called {scope!r}")
        # The scenario, the board's essential numbers, and the whole break with its follow-up.
        kept = tuple(p if p.id == scope else _trim_part(p, _essential)
                     for p in drill.parts if p.kind in CONTEXT_KINDS or p.id == scope)
        minutes = drill.break_minutes
        parts = _paced(kept, minutes)
        title = f"{drill.title} — {chosen.title}"
    cut = drill.model_copy(update={"id": scoped_id(drill.id, scope), "title": title, "time_box_min": minutes,
                                   "parts": parts, **_covered_rubric(drill, parts)})
    return replace(loaded, drill=cut, variant_cache={}, whole=loaded.whole or drill)


def scopes(drill: Drill) -> list[Scope]:
    """The shorter ways to take `drill`, essentials first, then each break on its own clock."""
    offered = ([ESSENTIALS] if any(q.essential for q in drill.all_questions()) else []) + \
        [p.id for p in drill.parts if p.kind == "break"]
    out = []
    loaded = LoadedDrill(drill, {}, "")
    for scope in offered:
        cut = scope_drill(loaded, scope).drill
        label = "Essentials path" if scope == ESSENTIALS else drill.part(scope).title
        out.append(Scope(scope, label, cut.time_box_min, len(cut.all_questions()), estimated_minutes(cut)))
    return out


_WORD = re.compile(r"\S+")


def _words(*texts: str) -> int:
    return sum(len(_WORD.findall(t or "")) for t in texts)


def part_minutes(part: Part) -> float:
    """How long a prepared candidate needs for one part: reading, thinking per lock-in, skimming answers."""
    read = _words(part.body) + sum(_words(q.prompt) for q in _questions(part))
    skim = _words(*(s.text for s in part.reveal))
    think = 0.0
    if part.followup is not None:
        read += _words(part.followup.prompt)
        skim += _words(part.followup.answer)
    for q in _questions(part):
        if isinstance(q, ChoiceQuestion):
            read += _words(*(o.text for o in q.options))
            skim += _words(q.explain)
        elif isinstance(q, NotesQuestion):
            skim += _words(q.strong_answer)
        think += THINK_MIN[q.kind]
    return read / READ_WPM + skim / SKIM_WPM + think


def estimated_minutes(drill: Drill) -> float:
    return sum(part_minutes(p) for p in drill.parts)


class ScopedDrills(Mapping):
    """The catalogue's drills, also answering scoped ids (``one_tenant~break1``); iterates whole drills only."""

    def __init__(self, drills: Mapping[str, LoadedDrill]):
        self._drills = drills
        self._cut: dict[str, LoadedDrill] = {}   # each scope is cut once per catalogue, not on every lookup
        self._offers: dict[str, tuple[list[Scope], float]] = {}

    def __getitem__(self, drill_id: str) -> LoadedDrill:
        if drill_id not in self._cut:
            base, scope = split_id(drill_id)
            self._cut[drill_id] = scope_drill(self._drills[base], scope)
        return self._cut[drill_id]

    def offers(self, drill_id: str) -> tuple[list[Scope], float]:
        """The shorter ways to take a whole drill and its estimated minutes of work, worked out once per catalogue.

        The catalogue page shows both for every drill on every run; cutting each scope again cost a tenth of it.
        """
        if drill_id not in self._offers:
            drill = self._drills[drill_id].drill
            self._offers[drill_id] = (scopes(drill), estimated_minutes(drill))
        return self._offers[drill_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._drills)

    def __len__(self) -> int:
        return len(self._drills)

    def __contains__(self, drill_id: object) -> bool:
        try:
            self[drill_id]
        except (KeyError, TypeError):
            return False
        return True


