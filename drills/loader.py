"""Load drill YAML files into validated models and compute every value they name.

A broken file becomes one ContentError naming the file and key path; the rest still load.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import yaml
from pydantic import ValidationError

from drills.formulas import FormulaError, evaluate, render
from drills.schema import Drill, NumericQuestion

CONTENT_DIR = Path(__file__).resolve().parent / "content"
SIM_PLACEHOLDER = 1.0  # stands in for simulation answers while text is checked at load time


@dataclass(frozen=True)
class ContentError:
    file: str
    path: str
    message: str

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.file}{where}: {self.message}"


class ContentProblem(Exception):
    def __init__(self, error: ContentError):
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class LoadedDrill:
    """A validated drill plus the numbers its formulas give (simulation answers excepted)."""

    drill: Drill
    values: Mapping[str, float]
    source: str
    units: Mapping[str, str] = field(default_factory=dict)

    def truth(self, question_id: str, sim_values: Mapping[str, float] | None = None) -> float:
        question = self.drill.question(question_id)
        if not isinstance(question, NumericQuestion):
            raise TypeError(f"{question_id} is not numeric")
        if question.sim is not None:
            if sim_values is None or question_id not in sim_values:
                raise KeyError(f"{question_id} needs its simulation result")
            return sim_values[question_id]
        return self.values[question_id]

    def text(self, template: str, sim_values: Mapping[str, float] | None = None) -> str:
        values = dict(self.values)
        if sim_values:
            values.update(sim_values)
        return render(template, values)


def _key_path(loc: tuple, data: object) -> str:
    """Turn pydantic's error location into a readable path; list items also show their id."""
    path = ""
    node = data
    for item in loc:
        if isinstance(item, int) and isinstance(node, list):
            node = node[item] if item < len(node) else None
            ident = None
            if isinstance(node, dict):
                ident = node.get("id") or node.get("name") or node.get("stage")
            path += f"[{item}]" + (f"({ident})" if ident else "")
        else:
            if isinstance(node, dict) and item in node:
                node = node[item]
            elif isinstance(node, dict) and isinstance(item, str) and item in ("numeric", "choice", "notes"):
                continue  # the discriminated-union tag is not a real key in the file
            else:
                node = None
            path += ("." if path else "") + str(item)
    return path


def compute_values(drill: Drill, file: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for i, given in enumerate(drill.givens):
        values[given.name] = given.value
    for i, item in enumerate(drill.derived):
        try:
            values[item.name] = evaluate(item.expr, values)
        except FormulaError as exc:
            raise ContentProblem(ContentError(file, f"derived[{i}]({item.name}).expr", str(exc))) from None
    for p_index, part in enumerate(drill.parts):
        groups = [("questions", part.questions)]
        if part.followup:
            groups.append(("followup.questions", part.followup.questions))
        for label, questions in groups:
            for q_index, q in enumerate(questions):
                if isinstance(q, NumericQuestion) and q.answer is not None:
                    try:
                        values[q.id] = evaluate(q.answer, values)
                    except FormulaError as exc:
                        path = f"parts[{p_index}]({part.id}).{label}[{q_index}]({q.id}).answer"
                        raise ContentProblem(ContentError(file, path, str(exc))) from None
    return values


def _texts(drill: Drill):
    """Every templated text in the drill with its key path."""
    for p_index, part in enumerate(drill.parts):
        base = f"parts[{p_index}]({part.id})"
        yield f"{base}.body", part.body
        groups = [("questions", part.questions)]
        if part.followup:
            yield f"{base}.followup.prompt", part.followup.prompt
            yield f"{base}.followup.answer", part.followup.answer
            groups.append(("followup.questions", part.followup.questions))
        for label, questions in groups:
            for q_index, q in enumerate(questions):
                qpath = f"{base}.{label}[{q_index}]({q.id})"
                yield f"{qpath}.prompt", q.prompt
                for attr in ("strong_answer", "explain"):
                    if getattr(q, attr, ""):
                        yield f"{qpath}.{attr}", getattr(q, attr)
        for s_index, section in enumerate(part.reveal):
            yield f"{base}.reveal[{s_index}]({section.stage}).text", section.text


def load_drill(path: Path) -> LoadedDrill:
    """Load one file or raise ContentProblem naming the file and key path."""
    file = path.name
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ContentProblem(ContentError(file, where, f"not valid YAML: {getattr(exc, 'problem', exc)}")) from None
    if not isinstance(data, dict):
        raise ContentProblem(ContentError(file, "", "the file must hold a mapping at the top level"))
    try:
        drill = Drill.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ContentProblem(ContentError(file, _key_path(first["loc"], data), first["msg"])) from None
    if drill.id != path.stem:
        raise ContentProblem(ContentError(file, "id", f"drill id {drill.id!r} must match the file name {path.stem!r}"))
    values = compute_values(drill, file)
    check = dict(values)
    for q in drill.all_questions():
        if isinstance(q, NumericQuestion) and q.sim is not None:
            check[q.id] = SIM_PLACEHOLDER
    for key_path, text in _texts(drill):
        try:
            render(text, check)
        except FormulaError as exc:
            raise ContentProblem(ContentError(file, key_path, str(exc))) from None
    units = {g.name: g.unit for g in drill.givens} | {d.name: d.unit for d in drill.derived}
    return LoadedDrill(drill=drill, values=MappingProxyType(values), source=file, units=MappingProxyType(units))


@dataclass(frozen=True)
class Catalogue:
    drills: Mapping[str, LoadedDrill]
    errors: tuple[ContentError, ...]


def content_dir() -> Path:
    """Where drills are read from: FAULTLINES_CONTENT, else drills/content."""
    return Path(os.environ.get("FAULTLINES_CONTENT") or CONTENT_DIR)


def load_catalogue(directory: Path | None = None) -> Catalogue:
    """Load every drill in the folder; broken files are reported, the others still served."""
    directory = Path(directory or content_dir())
    drills: dict[str, LoadedDrill] = {}
    errors: list[ContentError] = []
    for path in sorted(directory.glob("*.yaml")):
        try:
            loaded = load_drill(path)
        except ContentProblem as problem:
            errors.append(problem.error)
            continue
        drills[loaded.drill.id] = loaded
    ordered = dict(sorted(drills.items(), key=lambda item: (item[1].drill.order, item[1].drill.title)))
    return Catalogue(drills=MappingProxyType(ordered), errors=tuple(errors))
