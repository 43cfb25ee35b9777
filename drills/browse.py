"""The catalogue as a candidate browses it: what each card leads with, the filters by skill and length, and
what to practise next (the skill most of the due review questions practise, else the lowest-rated one).

No Streamlit here: ui/drill/catalogue.py draws what these functions decide, and tests/test_browse.py holds them.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from drills.reports.aggregates import LEVEL_VALUE
from drills.schema import Drill
from drills.scope import ESSENTIALS, Scope, split_id

# A whole drill asking for at most this much more than its clock "runs a few minutes past" it; more than this
# is practice for a longer session.
A_FEW_MINUTES_PAST = 1.25
# The length filter: a whole drill that asks for no more than one sitting of this many minutes, or longer.
SITTING_MIN = 45
ONE_SITTING, LONGER = "one_sitting", "longer"
LENGTHS = {ONE_SITTING: f"Whole drill within {SITTING_MIN} min", LONGER: "Longer"}


@dataclass(frozen=True)
class Card:
    """What the catalogue says about one drill before its summary."""

    drill_id: str
    title: str
    clock_min: float                 # the whole drill's time box
    work_min: float                  # the reading and thinking the whole drill asks for (drills.scope's estimate)
    fitting: Scope | None            # the shorter practice to lead with, when the whole drill overruns its clock
    skills: tuple[str, ...]          # the drill's rubric skill ids, in its rubric's order

    @property
    def overruns(self) -> bool:
        return self.work_min > self.clock_min

    @property
    def length(self) -> str:
        """ONE_SITTING or LONGER: how the length filter sorts the whole drill."""
        return ONE_SITTING if self.work_min <= SITTING_MIN else LONGER


def card_of(drill: Drill, offered: Sequence[Scope], work_min: float) -> Card:
    """`offered` and `work_min` as drills.scope.ScopedDrills.offers gives them (worked out once per catalogue)."""
    fitting = None
    if work_min > drill.time_box_min:
        fitting = next((s for s in offered if s.work_min <= s.minutes), None)
    return Card(drill.id, drill.title, drill.time_box_min, work_min, fitting, tuple(s.id for s in drill.rubric))


def practice_name(scope: Scope) -> str:
    return "the essentials path" if scope.id == ESSENTIALS else scope.label


def lead(card: Card) -> str:
    """The card's first line: the practice that fits the clock, then what the whole drill is for.

    Markdown of the drill's own words and numbers only (no user text)."""
    clock = f"{card.clock_min:g}-minute clock"
    work = f"about {card.work_min:.0f} minutes of reading and thinking"
    if not card.overruns:
        return f"**Fits the {clock}:** the whole drill, {work}."
    # Honest about the clock: it keeps running past the time box (an attempt is not paused between sittings).
    if card.work_min <= A_FEW_MINUTES_PAST * card.clock_min:
        whole = f"The whole drill ({work}) goes a little deeper and runs a few minutes past its clock, which " \
                "records the overtime."
    else:
        whole = (f"The whole drill ({work}) is deeper practice for a longer session: its clock keeps running after "
                 f"{card.clock_min:g} minutes and records the overtime.")
    if card.fitting is None:
        return whole
    fitting = card.fitting
    return (f"**Fits the {fitting.minutes:g}-minute clock:** {practice_name(fitting)} "
            f"(about {fitting.work_min:.0f} minutes). {whole}")


def skill_choices(drills: Iterable[Drill]) -> dict[str, str]:
    """Every rubric skill in the catalogue (id -> name), a skill shared by several drills once, in drill order."""
    choices: dict[str, str] = {}
    for drill in drills:
        for skill in drill.rubric:
            choices.setdefault(skill.id, skill.name)
    return choices


def matching(cards: Iterable[Card], skills: Collection[str], lengths: Collection[str]) -> list[Card]:
    """The cards that practise any of `skills` and are of any of `lengths`; an empty choice does not filter."""
    return [card for card in cards
            if (not skills or set(skills) & set(card.skills)) and (not lengths or card.length in lengths)]


def nothing_matches(skill_names: Sequence[str], length_labels: Sequence[str]) -> str:
    """The empty state's sentence: what was asked for, and how to see drills again."""
    asked = []
    if skill_names:
        asked.append("practises " + " or ".join(skill_names))
    if length_labels:
        asked.append("is " + " or ".join(label.lower() for label in length_labels))
    return f"No drill {' and '.join(asked)}. Remove a skill or a length to see more drills."


@dataclass(frozen=True)
class NextUp:
    """What spaced review suggests: a skill, the drill it was met in, and why."""

    skill_id: str
    skill: str
    drill_id: str
    drill: str
    due: int = 0                     # review questions due that practise it; 0: the lowest-rated skill instead
    level: str = ""                  # that rating, in the drill's own words (when due is 0)


def next_up(drills: Mapping[str, Drill], due: Sequence[tuple[str, str]],
            scored: Sequence[tuple[str, Mapping[str, str]]]) -> NextUp | None:
    """The skill to practise next.

    `due`: the (drill id, question id) of each review question due, longest overdue first; the skill most of
    them practise wins (the longest overdue first on a tie). With none due, `scored`: (drill id, {skill id:
    level}) of the latest scored attempts, newest first; the lowest level wins (the newest on a tie), unless
    every skill is strong. Questions, drills and skills the catalogue no longer has are passed over."""
    counts: Counter[str] = Counter()
    met_in: dict[str, str] = {}
    for drill_id, question_id in due:
        drill = drills.get(split_id(drill_id)[0])
        try:
            skills = drill.question(question_id).skills if drill else ()
        except KeyError:
            continue
        for skill in skills:
            counts[skill] += 1
            met_in.setdefault(skill, drill.id)
    if counts:
        skill_id = max(counts, key=counts.get)   # the first skill met on a tie: dicts keep the order seen
        drill = drills[met_in[skill_id]]
        return NextUp(skill_id, drill.skill(skill_id).name, drill.id, drill.title, due=counts[skill_id])
    lowest = None
    for drill_id, levels in scored:
        drill = drills.get(split_id(drill_id)[0])
        known = {skill: level for skill, level in levels.items()
                 if drill is not None and level in LEVEL_VALUE and skill in {s.id for s in drill.rubric}}
        for skill, level in known.items():
            if LEVEL_VALUE[level] < LEVEL_VALUE["strong"] and (lowest is None or LEVEL_VALUE[level] < lowest[0]):
                lowest = (LEVEL_VALUE[level], drill, skill, level)
    if lowest is None:
        return None
    _value, drill, skill_id, level = lowest
    return NextUp(skill_id, drill.skill(skill_id).name, drill.id, drill.title, level=drill.level_label(level))


def next_up_line(suggestion: NextUp) -> str:
    """The catalogue's "Next up" sentence, markdown of the drills' own words (no user text)."""
    if suggestion.due:
        some = (f"{suggestion.due} due question practises" if suggestion.due == 1
                else f"{suggestion.due} due questions practise")
        return f"**Next up:** spaced review. {some} *{suggestion.skill}*, met in {suggestion.drill}."
    return (f"**Next up:** *{suggestion.skill}*, your lowest score lately ({suggestion.level} in "
            f"{suggestion.drill}).")
