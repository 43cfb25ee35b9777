"""Content rules on choice questions: no option's length may point at the answer."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from drills.formulas import FormulaError, render
from drills.lint.registry import register, the_break
from drills.lint.walk import Finding, Loc, questions, stand_ins
from drills.schema import ChoiceQuestion, Drill


# How far option length may point at the answer: the right option at most this much longer than
# the longest wrong one, and strictly the longest in at most this share of a drill's choice questions.
RIGHT_OPTION_MAX_RATIO = 1.15
RIGHT_OPTION_LONGEST_SHARE = 1 / 3

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
    check = stand_ins(drill, values)

    def measure(template: str) -> str:
        try:
            return render(template, check)
        except FormulaError:
            return template  # the placeholder rule reports it
    lengths = option_lengths(drill, measure)
    return length_findings(lengths) + rank_findings(lengths)


def _long_right_option(data: dict) -> None:
    the_break(data)["questions"].append({
        "id": "first_move", "kind": "choice", "prompt": "What first?", "answer": "more", "skills": ["sizing"],
        "options": [{"id": "more", "text": "Add workers until the pool keeps up with everything that arrives"},
                    {"id": "less", "text": "Shed the queue"}]})


register("option_lengths", 110, lambda s: rule_option_lengths(s.drill, s.values), _long_right_option)
