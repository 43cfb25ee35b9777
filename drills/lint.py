"""Every content rule a drill must pass, as pure functions from a validated drill to findings.

drills.loader places each finding in its file (line and key path); drills.check runs the same rules with
more seeded draws.
"""
from __future__ import annotations

import dataclasses
import math
import re
import string
from decimal import Decimal
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from drills.draws import LOAD_DRAWS, asked_givens, drawn_givens, given_uses, sampled
from drills.loaded import LoadedDrill
from drills.scope import scope_drill, scopes
from drills.formulas import FormulaError, evaluate, format_quantity, half_up, placeholders, render
from drills.scoring import grade_numeric
from drills.schema import ChoiceQuestion, Drill, NotesQuestion, NumericQuestion, Part

if TYPE_CHECKING:
    from sims.presets import SimPreset

SIM_PLACEHOLDER = 1.0  # stands in for simulation answers while text is checked at load time

# Parts that set the scene may state its figures in words; every later text names them as {placeholders}.
SCENARIO_KINDS = frozenset({"prompt", "board", "baseline"})

# How far option length may point at the answer: the right option at most this much longer than
# the longest wrong one, and strictly the longest in at most this share of a drill's choice questions.
RIGHT_OPTION_MAX_RATIO = 1.15
RIGHT_OPTION_LONGEST_SHARE = 1 / 3

# A number typed in a text: digits with optional thousands separators or decimals, not part of a name.
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")

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


# -- the rules -------------------------------------------------------------------------------
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


def compute_values(drill: Drill) -> tuple[dict[str, float], list[Finding]]:
    """Every given, derived value and formula answer; a formula that fails is a finding, and so is not
    repeated for the formulas that use it."""
    values: dict[str, float] = {g.name: g.value for g in drill.givens}
    findings: list[Finding] = []
    failed: set[str] = set()

    def attempt(name: str, expr: str, loc: Loc) -> None:
        if failed & set(re.findall(r"[A-Za-z_]\w*", expr)):
            failed.add(name)
            return
        try:
            values[name] = evaluate(expr, values)
        except FormulaError as exc:
            failed.add(name)
            findings.append(Finding(loc, str(exc)))

    for i, item in enumerate(drill.derived):
        attempt(item.name, item.expr, ("derived", i, "expr"))
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.answer is not None:
            attempt(q.id, q.answer, loc + ("answer",))
    return values, findings


def variant_values(drill: Drill, variant: int) -> tuple[dict[str, float], list[Finding]]:
    """Every given, derived value and formula answer of an attempt's draw, and any formula that fails on it."""
    return values_for(drill, drawn_givens(drill, variant))


def rule_answerable(drill: Drill, values: Mapping[str, float]) -> Iterator[Finding]:
    """A formula answer must be a number a candidate can lock in: the lock-in refuses guesses below zero."""
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.answer is not None and values.get(q.id, 0.0) < 0:
            yield Finding(loc + ("answer",), f"gives {values[q.id]:g}, below zero, but candidates cannot lock in a "
                                             "negative guess; ask for the size of the change instead")


def _stand_ins(drill: Drill, values: Mapping[str, float]) -> dict[str, float]:
    """The values text is checked against: simulation answers, and formulas that failed (already reported),
    stand in as SIM_PLACEHOLDER."""
    check = dict(values)
    names = [d.name for d in drill.derived] + [q.id for _, q in questions(drill) if isinstance(q, NumericQuestion)]
    for name in names:
        check.setdefault(name, SIM_PLACEHOLDER)
    return check


def rule_placeholders(drill: Drill, values: Mapping[str, float]) -> Iterator[Finding]:
    """Each {placeholder} names a given, a derived value or an answer, with a format that works."""
    check = _stand_ins(drill, values)
    for text in texts(drill):
        try:
            unknown = [name for name in placeholders(text.template) if name not in check]
            if unknown:
                yield Finding(text.loc, f"text refers to unknown name {{{unknown[0]}}} "
                                        "(not a given, a derived value or a numeric answer)")
                continue
            render(text.template, check)
        except FormulaError as exc:
            yield Finding(text.loc, str(exc))


def strip(template: str, labels: re.Pattern[str] = LABELS) -> str:
    """The template without code, list markers, placeholders and label numbers: what is left are figures."""
    text = re.sub(r"```.*?```", "", template, flags=re.S)     # code blocks are code, not figures
    text = re.sub(r"`[^`]*`", "", text)
    text = re.sub(r"(?m)^\s*\d+\.\s", "", text)              # numbered list markers
    text = re.sub(r"\{[^{}]*\}", "", text)                    # placeholders are what we want
    return labels.sub("", text)


