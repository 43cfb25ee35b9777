"""Content rules on the paths through a drill: every formula question answerable on every path that asks it."""
from __future__ import annotations

from collections.abc import Iterator, Mapping

from drills.draws import given_uses
from drills.formulas import placeholders
from drills.lint.registry import register, the_break
from drills.lint.walk import NUMBER, Finding, Loc, questions, strip
from drills.loaded import LoadedDrill
from drills.schema import Drill, NumericQuestion, Part
from drills.scope import scope_drill, scopes


def shown_on_arrival(part: Part) -> Iterator[tuple[Loc, str]]:
    """A part's texts in the order a candidate meets them, before any worked answer: the body, then each
    question's prompt and options, then the follow-up's prompt and its questions'."""
    yield ("body",), part.body
    groups = [(("questions",), part.questions)]
    if part.followup is not None:
        groups.append((("followup", "questions"), part.followup.questions))
    for base, group in groups:
        if base[0] == "followup":
            yield ("followup", "prompt"), part.followup.prompt
        for index, q in enumerate(group):
            yield base + (index, "prompt"), q.prompt
            for o_index, option in enumerate(getattr(q, "options", ())):
                yield base + (index, "options", o_index, "text"), option.text


def _stated(template: str, unvaried: Mapping[str, float]) -> set[str]:
    """The names a text states: its {placeholders}, and unvaried givens whose value it types."""
    named = set(placeholders(template))
    typed = {float(n.replace(",", "")) for n in NUMBER.findall(strip(template))}
    return named | {name for name, value in unvaried.items() if value in typed}


def _paths(drill: Drill) -> Iterator[tuple[str, Drill]]:
    """Every way to take the drill: whole, the essentials path and each break on its own."""
    yield "the whole drill", drill
    whole = LoadedDrill(drill, {}, "")
    for scope in scopes(drill):
        yield f"the {scope.label.lower() if scope.id == 'essentials' else scope.label + ' practice'}", \
            scope_drill(whole, scope.id).drill


def rule_paths_answerable(drill: Drill) -> Iterator[Finding]:
    """Every formula question is answerable on every path that asks it: each given its formula needs is
    stated (named or, when it never varies, typed) in text that path shows before the question, its own
    prompt included. Worked answers of earlier parts count; hints do not (they cost marks)."""
    uses = given_uses(drill)
    unvaried = {g.name: g.value for g in drill.givens if g.vary is None}
    derived = {d.name: d.expr for d in drill.derived}
    where = {q.id: loc for loc, q in questions(drill)}
    missing: dict[tuple[str, str], list[str]] = {}
    for path, cut in _paths(drill):
        stated: set[str] = set()
        for part in cut.parts:
            for loc, template in shown_on_arrival(part):
                stated |= _stated(template, unvaried)
                if loc[-1] != "prompt" or loc[0] == "followup" and len(loc) == 2:
                    continue
                q = (part.questions if loc[0] == "questions" else part.followup.questions)[loc[-2]]
                if not isinstance(q, NumericQuestion) or q.answer is None:
                    continue
                # A stated derived value (or answer) stands in for the givens behind it.
                known = set(stated)
                for name, expr in derived.items():
                    if name in known:
                        known |= uses(expr)
                for other_id in stated & set(where):
                    other = drill.question(other_id)
                    if isinstance(other, NumericQuestion) and other.answer:
                        known |= uses(other.answer)
                for name in sorted(uses(q.answer) - known):
                    missing.setdefault((q.id, name), []).append(path)
            for section in part.reveal:
                stated |= _stated(section.text, unvaried)
            if part.followup is not None:
                stated |= _stated(part.followup.answer, unvaried)
    for (question, name), paths in missing.items():
        yield Finding(where[question] + ("answer",),
                      f"{question} needs {name}, which no text before it states on {', '.join(paths)}; state it "
                      "as a {placeholder} in the question's prompt or in a part every such path keeps")


register("paths_answerable", 120, lambda s: rule_paths_answerable(s.drill),
         lambda d: the_break(d).update(body="Jobs arrive at {rate} a second."))
