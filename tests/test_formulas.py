"""Formulas and text placeholders: safe evaluation and friendly number formatting."""
from __future__ import annotations

import pytest

from drills.formulas import FormulaError, evaluate, format_number, render


def test_expressions_use_givens_and_helper_functions():
    assert evaluate("a * b / c", {"a": 5, "b": 32, "c": 8}) == 20
    assert evaluate("comb(n, k)", {"n": 8.0, "k": 2.0}) == 28
    assert evaluate("max(1, x) + ceil(y)", {"x": 3, "y": 1.2}) == 5


@pytest.mark.parametrize("expr", ["unknown + 1", "1 / 0", "__import__('os')", "'text'", "10 ** 400.0"])
def test_bad_expressions_raise_formula_errors(expr):
    with pytest.raises(FormulaError):
        evaluate(expr, {})


def test_render_fills_named_values_with_and_without_format_specs():
    assert render("{a} jobs at {b:.1f}/s", {"a": 1200.0, "b": 6.25}) == "1,200 jobs at 6.3/s"   # half up


def test_every_figure_rounds_half_up():
    # Python's own rounding sent halves to the even neighbour: 112.5 showed as 112 beside 137.5 as 138.
    from drills.formulas import format_number, format_quantity

    assert [format_number(v) for v in (112.5, 137.5)] == ["113", "138"]
    assert [format_quantity(v, "$", 0) for v in (112.5, 137.5)] == ["$113", "$138"]
    assert render("{a:.0f} {b:.2f} {c:.0%} {d:clock}", {"a": 0.5, "b": 0.125, "c": 0.125, "d": 790.5}) == \
        "1 0.13 13% 13:11"
    with pytest.raises(FormulaError):
        render("{missing}", {})


@pytest.mark.parametrize("value, text", [(160.0, "160"), (6.25, "6.25"), (3.6999999, "3.7"),
                                         (0.0357, "0.0357"), (1104.42, "1,104"), (-2.5, "-2.5")])
def test_format_number_reads_naturally(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize("value, unit, decimals, text", [
    (20.0, "calls/s", 1, "20 calls/s"), (80.0, "%", 0, "80%"), (5000.0, "$/day", 0, "$5,000/day"),
    (134.66, "USD", 0, "$135"), (240.0, "x", 0, "240×"), (3.7, "jobs/s", 2, "3.7 jobs/s"), (-2.5, "$", 2, "-$2.5"),
])
def test_quantities_are_written_the_way_people_write_them(value, unit, decimals, text):
    from drills.formulas import format_quantity

    assert format_quantity(value, unit, decimals) == text


@pytest.mark.parametrize("minutes, shown", [(790, "13:10"), (765.4, "12:45"), (959.6, "16:00"), (60 * 24 + 5, "00:05")])
def test_a_clock_placeholder_shows_minutes_after_midnight_as_a_time_of_day(minutes, shown):
    assert render("by {t:clock}", {"t": minutes}) == f"by {shown}"
