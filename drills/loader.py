"""Load drill YAML files into validated models, running every content rule of drills.lint on each.

A broken file reports all of its problems at once (file, line, key path); the other drills still load.
"""
from __future__ import annotations

import copy
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import yaml
from pydantic import ValidationError

from drills.draws import LOAD_DRAWS
from drills.lint import Finding, Loc, drill_findings
from drills.loaded import LoadedDrill
from drills.schema import Drill

__all__ = ["CONTENT_DIR", "Catalogue", "ContentError", "ContentProblem", "LoadedDrill", "check_file",
           "content_dir", "drill_files", "load_catalogue", "load_drill"]

CONTENT_DIR = Path(__file__).resolve().parent / "content"


@dataclass(frozen=True)
class ContentError:
    """One problem in one file: its line (1-based, when known), the key path inside the drill and what is wrong."""

    file: str
    path: str
    message: str
    line: int | None = None

    def describe(self, file: str | None = None) -> str:
        """`file:line: key.path: message`, with `file` overriding the name kept here (the check tool passes a path)."""
        where = (file or self.file) + (f":{self.line}" if self.line else "")
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"

    def __str__(self) -> str:
        return self.describe()


class ContentProblem(Exception):
    """A file that breaks one or more rules; `errors` lists every one of them."""

    def __init__(self, errors: Sequence[ContentError]):
        self.errors = tuple(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    @property
    def error(self) -> ContentError:
        return self.errors[0]



# -- where a problem is ------------------------------------------------------------------------
_UNION_TAGS = ("numeric", "choice", "notes")  # pydantic's discriminated-union tags are not keys in the file


def _key_path(loc: Loc, data: object) -> str:
    """Turn a location into a readable path; list items also show their id, e.g. parts[1](board).body."""
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
            elif isinstance(node, dict) and item in _UNION_TAGS:
                continue
            else:
                node = None
            path += ("." if path else "") + str(item)
    return path


def _line(loc: Loc, root: yaml.Node | None) -> int | None:
    """The 1-based line of the deepest node of `loc` found in the composed YAML (a key's own line for keys)."""
    if root is None:
        return None
    node, line = root, root.start_mark.line
    for item in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == item), None)
            if match is None:
                if item in _UNION_TAGS:
                    continue
                break
            line, node = match[0].start_mark.line, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(item, int) and 0 <= item < len(node.value):
            node = node.value[item]
            line = node.start_mark.line
        else:
            break
    return line + 1


# -- loading ---------------------------------------------------------------------------------
def _plain(message: str) -> str:
    return message.removeprefix("Value error, ")


def _validate(data: dict) -> tuple[Drill | None, list[Finding]]:
    """The drill (or None) and the schema's findings on its fields."""
    try:
        return Drill.model_validate(data), []
    except ValidationError as exc:
        return None, [Finding(tuple(e["loc"]), _plain(e["msg"])) for e in exc.errors()]


# Rules that weigh the whole drill: with broken items set aside they would report the gap, not the file.
_WHOLE_DRILL = ("add up to", "no question evidences", "the right option is the longest in", "no text before it states")
# Rules that weigh a sample of draws: the salvaged drill is checked on one draw, too few to say a truth never moves.
_SAMPLED = ("are the same in every draw",)


def _node(data: object, path: Loc) -> object:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _salvaged_findings(data: dict, schema: Sequence[Finding], file_stem: str) -> list[Finding]:
    """The rules' findings on a drill whose schema failed, run on what is left once each broken field is set
    aside (or, when the field is required, the list item holding it: a given, a question, an option…),
    placed back at the positions the file has. Findings that name a set-aside item, or weigh the whole drill,
    are dropped: the schema errors cover them. None when the drill still does not validate."""
    trimmed = copy.deepcopy(data)
    for finding in schema:   # first try without the broken field itself
        parent = _node(trimmed, finding.loc[:-1])
        if isinstance(parent, dict):
            parent.pop(finding.loc[-1], None)
    drill, still = _validate(trimmed)
    cut: dict[Loc, set[int]] = {}   # list path -> the indexes set aside
    names: set[str] = set()
    for finding in still:
        index = max((i for i, item in enumerate(finding.loc) if isinstance(item, int)), default=None)
        if index is None:
            return []   # a required top-level field: nothing sensible to check the rest against
        cut.setdefault(tuple(finding.loc[:index]), set()).add(finding.loc[index])
    for list_path, indexes in sorted(cut.items(), key=lambda item: -len(item[0])):
        node = _node(trimmed, list_path)
        if not isinstance(node, list) or any(len(other) < len(list_path) and list_path[:len(other)] == other
                                             and list_path[len(other)] in cut[other] for other in cut):
            continue   # inside an item that is set aside anyway
        for i in sorted(indexes, reverse=True):
            if i < len(node):
                item = node.pop(i)
                if isinstance(item, dict):
                    names |= {str(item[k]) for k in ("name", "id") if item.get(k)}
    if cut:
        drill, _ = _validate(trimmed)
    if drill is None:
        return []
    _, findings = drill_findings(drill, file_stem, draws=1)

    def original(loc: Loc) -> Loc:
        out: list = []
        for item in loc:
            if isinstance(item, int):
                for removed in sorted(cut.get(tuple(out), ())):
                    item += removed <= item
            out.append(item)
        return tuple(out)
    return [Finding(original(f.loc), f.message) for f in findings
            if not (cut and any(phrase in f.message for phrase in _WHOLE_DRILL))
            and not any(phrase in f.message for phrase in _SAMPLED)
            and not any(re.search(rf"\b{re.escape(name)}\b", f.message) for name in names)]