def literal_figures(template: str, labels: re.Pattern[str] = LABELS) -> set[str]:
    """Numbers the template types itself instead of naming a given or an answer."""
    return set(_NUMBER.findall(strip(template, labels)))


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


@dataclass(frozen=True)
class OptionLengths:
    """One choice question's right option against its longest wrong one, in characters as the candidate reads them."""

    question: str
    right: int
    longest_distractor: int
    loc: Loc = ()
    rank: tuple[int, int] = (0, 0)   # (options strictly longer than the right one, options in all)

    @property
    def right_is_longest(self) -> bool:
        return self.right > self.longest_distractor


def option_lengths(drill: Drill, render_text: Callable[[str], str] = lambda text: text) -> list[OptionLengths]:
    """Every choice question of the drill, its options rendered by `render_text` before they are measured."""
    out = []
    for loc, q in questions(drill):
        if not isinstance(q, ChoiceQuestion):
            continue
        sizes = {o.id: len(render_text(o.text)) for o in q.options}
        right = sizes[q.answer]
        longest = max((n for o_id, n in sizes.items() if o_id != q.answer), default=0)
        rank = sum(n > right for n in sizes.values())
        out.append(OptionLengths(q.id, right, longest, loc, (rank, len(sizes))))
    return out


def length_findings(lengths: Sequence[OptionLengths]) -> list[Finding]:
    """How option length would let a candidate pick the right answer without knowing it; empty when it cannot."""
    findings = [Finding(m.loc + ("options",), f"{m.question}: the right option has {m.right} characters, the longest "
                                              f"wrong one {m.longest_distractor}; keep it within "
                                              f"{RIGHT_OPTION_MAX_RATIO:g} times the longest wrong one")
                for m in lengths if m.right > RIGHT_OPTION_MAX_RATIO * m.longest_distractor]
    longest = [m for m in lengths if m.right_is_longest]
    if len(longest) > RIGHT_OPTION_LONGEST_SHARE * len(lengths):
        findings.append(Finding(longest[0].loc + ("options",),
                                f"the right option is the longest in {len(longest)} of {len(lengths)} choice "
                                f"questions ({', '.join(m.question for m in longest)}); at most a third may be"))
    return findings


RANK_MAX_OVER_CHANCE = 1.5   # the right option may sit at one length rank at most this many times chance
_RANK_NAMES = ("longest", "second-longest", "third-longest", "fourth-longest", "fifth-longest")


def rank_findings(lengths: Sequence[OptionLengths]) -> list[Finding]:
    """"Pick the option at length rank r" must not beat chance by much: for each rank, the questions whose right
    option sits there are at most RANK_MAX_OVER_CHANCE times what picking at random would give."""
    findings = []
    ranks = {m.rank[0] for m in lengths} | {r for m in lengths for r in range(m.rank[1])}
    for rank in sorted(ranks):
        expected = sum(1 / m.rank[1] for m in lengths if m.rank[1] > rank)
        hits = [m for m in lengths if m.rank[0] == rank]
        if expected and len(hits) > RANK_MAX_OVER_CHANCE * expected and len(hits) >= 2:
            name = _RANK_NAMES[rank] if rank < len(_RANK_NAMES) else f"rank-{rank + 1} longest"
            findings.append(Finding(hits[0].loc + ("options",), (
                f"'pick the {name} option' is right in {len(hits)} of {len(lengths)} choice questions "
                f"({', '.join(m.question for m in hits)}) where chance gives {expected:.1f}; rewrite options so no "
                f"length rank is right more than {RANK_MAX_OVER_CHANCE:g} times as often as chance")))
    return findings


def length_giveaways(lengths: Sequence[OptionLengths]) -> list[str]:
    """The same findings as plain messages (what the content tests print)."""
    return [f.message for f in length_findings(lengths) + rank_findings(lengths)]


def rule_option_lengths(drill: Drill, values: Mapping[str, float]) -> list[Finding]:
    """Options measured as the candidate reads them (simulation answers stand in as SIM_PLACEHOLDER)."""
    check = _stand_ins(drill, values)

    def measure(template: str) -> str:
        try:
            return render(template, check)
        except FormulaError:
            return template  # the placeholder rule reports it
    lengths = option_lengths(drill, measure)
    return length_findings(lengths) + rank_findings(lengths)


Draw = tuple[str, Mapping[str, float], list[Finding]]   # a label, the values it gives, the formulas failing on it
AS_WRITTEN = "the written numbers"


