"""Parameter checks shared by every model's ``Params.__post_init__``: the one front door for bad input.

Each check raises a one-line ValueError naming the parameter, what it may be, and what it got.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping


def whole(name: str, value: object, low: int, high: float = math.inf) -> None:
    """``value`` must be an int (not a bool) with ``low <= value <= high``; ``high`` may be infinite."""
    allowed = _range_text(low, high, False, False)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number {allowed}, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be {allowed}, got {value}")


def number(name: str, value: object, low: float, high: float = math.inf, *,
           low_open: bool = False, high_open: bool = False) -> None:
    """``value`` must be a finite int or float (not a bool) within ``low`` .. ``high``.

    Bounds are inclusive unless ``low_open`` / ``high_open``; ``high`` may be infinite.
    """
    allowed = _range_text(low, high, low_open, high_open)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number {allowed}, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number {allowed}, got {value!r}")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        raise ValueError(f"{name} must be {allowed}, got {value:g}")


def flag(name: str, value: object) -> None:
    """``value`` must be True or False (not 0, 1 or a string)."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")


def choice(name: str, value: object, options: Iterable[str]) -> None:
    """``value`` must be one of ``options`` (a tuple, or a dict's keys)."""
    options = tuple(options)
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(options)}, got {value!r}")


def check_bounds(params: object, bounds: Mapping[str, tuple[float, float]]) -> None:
    """Check each field of ``params`` named in ``bounds`` against its inclusive (low, high).

    A pair of ints means a whole number (``whole``); any float in the pair means ``number``.
    """
    for name, (low, high) in bounds.items():
        if isinstance(low, int) and isinstance(high, int):
            whole(name, getattr(params, name), low, high)
        else:
            number(name, getattr(params, name), low, high)


def _range_text(low: float, high: float, low_open: bool, high_open: bool) -> str:
    """``between 1 and 16``, ``above 0 and at most 120``, ``at least 0``: the allowed range in words."""
    if not low_open and not high_open and math.isfinite(high):
        return f"between {_num(low)} and {_num(high)}"
    lower = f"above {_num(low)}" if low_open else f"at least {_num(low)}"
    if not math.isfinite(high):
        return lower
    return f"{lower} and {'below' if high_open else 'at most'} {_num(high)}"


def _num(value: float) -> str:
    # int bounds as written (1000000, not 1e+06); float bounds as short as :g makes them
    return str(value) if isinstance(value, int) else f"{value:g}"
