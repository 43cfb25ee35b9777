"""Content rules on how a drill's parts fit together: ids and names, skills, presets, pacing."""
from __future__ import annotations

import math
from collections.abc import Iterator

from drills.lint.registry import register, the_break, the_question
from drills.lint.walk import Finding, Loc, questions
from drills.schema import Drill, NumericQuestion


def rule_references(drill: Drill) -> Iterator[Finding]:
    """Names, part ids and question ids are unique, and question ids do not reuse a given's name."""
    seen: dict[str, Loc] = {}
    for label, items in (("givens", drill.givens), ("derived", drill.derived)):
        for i, item in enumerate(items):
            if item.name in seen:
                yield Finding((label, i, "name"), f"name {item.name!r} is defined twice")
            seen.setdefault(item.name, (label, i, "name"))
    part_ids: set[str] = set()
    for i, part in enumerate(drill.parts):
        if part.id in part_ids:
            yield Finding(("parts", i, "id"), f"part id {part.id!r} is used twice")
        part_ids.add(part.id)
    question_ids: set[str] = set()
    for loc, q in questions(drill):
        if q.id in question_ids:
            yield Finding(loc + ("id",), f"question id {q.id!r} is used twice")
        elif q.id in seen:
            yield Finding(loc + ("id",), f"question id {q.id!r} is also the name of a given or derived value")
        question_ids.add(q.id)


def rule_skills(drill: Drill) -> Iterator[Finding]:
    """Every question links known rubric skills, every skill has a question, the verdict names real skills."""
    known = [s.id for s in drill.rubric]
    listing = ", ".join(known)
    evidenced: set[str] = set()
    for loc, q in questions(drill):
        if not q.skills:
            yield Finding(loc + ("skills",), f"question {q.id!r} links no rubric skill (known: {listing})")
        for s_index, skill in enumerate(q.skills):
            if skill not in known:
                yield Finding(loc + ("skills", s_index), f"unknown skill {skill!r} (known: {listing})")
        evidenced.update(q.skills)
    for i, skill in enumerate(drill.rubric):
        if skill.id not in evidenced:
            yield Finding(("rubric", i), f"no question evidences skill {skill.id!r}; link it from at least one")
    for i, skill in enumerate(drill.verdict.watch_skills):
        if skill not in known:
            yield Finding(("verdict", "watch_skills", i), f"the verdict watches unknown skill {skill!r} (known: {listing})")
    if drill.verdict.strong_needed > len(known):
        yield Finding(("verdict", "strong_needed"),
                      f"needs {drill.verdict.strong_needed} strong skills but the rubric has only {len(known)}")


def rule_presets(drill: Drill) -> Iterator[Finding]:
    """Every simulation-graded question names a preset that exists."""
    from sims.presets import PRESETS  # only drills that embed a simulation pay for importing the models

    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.sim is not None and q.sim not in PRESETS:
            yield Finding(loc + ("sim",), f"unknown simulation preset {q.sim!r} (known: {', '.join(sorted(PRESETS))})")


def rule_pacing(drill: Drill) -> Iterator[Finding]:
    """The parts' suggested minutes add up to exactly the time box."""
    pacing = sum(p.minutes for p in drill.parts)
    if not math.isclose(pacing, drill.time_box_min, abs_tol=1e-6):
        spread = " + ".join(f"{p.minutes:g}" for p in drill.parts)
        yield Finding(("time_box_min",), f"the parts' minutes add up to {pacing:g} ({spread}), "
                                         f"not the {drill.time_box_min:g}-minute time box")
    if drill.break_minutes > drill.time_box_min:
        yield Finding(("break_time_box_min",), f"a single break gets {drill.break_minutes:g} minutes, longer than "
                                               f"the whole drill's {drill.time_box_min:g}; give it at most that")


def rule_file_name(drill: Drill, file_stem: str | None) -> Iterator[Finding]:
    """The drill id matches the file name (a leading '_', a template or draft, is not part of it)."""
    if file_stem is not None and drill.id != file_stem:
        yield Finding(("id",), f"drill id {drill.id!r} must match the file name {file_stem!r}")


def _sim_question(data: dict) -> None:
    data["givens"][0].pop("vary")   # no formula question is left to use a drawn rate
    question = the_question(data)
    question.pop("answer")
    question["sim"] = "no.such_preset"


register("file_name", 10, lambda s: rule_file_name(s.drill, s.file_stem), lambda d: d.update(id="other"))
register("references", 20, lambda s: rule_references(s.drill), lambda d: d["givens"].append(dict(d["givens"][1])))
register("skills", 30, lambda s: rule_skills(s.drill), lambda d: the_question(d).update(skills=["juggling"]))
register("presets", 40, lambda s: rule_presets(s.drill), _sim_question)
register("pacing", 50, lambda s: rule_pacing(s.drill), lambda d: the_break(d).update(minutes=5))