def values_for(drill: Drill, givens: Mapping[str, float]) -> tuple[dict[str, float], list[Finding]]:
    """Every derived value and formula answer on these givens, and any formula that fails on them."""
    return compute_values(drill.model_copy(update={"givens": tuple(g.model_copy(update={"value": givens[g.name]})
                                                                   for g in drill.givens)}))


def drawn_variants(drill: Drill, draws: int = LOAD_DRAWS) -> list[Draw]:
    """`draws` seeded draws and the corners of the vary ranges, their values and failing formulas; none when
    no given varies."""
    return [(label, *values_for(drill, givens)) for label, givens in sampled(drill, draws)]


def _simulated_givens(drill: Drill) -> set[str]:
    """The givens the runs of the drill's simulation questions read (their presets' inputs and mirrors)."""
    embedded = {q.sim for q in drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    if not embedded:
        return set()
    from sims.presets import PRESETS   # only drills that embed a simulation pay for importing the models

    uses = given_uses(drill)
    read: set[str] = set()
    for preset in (PRESETS[p] for p in embedded if p in PRESETS):
        read |= set().union(*(uses(name) for name in preset.inputs))
        read |= set().union(*(uses(expr) for expr in (preset.mirrors or {}).values() if expr))
    return read


def rule_variants(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """Drawn numbers stay sensible: every draw's formulas work, no answer drops below zero, no answer comes
    out equal to a given its formula uses while differing from it as written (the board would then show the
    answer), and every draw differs from the written numbers in a given some question uses."""
    varying = [(i, g) for i, g in enumerate(drill.givens) if g.vary is not None]
    for i, given in varying:
        allowed = given.vary.values()
        if not min(allowed) <= given.value <= max(allowed):
            yield Finding(("givens", i, "vary"), f"the written value {given.value:g} is outside the values "
                                                 f"a draw takes ({min(allowed):g} to {max(allowed):g})")
    asked = asked_givens(drill) | _simulated_givens(drill)
    if varying and not any(g.name in asked for _, g in varying):
        yield Finding(("givens", varying[0][0], "vary"), "no given a question uses varies, so every retake would "
                                                        "ask the written numbers; vary one a question's formula uses")
    shown = {g.name: g.vary.values() for _, g in varying}
    for text in texts(drill):   # a drawn value the text rounds away would state a number the drill does not use
        for _, field, spec, _ in string.Formatter().parse(text.template):
            decimals = re.fullmatch(r"[,_]?\.(\d+)[f%]", spec or "")
            if field in shown and decimals:
                places = int(decimals.group(1)) + (2 if spec.endswith("%") else 0)
                lost = [v for v in shown[field] if not math.isclose(round(v, places), v, abs_tol=1e-12)]
                if lost:
                    yield Finding(text.loc, f"{{{field}:{spec}}} rounds the drawn value {lost[0]:g} away; "
                                            f"give it more decimals or draw values it shows exactly")
    answers = [q for _, q in questions(drill) if isinstance(q, NumericQuestion) and q.answer is not None]
    uses = given_uses(drill)
    reported: set[tuple] = set()   # each problem once, named by the first draw that shows it

    def once(*key) -> bool:
        fresh = key not in reported
        reported.add(key)
        return fresh
    for label, values, failures in drawn:
        for failure in failures:
            if once("fails", failure.loc):
                yield Finding(failure.loc, f"in {label}: {failure.message}")
        if label.startswith("draw") and asked and all(values[n] == written[n] for n in asked) and once("same"):
            yield Finding(("givens",), f"{label} asks every question on the written numbers")
        if label.startswith("draw") and answers and not failures and once("passable", label) and not any(
                grade_numeric(written[q.id], values[q.id], q.tolerance) < 1 for q in answers):
            if once("passable"):
                yield Finding(("givens",), f"{label} draws numbers the written answers still pass (every answer "
                                           "moves less than its tolerance); draw values further from the written ones")
        for q in answers:
            value = values.get(q.id)
            if value is None:
                continue
            if value < 0 and once("negative", q.id):
                yield Finding(("givens",), f"in {label}, {q.id} gives {value:g}, below zero")
            same = sorted(n for n in uses(q.answer) if math.isclose(values[n], value, rel_tol=1e-9)
                          and not math.isclose(written[n], written[q.id], rel_tol=1e-9))
            if same and once("equal", q.id):
                yield Finding(("givens",), f"in {label}, {q.id} equals the given {same[0]} "
                                           f"({value:g}), so the board would give it away")


def _numbers(params: object) -> dict[str, float]:
    """The numeric fields of a model's frozen params (switches and names left out)."""
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    return {name: v for name, v in fields.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def rule_simulations(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """A simulation-graded question is graded against a run of the drill's own numbers, as written and in
    every variant.

    Each embedded preset says what every number of its params stands for (`SimPreset.mirrors`): a formula
    over the drill's values, or None for the model's own assumption. Each formula must give the number the
    graded run uses, on the written values and on every variant's; a run follows a variant only through the
    values its preset reads (`inputs`). A run that hard-codes a given the drill varies would show a retake
    the drawn number and grade it against the written one.
    """
    embedded: dict[str, tuple[Loc, str]] = {}
    for loc, q in questions(drill):
        if isinstance(q, NumericQuestion) and q.sim is not None:
            embedded.setdefault(q.sim, (loc + ("sim",), q.id))
    if not embedded:
        return
    from sims.presets import PRESETS

    runs = [(AS_WRITTEN, written)] + [(label, values) for label, values, failures in drawn if not failures]
    uses = given_uses(drill)
    for preset_id, (loc, question) in embedded.items():
        if preset_id in PRESETS:   # rule_presets names an unknown one
            yield from _run_findings(PRESETS[preset_id], f"simulation preset {preset_id!r} (graded question "
                                     f"{question})", loc, drill, runs, uses)


def _run_findings(preset: SimPreset, name: str, loc: Loc, drill: Drill, runs: Sequence[tuple[str, Mapping[str, float]]],
                  uses: Callable[[str], set[str]]) -> Iterator[Finding]:
    """rule_simulations for one preset: its mirrors are complete, and each holds in every run it grades."""
    mirrors, numbers, written = preset.mirrors or {}, _numbers(preset.params), runs[0][1]
    missing = [field for field in numbers if field not in mirrors]
    if missing:
        yield Finding(loc, f"{name} does not say what its {', '.join(missing)} "
                           f"{'stands' if len(missing) == 1 else 'stand'} for in this drill; in sims/presets.py "
                           "give each a formula over the drill's values in the preset's `mirrors`, or None when "
                           "it is the model's own assumption")
    strays = [field for field in mirrors if field not in numbers]
    if strays:
        yield Finding(loc, f"{name} mirrors {', '.join(strays)}, which its params do not have as numbers")
    undefined = [value for value in preset.inputs if value not in written]
    if undefined:
        yield Finding(loc, f"{name} is built from {', '.join(undefined)}, which this drill does not define")
        return
    pending = {field: expr for field, expr in mirrors.items() if expr is not None and field in numbers}
    read = set().union(*(uses(value) for value in preset.inputs))   # the givens the run follows
    for variant, values in runs:
        try:
            params = preset.params_for(values)
        except (ValueError, TypeError) as exc:
            where = variant if variant == AS_WRITTEN else f"{variant}'s numbers"
            yield Finding(loc, f"{name} cannot build its run from {where}: {exc}")
            return
        for field, expr in list(pending.items()):
            try:
                expected = evaluate(expr, values)
            except FormulaError as exc:
                if variant == AS_WRITTEN:   # a variant's failing formulas are rule_variants' to report
                    del pending[field]
                    yield Finding(loc, f"{name} mirrors {field} by a formula this drill cannot compute: {exc}")
                continue
            actual = getattr(params, field)
            if math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12):
                continue
            del pending[field]
            runs_it = f"runs {field}={actual:g} where this drill's {expr} gives {expected:g}"
            moved = [g for g in drill.givens if g.name in uses(expr) - read and values[g.name] != written[g.name]]
            if variant == AS_WRITTEN:
                yield Finding(loc, f"{name} {runs_it}: the run contradicts the drill as written; make the "
                                   "drill's numbers and the preset agree")
            elif moved:
                drew = ", ".join(f"{g.name} is {values[g.name]:g} (written {g.value:g})" for g in moved)
                names = " and ".join(g.name for g in moved)
                yield Finding(("givens", drill.givens.index(moved[0]), "vary"),
                              f"in {variant}, {drew}, but {name} still {runs_it}: add {names} (or a value "
                              f"derived from it) to the preset's inputs in sims/presets.py and build {field} "
                              f"from it, or stop varying {names}")
            else:
                yield Finding(loc, f"in {variant}, {name} {runs_it}: its build in sims/presets.py must "
                                   f"carry its inputs ({', '.join(preset.inputs)}) into {field}")


def drill_findings(drill: Drill, file_stem: str | None = None,
                   draws: int = LOAD_DRAWS) -> tuple[dict[str, float], list[Finding]]:
    """Every rule over a drill whose fields are valid; returns the values its formulas give and the findings."""
    findings: list[Finding] = []
    if file_stem is not None and drill.id != file_stem:  # a leading '_' (a template or draft) is not part of it
        findings.append(Finding(("id",), f"drill id {drill.id!r} must match the file name {file_stem!r}"))
    findings += rule_references(drill)
    findings += rule_skills(drill)
    findings += rule_presets(drill)
    findings += rule_pacing(drill)
    values, formula_findings = compute_values(drill)
    findings += formula_findings
    findings += rule_answerable(drill, values)
    findings += rule_placeholders(drill, values)
    findings += typed_figures(drill)
    findings += rule_varied_figures(drill)
    findings += rule_option_lengths(drill, values)
    findings += rule_paths_answerable(drill)
    findings += rule_draw_space(drill)
    if not formula_findings:
        drawn = drawn_variants(drill, draws)
        findings += rule_variants(drill, values, drawn)
        findings += rule_no_leaks(drill, values, drawn)
        findings += rule_simulations(drill, values, drawn)
    return values, findings


# -- what each path shows, and what it must not --------------------------------------------------
# The fewest distinct sets of asked numbers a varying drill's draws may reach: fewer, and a handful of
# throwaway attempts would see every key a later retake can draw.
MIN_DRAW_SPACE = 1000


def rule_draw_space(drill: Drill) -> Iterator[Finding]:
    """A drill that varies draws from enough combinations of the givens its questions use."""
    asked = asked_givens(drill)
    varying = [(i, g) for i, g in enumerate(drill.givens) if g.vary is not None and g.name in asked]
    if not varying:
        return
    space = math.prod(len(g.vary.values()) for _, g in varying)
    if space < MIN_DRAW_SPACE:
        names = ", ".join(g.name for _, g in varying)
        yield Finding(("givens", varying[0][0], "vary"),
                      f"the varying givens the questions use ({names}) make only {space} combinations, so "
                      f"{space} throwaway attempts would see every key a retake can draw; vary more givens or "
                      f"widen their ranges to at least {MIN_DRAW_SPACE} combinations")


def _shown_on_arrival(part: Part) -> Iterator[tuple[Loc, str]]:
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
    typed = {float(n.replace(",", "")) for n in _NUMBER.findall(strip(template))}
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
            for loc, template in _shown_on_arrival(part):
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


LEAK_DRAWS = 8   # draws the leak rule renders besides the written numbers (a leak follows every one of them)


def _visible(drill: Drill) -> Iterator[tuple[Loc, str]]:
    """Every text a candidate can read before any worked answer: the picker opens any part, so every part's
    body, prompts, options, hints and follow-up prompt."""
    for p_index, part in enumerate(drill.parts):
        for loc, template in _shown_on_arrival(part):
            yield ("parts", p_index) + loc, template
    for loc, q in questions(drill):
        for h_index, hint in enumerate(getattr(q, "hints", ())):
            yield loc + ("hints", h_index, "text"), hint.text


def _figures(text: str) -> set[Decimal]:
    return {Decimal(n.replace(",", "")) for n in _NUMBER.findall(text)}


def rule_no_leaks(drill: Drill, written: Mapping[str, float], drawn: Sequence[Draw]) -> Iterator[Finding]:
    """No text a candidate sees before a question's worked answer states that question's truth at the
    precision the truth is shown with: not another part's body or prompt, an option, or any hint (a hint may
    state only its own question's inputs). A figure counts when it follows the truth in the written
    numbers and in every draw checked, so a coincidence in one set of numbers is not a leak."""
    asked = [(loc, q) for loc, q in questions(drill) if isinstance(q, NumericQuestion) and q.answer is not None]
    runs = [written] + [values for _, values, failures in drawn if not failures and _][:LEAK_DRAWS]
    check = [_stand_ins(drill, values) for values in runs]
    givens = {g.name for g in drill.givens}
    given_values = {Decimal(repr(float(g.value))) for g in drill.givens}
    for loc, template in _visible(drill):
        # A given's own figure states the given (a coincidence with a truth is rule_variants' to catch).
        own = re.sub(r"\{(\w+)[^{}]*\}", lambda m: "" if m[1] in givens else m[0], template)
        try:
            shown = [_figures(strip(render(own, values), NO_LABELS)) for values in check]
            typed = _figures(strip(own))
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
        typed = _figures(strip(text.template, NAMES))
        hits = sorted({varied[n] for n in typed if n in varied})
        if hits:
            yield Finding(text.loc, f"types the written value of {', '.join(hits)}, which each attempt draws afresh; "
                                    "name it as a {placeholder}, or reword so no figure equals it")
