"""The drill content schema: frozen pydantic models that every YAML drill must satisfy.

Numbers live once, as givens; answers are expressions over them, reveal text names them.
"""
from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,47}$"
Name = Annotated[str, Field(pattern=NAME_PATTERN, description="Identifier: lower case, digits, underscores.")]

# Canonical order of reveal sections inside a part; content must keep it.
SECTION_ORDER = ("why", "worked", "detect", "contain", "degrade", "recover", "prevent", "tradeoff")
SECTION_TITLES = {
    "why": "Why nothing stopped it",
    "worked": "The worked numbers",
    "detect": "Detect",
    "contain": "Contain",
    "degrade": "Degrade",
    "recover": "Recover",
    "prevent": "Prevent",
    "tradeoff": "The trade-off",
}
Stage = Literal["why", "worked", "detect", "contain", "degrade", "recover", "prevent", "tradeoff"]
Level = Literal["strong", "ok", "weak"]
LEVELS: tuple[Level, ...] = ("strong", "ok", "weak")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


Holds = tuple[str, ...]
HOLDS_DESCRIPTION = ("Conditions the text beside them relies on, as simpleeval comparisons over givens, derived "
                     "values and answers (e.g. 'free_shed_at > daily_spend'); the check evaluates each on the "
                     "written numbers, every sampled draw and the corners of the ranges.")


class Vary(_Frozen):
    """The values a given may take in a drawn variant: a range walked in steps, or a list of choices."""

    low: float | None = Field(default=None, description="Smallest value a variant may draw.")
    high: float | None = Field(default=None, description="Largest value a variant may draw.")
    step: float | None = Field(default=None, gt=0, description="Drawn values are low + k * step, up to high.")
    choices: tuple[float, ...] = Field(default=(), description="Or: the values a variant may draw from.")
    when: Holds = Field(default=(), description="Conditions a draw must meet, over givens and derived values "
                                                "(e.g. 'spend_cap * free_shed_pct / 100 > daily_spend'): this "
                                                "given is drawn jointly with the others they name, and a draw "
                                                "that breaks one is drawn again.")

    @model_validator(mode="after")
    def _one_form(self) -> Vary:
        ranged = (self.low, self.high, self.step)
        if self.choices:
            if any(x is not None for x in ranged):
                raise ValueError("give either 'choices' or 'low', 'high' and 'step', not both")
            return self
        if any(x is None for x in ranged):
            raise ValueError("give 'low', 'high' and 'step' (or a list of 'choices')")
        if self.low >= self.high:
            raise ValueError("'low' must be below 'high'")
        return self

    def values(self) -> tuple[float, ...]:
        """Every value a variant may draw, smallest first."""
        if self.choices:
            return tuple(sorted(set(self.choices)))
        count = int(round((self.high - self.low) / self.step + 1e-9))
        return tuple(round(self.low + k * self.step, 10) for k in range(count + 1))


class Given(_Frozen):
    """A number the scenario states, written once and referred to by name everywhere else."""

    name: Name = Field(description="How expressions and reveal text refer to this number.")
    value: float = Field(description="The number itself, in `unit`.")
    unit: str = Field(description="Unit shown beside the number, e.g. 'jobs/s'.")
    note: str = Field(default="", description="Where the number comes from in the scenario.")
    vary: Vary | None = Field(default=None, description="Values an attempt may draw instead of `value`; each "
                                                        "attempt draws from its own seed.")


class Derived(_Frozen):
    """A quantity computed from givens (and earlier derived values) for use in reveal text."""

    name: Name = Field(description="How later expressions and reveal text refer to this value.")
    expr: str = Field(description="A simpleeval expression over givens and earlier derived names.")
    unit: str = Field(description="Unit of the result.")


class Tolerance(_Frozen):
    """How close a numeric guess must be: full marks inside it, half inside twice it."""

    kind: Literal["relative", "absolute"] = Field(description="relative: a fraction of the truth; absolute: in the unit.")
    value: float = Field(gt=0, description="0.1 means 10% when relative; 5 means +/-5 units when absolute.")


class _QuestionBase(_Frozen):
    id: Name = Field(description="Unique within the drill; also the answer's name in reveal text.")
    prompt: str = Field(min_length=1, description="The question as the candidate reads it (markdown).")
    skills: tuple[Name, ...] = Field(default=(), description="Rubric skill ids this question evidences.")
    essential: bool = Field(default=False, description="Part of the drill's essentials path (the few questions "
                                                       "a short attempt keeps: about 3-5 per break).")
    holds: Holds = Field(default=(), description=HOLDS_DESCRIPTION)