def _parse(source: str) -> tuple[yaml.Node | None, object]:
    """Parse once, as yaml.safe_load does: the node tree (its marks give line numbers) and the data built from it.

    The pure-Python SafeLoader on purpose: libyaml's CSafeLoader accepts a few flow-style lines it refuses."""
    loader = yaml.SafeLoader(source)
    try:
        root = loader.get_single_node()
        return root, (loader.construct_document(root) if root is not None else None)
    finally:
        loader.dispose()


def _yaml_error(file: str, exc: yaml.YAMLError) -> ContentError:
    """Where the parser gave up, and what it was reading (with the line that started it) when it did."""
    mark = getattr(exc, "problem_mark", None)
    message = f"not valid YAML: {getattr(exc, 'problem', None) or exc}"
    if mark is not None:
        message += f" (column {mark.column + 1})"
    context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and start is not None:
        message += f", {context} that starts on line {start.line + 1}"
    return ContentError(file, "", message, mark.line + 1 if mark is not None else None)


def check_file(path: Path, draws: int = LOAD_DRAWS) -> tuple[LoadedDrill | None, tuple[ContentError, ...]]:
    """Load one file and run every rule (over `draws` seeded draws of its numbers, besides the corners of
    their ranges); returns the drill when it passes, else None and every error."""
    path = Path(path)
    file = path.name
    try:
        root, data = _parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, (ContentError(file, "", f"cannot read the file: {exc}"),)
    except yaml.YAMLError as exc:
        return None, (_yaml_error(file, exc),)
    if not isinstance(data, dict):
        return None, (ContentError(file, "", "the file must hold a mapping at the top level", 1),)

    def place(finding: Finding) -> ContentError:
        return ContentError(file, _key_path(finding.loc, data), finding.message, _line(finding.loc, root))

    drill, schema_findings = _validate(data)
    if drill is None:
        # Every problem at once: the rules also run on what is left with the broken items set aside.
        findings = schema_findings + _salvaged_findings(data, schema_findings, path.stem.lstrip("_"))
        return None, tuple(sorted((place(f) for f in findings), key=lambda e: e.line or 0))
    values, findings = drill_findings(drill, path.stem.lstrip("_"), draws)
    if findings:
        errors = sorted((place(f) for f in findings), key=lambda e: e.line or 0)
        return None, tuple(errors)
    units = {g.name: g.unit for g in drill.givens} | {d.name: d.unit for d in drill.derived}
    return LoadedDrill(drill=drill, values=MappingProxyType(values), source=file,
                       units=MappingProxyType(units)), ()


def load_drill(path: Path) -> LoadedDrill:
    """Load one file or raise ContentProblem listing every error in it."""
    loaded, errors = check_file(path)
    if errors:
        raise ContentProblem(errors)
    return loaded


@dataclass(frozen=True)
class Catalogue:
    drills: Mapping[str, LoadedDrill]
    errors: tuple[ContentError, ...]


def content_dir() -> Path:
    """Where drills are read from: FAULTLINES_CONTENT, else drills/content."""
    return Path(os.environ.get("FAULTLINES_CONTENT") or CONTENT_DIR)


def drill_files(directory: Path) -> list[Path]:
    """The drill files in a folder; names starting with '_' (templates, drafts) are not drills."""
    return sorted(p for p in Path(directory).glob("*.yaml") if not p.name.startswith("_"))


def load_catalogue(directory: Path | None = None) -> Catalogue:
    """Load every drill in the folder; broken files are reported, the others still served."""
    directory = Path(directory or content_dir())
    drills: dict[str, LoadedDrill] = {}
    errors: list[ContentError] = []
    for path in drill_files(directory):
        loaded, problems = check_file(path)
        if problems:
            errors.extend(problems)
            continue
        drills[loaded.drill.id] = loaded
    ordered = dict(sorted(drills.items(), key=lambda item: (item[1].drill.order, item[1].drill.title)))
    return Catalogue(drills=MappingProxyType(ordered), errors=tuple(errors))
