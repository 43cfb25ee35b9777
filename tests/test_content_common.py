"""Checks every drill's content must pass, run on each drill against the figures its own brief states.

The figures live beside each drill's own tests (tests/test_content_<drill>.py); the rules themselves are drills.lint's.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import pytest

from drills import lint
from drills.draws import sample_draws
from tests import (test_content_cache_stampede, test_content_hot_tenant, test_content_one_tenant,
                   test_content_retry_chain, test_content_split_brain)
from tests.content_checks import GRADED_SAMPLE, DrillBrief, close, fixed_texts, numeric, templates

BRIEFS: dict[str, DrillBrief] = {brief.drill.id: brief
                                 for brief in (test_content_one_tenant.BRIEF, test_content_hot_tenant.BRIEF,
                                               test_content_cache_stampede.BRIEF, test_content_retry_chain.BRIEF,
                                               test_content_split_brain.BRIEF)}

each_drill = pytest.mark.parametrize("brief", list(BRIEFS.values()), ids=list(BRIEFS))


def each_row(table: str):
    """Parametrize over every (drill, key) row of one of the briefs' tables, with ids like one_tenant-job_duration."""
    rows = [pytest.param(brief, key, id=f"{drill_id}-{key}")
            for drill_id, brief in BRIEFS.items() for key in sorted(getattr(brief, table))]
    return pytest.mark.parametrize("brief, key", rows)


def _messages(findings) -> str:
    """The loader's findings as one line each: key path and message."""
    return "; ".join(f"{'.'.join(map(str, f.loc))}: {f.message}" for f in findings)


@each_drill
def test_every_formula_answer_has_a_brief_figure_to_check(brief):
    assert {q.id for q in numeric(brief.drill, with_answer=True)} == set(brief.answers)


@each_row("answers")
def test_answer_matches_the_brief(brief, key):
    figure, rel, where = brief.answers[key]
    value = brief.loaded.truth(key)
    assert close(value, figure, rel), f"{key} = {value:g}; the brief says {figure:g} ({where})"


@each_row("derived")
def test_derived_value_matches_the_brief(brief, key):
    figure, rel, where = brief.derived[key]
    value = brief.values[key]
    assert close(value, figure, rel), f"{key} = {value:g}; the brief says {figure:g} ({where})"


@each_drill
def test_every_simulation_question_is_listed(brief):
    listed = {k: v[0] for k, v in brief.sims.items()}
    assert {q.id: q.sim for q in numeric(brief.drill, with_answer=False)} == listed


@each_row("sims")
def test_simulation_answer_is_near_the_brief(brief, key):
    _, figure, rel, where = brief.sims[key]
    for seed, sims in zip((brief.sim_seed, *GRADED_SAMPLE), brief.every_sim_values):   # any attempt's run
        value = sims[key]
        assert value > 0
        if figure is not None:
            assert close(value, figure, rel), f"{key} = {value:g} (seed {seed}); the brief says {figure:g} ({where})"


@each_drill
def test_every_text_renders_with_the_simulation_results(brief):
    for part_id, where, template in templates(brief.drill):
        text = brief.loaded.text(template, brief.attempt_sim_values[0])
        assert "{" not in text and "}" not in text, f"{part_id}.{where} left a placeholder"


@each_drill
def test_no_text_types_a_figure_literally(brief):
    # The loader's rule, held to this drill's own brief: its labels and the parts it lets state figures.
    found = lint.typed_figures(brief.drill, brief.labels, free_parts=brief.figures_allowed_in)
    assert not found, _messages(found)


@each_drill
def test_option_length_does_not_give_the_answer_away(brief):
    # The loader's rule, measured on the options as rendered with the real simulation results.
    for sims in brief.every_sim_values:    # as the brief's run and attempts' own runs render them
        lengths = lint.option_lengths(brief.drill, lambda template, sims=sims: brief.loaded.text(template, sims))
        assert lengths, "the drill has no choice questions to check"
        problems = lint.length_giveaways(lengths)
        assert not problems, "option length points at the answer: " + "; ".join(problems)


@each_drill
def test_every_placeholder_names_something_the_drill_defines(brief):
    found = list(lint.rule_placeholders(brief.drill, brief.values))
    assert not found, _messages(found)


@each_drill
def test_pacing_adds_up_to_the_time_box(brief):
    found = list(lint.rule_pacing(brief.drill))
    assert not found, _messages(found)
    assert brief.drill.time_box_min == brief.time_box_min
    assert all(p.minutes > 0 for p in brief.drill.parts)


@each_drill
def test_every_question_links_a_skill_and_every_skill_is_evidenced(brief):
    found = list(lint.rule_skills(brief.drill))
    assert not found, _messages(found)