class Hint(_Frozen):
    """A nudge a candidate may open before locking in, at a price: part of the question's mark."""

    text: str = Field(min_length=1, description="The hint (markdown; may name givens and derived values).")
    cost: float = Field(gt=0, lt=1, description="Fraction of the question's mark given up by opening it before "
                                                "the lock-in, e.g. 0.25.")


class NumericQuestion(_QuestionBase):
    """A number the candidate commits to, with an optional 80% range for calibration."""

    kind: Literal["numeric"] = Field(description="Discriminator.")
    unit: str = Field(description="Unit shown beside the input.")
    answer: str | None = Field(default=None, description="simpleeval expression over givens and derived values.")
    sim: str | None = Field(default=None, description="A sims.presets id; the truth is that simulation's result.")
    tolerance: Tolerance = Field(description="Grading tolerance.")
    decimals: int = Field(default=2, ge=0, le=6, description="Decimals when the truth is shown.")
    hints: tuple[Hint, ...] = Field(default=(), description="Graded hints, opened one after another before the "
                                                            "lock-in; each costs its share of the mark.")
    fixed: str | None = Field(default=None, min_length=1,
                              description="Only for a truth that is the same in every draw on purpose: the "
                                          "reason (a measured lab figure, say). At most a tenth of a drill's "
                                          "numeric truths may stay fixed across draws, and each must say why.")

    @model_validator(mode="after")
    def _one_source(self) -> NumericQuestion:
        if (self.answer is None) == (self.sim is None):
            raise ValueError("give exactly one of 'answer' (an expression) or 'sim' (a preset id)")
        if sum(h.cost for h in self.hints) >= 1:
            raise ValueError("the hints' costs add up to the whole mark or more; keep their sum below 1")
        return self


class Option(_Frozen):
    id: Name = Field(description="Option id, unique within the question.")
    text: str = Field(min_length=1, description="What the candidate reads.")


class ChoiceQuestion(_QuestionBase):
    """One option out of several; graded exactly."""

    kind: Literal["choice"] = Field(description="Discriminator.")
    options: tuple[Option, ...] = Field(min_length=2, description="The options, in display order.")
    answer: Name = Field(description="The id of the right option.")
    explain: str = Field(default="", description="Why the right option is right, shown after reveal.")

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> ChoiceQuestion:
        ids = [o.id for o in self.options]
        if len(set(ids)) != len(ids):
            raise ValueError("option ids must be unique")
        if self.answer not in ids:
            raise ValueError(f"answer {self.answer!r} is not one of the options {ids}")
        return self


class NotesQuestion(_QuestionBase):
    """Free text, self-assessed against what a strong answer covers."""

    kind: Literal["notes"] = Field(description="Discriminator.")
    strong_answer: str = Field(min_length=1, description="What a strong answer covers; shown after reveal.")


Question = Annotated[Union[NumericQuestion, ChoiceQuestion, NotesQuestion], Field(discriminator="kind")]


class RevealSection(_Frozen):
    """One step of the worked answer, opened by its own button."""

    stage: Stage = Field(description="Which step of the answer this is; sections keep the canonical order.")
    title: str | None = Field(default=None, min_length=1, max_length=60,
                              description="Heading and button label; defaults to the stage's usual title.")
    text: str = Field(min_length=1, description="Markdown; {name} or {name:,.0f} inserts a given, derived value or answer.")
    labs: tuple[Name, ...] = Field(default=(), description="PostgreSQL lab experiments linked under this section "
                                                            "once it is open (labs.postgres.experiments ids).")
    holds: Holds = Field(default=(), description=HOLDS_DESCRIPTION)


def section_title(section: RevealSection) -> str:
    return section.title or SECTION_TITLES[section.stage]


def _check_section_order(sections: tuple[RevealSection, ...]) -> None:
    positions = [SECTION_ORDER.index(s.stage) for s in sections]
    if positions != sorted(positions) or len(set(positions)) != len(positions):
        stages = [s.stage for s in sections]
        raise ValueError(f"reveal sections {stages} must be unique and in the order {list(SECTION_ORDER)}")


class FollowUp(_Frozen):
    """The interviewer's follow-up: its own questions and its own answer."""

    prompt: str = Field(min_length=1, description="The follow-up as asked (markdown).")
    questions: tuple[Question, ...] = Field(default=(), description="Lock-ins for the follow-up.")
    answer: str = Field(min_length=1, description="The worked answer (markdown, may use {names}).")
    labs: tuple[Name, ...] = Field(default=(), description="PostgreSQL lab experiments linked under the answer "
                                                            "once it is open.")
    holds: Holds = Field(default=(), description=HOLDS_DESCRIPTION)


