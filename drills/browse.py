"""The catalogue as a candidate browses it: what each drill's card leads with.

No Streamlit here: ui/drill/catalogue.py draws what these functions decide, and tests/test_browse.py holds them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from drills.schema import Drill
from drills.scope import ESSENTIALS, Scope

# A whole drill asking for at most this much more than its clock "runs a few minutes past" it; more than this
# is practice for a longer session.
A_FEW_MINUTES_PAST = 1.25


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