@each_drill
def test_numeric_tolerances_are_sane(brief):
    for q in numeric(brief.drill):
        if q.tolerance.kind == "relative":
            assert 0 < q.tolerance.value <= 0.3, q.id


# -- arithmetic the text states, in every variant --------------------------------------------------
_NUMBER = r"\$?(\d[\d,]*(?:\.\d+)?)"
_STATED = re.compile(rf"{_NUMBER}%?\s*([−+×÷/-])\s*{_NUMBER}%?\s*(=|≈)\s*\**\s*{_NUMBER}(%?)\**\s*"
                     r"(min\b|minutes\b|hours?\b)?")
_OPERATIONS = {"−": operator.sub, "-": operator.sub, "+": operator.add, "×": operator.mul, "÷": operator.truediv,
               "/": operator.truediv}


@dataclass(frozen=True)
class StatedSum:
    """An "a op b = c" (or ≈ c) the text states: what a op b gives, and c as written with its decimals."""

    statement: str
    worked: float
    stated: float
    places: int
    approximate: bool

    def adds_up(self) -> bool:
        slack = 0.5 * 10 ** -self.places + 1e-9   # c is the worked value rounded to the places it shows
        if self.approximate:
            slack = max(slack, abs(self.worked) * 0.05)
        return abs(self.worked - self.stated) <= slack


def stated_sums(text: str) -> list[StatedSum]:
    """Each sum in `text`; a result marked % is a share, one in minutes or hours a count of seconds made readable."""
    found = []
    for match in _STATED.finditer(text):
        a, op, b, relation, c, percent, unit = match.groups()
        worked = _OPERATIONS[op](float(a.replace(",", "")), float(b.replace(",", "")))
        stated = float(c.replace(",", ""))
        if percent:
            worked *= 100
        elif unit and worked > stated * 10:   # e.g. 1,075 jobs ÷ 0.675 jobs/s ≈ 27 min
            worked /= 3600 if unit.startswith("hour") else 60
        places = len(c.split(".")[1]) if "." in c else 0
        found.append(StatedSum(match.group(0), worked, stated, places, relation == "≈"))
    return found


def test_the_sum_reader_checks_what_it_finds():
    [right] = stated_sums("so 250 − 100 = **150** units/s")
    assert (right.worked, right.stated, right.adds_up()) == (150, 150, True)
    assert not stated_sums("275 − 100 = 125")[0].adds_up()
    assert stated_sums("1/66 ≈ **1.5%**")[0].adds_up() and stated_sums("1,075 ÷ 0.675 ≈ **27 min**")[0].adds_up()
    assert not stated_sums("7,500 ÷ 1,560 = 2.4 hours")[0].adds_up()   # 4.8: two places of slack would hide nothing


@each_drill
def test_every_sum_the_text_states_adds_up_in_every_variant(brief):
    # Worked answers quote their arithmetic with the drawn numbers; a claim written for one set of numbers
    # reads as a wrong sum in the others.
    from drills.variants import in_variant
    from ui.drill.attempt_view import sim_truths_of

    checked, wrong = 0, []
    draws = [0, *sample_draws(11)]
    for number, variant in enumerate(draws):   # each draw graded at one of the sampled attempts' seeds
        seen = in_variant(brief.loaded, variant)
        sims = sim_truths_of(seen, GRADED_SAMPLE[number % len(GRADED_SAMPLE)])
        for text in lint.texts(seen.drill):
            for found in stated_sums(seen.text(text.template, sims)):
                checked += 1
                if not found.adds_up():
                    wrong.append(f"variant {variant} {'.'.join(map(str, text.loc))}: {found.statement!r} "
                                 f"gives {found.worked:g}")
    assert checked >= len(draws), "the drill states sums in its worked answers; none were read"
    assert wrong == []


@each_drill
def test_text_that_is_not_templated_states_no_number_a_variant_changes(brief):
    # A title, a rubric row or a given's note cannot follow the drawn numbers, so a figure in it that a
    # variant moves (Break 1's "100× its load") reads wrong beside a retake's numbers.
    from drills.variants import in_variant

    loaded = brief.loaded
    moving: dict[float, str] = {}
    for variant in sample_draws(40):
        drawn = in_variant(loaded, variant).values
        moving.update({float(value): name for name, value in loaded.values.items() if drawn.get(name) != value})
    for given in loaded.drill.givens:   # a figure equal to a given that never varies may well be that given
        if given.vary is None:
            moving.pop(float(given.value), None)
    stated = []
    for where, text in fixed_texts(loaded.drill):
        figures = re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", brief.labels.sub("", text))
        stated += [f"{where} states {n}, which is {moving[float(n.replace(',', ''))]} as written"
                   for n in figures if float(n.replace(",", "")) in moving]
    assert stated == []
