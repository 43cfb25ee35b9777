"""Safe evaluation of drill formulas and of the {name} placeholders in drill text.

Expressions go through simpleeval (never eval); text is formatted from one value map.
"""
from __future__ import annotations

import functools
import math
import re
import string
import threading
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal

from simpleeval import SimpleEval

def _comb(n: float, k: float) -> int:
    """Binomial coefficient that accepts whole-valued floats (givens are floats)."""
    if not (float(n).is_integer() and float(k).is_integer()):
        raise ValueError("comb needs whole numbers")
    return math.comb(int(n), int(k))


FUNCTIONS = {
    "min": min, "max": max, "abs": abs, "round": round,
    "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt, "comb": _comb, "log": math.log,
}


class FormulaError(ValueError):
    """An expression or placeholder that cannot be evaluated; the message names what is missing."""


_EVALUATORS = threading.local()   # one evaluator per thread (each session's script runs in its own)


_PARSING = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _parsed(expr: str):
    """An expression's syntax tree: drills have a few hundred formulas, each drawn variant evaluates them all.

    One parse at a time: CPython 3.11's ast.parse keeps its recursion depth in state that threads share, so two
    sessions' script threads parsing at once can fail with "AST constructor recursion depth mismatch" (a
    SystemError on a formula that is fine). Under 200 arriving candidates that failed a drill page's first run
    with a ValueError; a parse that still meets it (another library parsing at that moment) is tried again."""
    with _PARSING:
        for retry in (True, False):
            try:
                return SimpleEval.parse(expr)
            except SystemError as problem:
                if not retry or "recursion depth mismatch" not in str(problem):
                    raise
    raise AssertionError("unreachable")


def _raw(expr: str, names: Mapping[str, float]) -> object:
    evaluator = getattr(_EVALUATORS, "evaluator", None)
    if evaluator is None:   # building one costs more than evaluating a formula: build it once per thread
        evaluator = _EVALUATORS.evaluator = SimpleEval(names={}, functions=FUNCTIONS)
    evaluator.names = dict(names)
    try:
        return evaluator.eval(expr, previously_parsed=_parsed(expr))
    except Exception as exc:  # simpleeval raises several types; report them uniformly
        raise FormulaError(f"cannot evaluate {expr!r}: {exc}") from None


def evaluate(expr: str, names: Mapping[str, float]) -> float:
    value = _raw(expr, names)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormulaError(f"{expr!r} did not give a number")
    value = float(value)
    if not math.isfinite(value):
        raise FormulaError(f"{expr!r} is not finite")
    return value


def condition_holds(expr: str, names: Mapping[str, float]) -> bool:
    """Whether a condition ('free_shed_at > daily_spend') is true for these values; FormulaError when it cannot
    be evaluated or is not a comparison."""
    value = _raw(expr, names)
    if not isinstance(value, bool):
        raise FormulaError(f"{expr!r} is not a condition (write a comparison such as 'a > b')")
    return value


_FORMATTER = string.Formatter()


def placeholders(text: str) -> list[str]:
    """The names a text refers to, in order."""
    try:
        return [field.split(".")[0].split("[")[0] for _, field, _, _ in _FORMATTER.parse(text) if field]
    except ValueError as exc:
        raise FormulaError(f"bad placeholder syntax: {exc}") from None


def render(text: str, values: Mapping[str, float]) -> str:
    """Fill {name} and {name:spec} from values; a bare {name} gets a friendly default format."""
    out = []
    try:
        for literal, field, spec, conversion in _FORMATTER.parse(text):
            out.append(literal)
            if field is None:
                continue
            if field not in values:
                raise FormulaError(f"text refers to unknown name {{{field}}}")
            out.append(format_number(values[field], spec or None))
    except ValueError as exc:
        raise FormulaError(f"bad placeholder: {exc}") from None
    return "".join(out)


CLOCK = "clock"   # {name:clock}: minutes after midnight as a time of day, e.g. 790 -> 13:10


_FIXED = re.compile(r"(?P<head>.*?)\.(?P<places>\d+)(?P<kind>[f%])")


def half_up(value: float, decimals: int) -> Decimal:
    """`value` rounded to `decimals` places, halves away from zero (112.5 -> 113, as 137.5 -> 138).

    Every figure the app shows goes through here: Python's own rounding sends halves to the even neighbour
    and so shows 112.5 as 112 beside 137.5 as 138. The shortest repr is what is rounded, so 0.125 is a half.
    """
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def _formatted(value: float, spec: str) -> str:
    """format(value, spec), with fixed-point and percent specs rounding halves up."""
    fixed = _FIXED.fullmatch(spec)
    if fixed is None or not math.isfinite(value):
        return format(value, spec)
    places = int(fixed["places"]) + (2 if fixed["kind"] == "%" else 0)
    return format(half_up(value, places), spec)


def format_number(value: float, spec: str | None = None) -> str:
    if spec == CLOCK:
        minutes = int(half_up(value, 0)) % (24 * 60)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"
    if spec:
        return _formatted(value, spec)
    if float(value).is_integer():
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude >= 100:
        return _formatted(value, ",.0f")
    if magnitude >= 1:
        return _formatted(value, ",.2f").rstrip("0").rstrip(".")
    return f"{value:.3g}"


def format_quantity(value: float, unit: str, decimals: int | None = None) -> str:
    """A number with its unit, written the way people write it: 80%, $5,000/day, 240×, 6.25 jobs/s."""
    if decimals is None:
        number = format_number(value)
    else:
        number = _formatted(value, f",.{decimals}f")
        if "." in number:
            number = number.rstrip("0").rstrip(".")
    if unit == "%":
        return f"{number}%"
    if unit == "x":
        return f"{number}×"
    if unit in ("$", "USD"):
        return f"-${number[1:]}" if number.startswith("-") else f"${number}"
    if unit.startswith("$/"):
        money = f"-${number[1:]}" if number.startswith("-") else f"${number}"
        return f"{money}{unit[1:]}"
    return f"{number} {unit}" if unit else number