class Part(_Frozen):
    """A step of the drill: the prompt, the board, the baseline, a break, the close."""

    id: Name = Field(description="Unique within the drill; used in URLs and the store.")
    title: str = Field(min_length=1, description="Shown in the stepper and on results.")
    kind: Literal["prompt", "board", "baseline", "break", "closing"] = Field(description="What sort of step this is.")
    minutes: float = Field(ge=0, le=60, description="Suggested pacing for this part.")
    body: str = Field(default="", description="Markdown shown on arrival (the scenario).")
    questions: tuple[Question, ...] = Field(default=(), description="'Before you read on' lock-ins.")
    reveal: tuple[RevealSection, ...] = Field(default=(), description="The worked answer, step by step.")
    followup: FollowUp | None = Field(default=None, description="Optional follow-up question.")
    holds: Holds = Field(default=(), description=HOLDS_DESCRIPTION + " Beside the part's body.")

    @model_validator(mode="after")
    def _order(self) -> Part:
        _check_section_order(self.reveal)
        return self


class Skill(_Frozen):
    """A rubric row: what strong, OK and weak look like for one skill."""

    id: Name = Field(description="Skill id referred to by questions.")
    name: str = Field(min_length=1, description="Shown in the rubric.")
    strong: str = Field(min_length=1, description="What a strong answer shows.")
    ok: str = Field(min_length=1, description="What an OK answer shows.")
    weak: str = Field(min_length=1, description="What a weak answer looks like.")


class LevelNames(_Frozen):
    """What the three rubric levels are called in this drill (e.g. Staff / Senior / Junior)."""

    strong: str = Field(default="Strong", min_length=1, description="Name of the top level.")
    ok: str = Field(default="OK", min_length=1, description="Name of the middle level.")
    weak: str = Field(default="Weak", min_length=1, description="Name of the bottom level.")


class Verdict(_Frozen):
    """How rubric levels turn into the closing verdict."""

    strong_needed: int = Field(ge=1, description="Strong skills needed for the pass message.")
    pass_message: str = Field(min_length=1, description="Shown when enough skills are strong.")
    short_message: str = Field(min_length=1, description="Shown when fewer are strong.")
    watch_skills: tuple[Name, ...] = Field(default=(), description="Skills whose weakness earns a warning.")
    watch_message: str = Field(default="", description="The warning when a watched skill is weak.")


class Drill(_Frozen):
    """One drill file. Its fields are checked here; how they refer to each other (unique names and ids,
    known skills, pacing, formulas, placeholders) is checked by the rules in drills.loader, which report
    every problem of a file at once."""

    id: Name = Field(description="Unique across drills; must match the file name.")
    title: str = Field(min_length=1, description="Catalogue title.")
    summary: str = Field(min_length=1, description="One or two sentences for the catalogue.")
    order: int = Field(default=100, ge=0, description="Position in the catalogue; lower comes first.")
    time_box_min: float = Field(gt=0, le=240, description="The time box in minutes.")
    break_time_box_min: float | None = Field(
        default=None, gt=0, le=240,
        description="The time box of a single-break attempt (the board and one break); no longer than "
                    "`time_box_min`, which it defaults to.")
    covers: tuple[str, ...] = Field(default=(), description="Topics the drill practises.")
    givens: tuple[Given, ...] = Field(description="Every number the scenario states.")
    first_attempt_as_written: bool = Field(
        default=False,
        description="A candidate's first attempt keeps the written numbers. Otherwise (the default) every "
                    "attempt of a drill with a varying given draws its own numbers from its own seed.")
    derived: tuple[Derived, ...] = Field(default=(), description="Helper quantities computed from givens.")
    parts: tuple[Part, ...] = Field(min_length=1, description="The drill's steps in order.")
    rubric: tuple[Skill, ...] = Field(min_length=1, description="Self-scoring rubric.")
    level_names: LevelNames = Field(default_factory=LevelNames, description="Names shown for strong / ok / weak.")
    verdict: Verdict = Field(description="Verdict rules over the rubric.")

    @property
    def break_minutes(self) -> float:
        """The clock of a single-break attempt."""
        return self.break_time_box_min if self.break_time_box_min is not None else self.time_box_min

    def all_questions(self) -> list[NumericQuestion | ChoiceQuestion | NotesQuestion]:
        out: list = []
        for part in self.parts:
            out.extend(part.questions)
            if part.followup:
                out.extend(part.followup.questions)
        return out

    def part(self, part_id: str) -> Part:
        for p in self.parts:
            if p.id == part_id:
                return p
        raise KeyError(part_id)

    def question(self, question_id: str):
        for q in self.all_questions():
            if q.id == question_id:
                return q
        raise KeyError(question_id)

    def level_label(self, level: str) -> str:
        return getattr(self.level_names, level)

    def skill(self, skill_id: str) -> Skill:
        for s in self.rubric:
            if s.id == skill_id:
                return s
        raise KeyError(skill_id)
