"""Checks on what a candidate types, before anything reaches the store.

Each check returns a clean value or raises InputError with a message fit to show beside the widget.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_ABS_NUMBER = 1e12
MAX_NOTES = 4000
MAX_HANDLE = 40
MAX_COHORT = 24
MAX_REASON = 1000
THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
HANDLE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")
HANDLE_CHARS = re.compile(r"[A-Za-z0-9 ._-]")
# A number followed by words or a unit, as in "150 units" or "6 jobs/s": the field already has its unit.
WORDED_RE = re.compile(r"^[+-]?\d[\d,._]*(?:e[+-]?\d+)?\s*([A-Za-z$%/][^\d]*)$", re.IGNORECASE)
COHORT_RE = re.compile(r"^[A-Za-z0-9_-]+$")


class InputError(ValueError):
    """Bad input; the message is written for the person who typed it."""


def _finite(value: object, what: str, unit: str | None = None, limit: float = MAX_ABS_NUMBER) -> float:
    """A finite number within ±`limit`; a caller with a tighter bound of its own passes math.inf and says it."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(f"Enter {what}.")
    if isinstance(value, str):
        value = value.strip()
        if value.startswith("$"):
            if not (unit and "$" in unit):
                raise InputError(f"{what.capitalize()} is not in dollars: type the number alone, without “$”.")
            value = value[1:]   # "$7,500" in a field already measured in dollars
        worded = WORDED_RE.match(value)
        if worded and not worded.group(1).strip().startswith("%"):   # a % sign has rules of its own below
            suffix = worded.group(1).strip()
            raise InputError(f"Type {what} as the number alone: the field is already in {unit}." if suffix == unit
                             else f"Type {what} as the number alone, without “{suffix}”"
                             + (f" (the field is in {unit})." if unit else "."))
        if "_" in value:   # Python's float() reads 1_000 as 1000; nobody writes a number that way on paper
            raise InputError(f"Type {what} without “_”: group thousands with commas, as in 1,200.")
        value = value.replace(" ", "")
        if value.endswith("%") and unit is not None:
            if unit != "%":
                raise InputError(f"{what.capitalize()} is in {unit}, not a percentage: drop the % sign.")
            value = value[:-1]   # "62.5%" in a field already measured in %
        if "," in value:
            if not THOUSANDS_RE.match(value):
                raise InputError(f"Use a dot for decimals in {what} (commas only group thousands, as in 1,200).")
            value = value.replace(",", "")
    try:
        number = float(value)  # accepts numbers and numeric strings like "1,200"
    except (TypeError, ValueError):
        raise InputError(f"{what.capitalize()} must be a number.") from None
    if math.isnan(number) or math.isinf(number):
        raise InputError(f"{what.capitalize()} must be a finite number.")
    if abs(number) > limit:
        raise InputError(f"{what.capitalize()} is too large (keep it within ±{limit:,.0f}).")
    return number


def _quantity(value: object, what: str, unit: str | None, allow_negative: bool) -> float:
    """A finite number, refused when negative unless the question allows it."""
    number = _finite(value, what, unit)
    if number < 0 and not allow_negative:
        raise InputError(f"{what.capitalize()} cannot be negative: this quantity is zero or more.")
    return number


@dataclass(frozen=True)
class NumericEntry:
    value: float
    low: float | None
    high: float | None


def numeric_entry(value: object, low: object = None, high: object = None, *, unit: str | None = None,
                  allow_negative: bool = False) -> NumericEntry:
    """A best guess and an optional 80% range. Every quantity the drills ask for (counts, rates, times,
    money, shares) is zero or more, so negatives are refused unless a question says otherwise; a
    trailing % is accepted when the unit is %."""
    guess = _quantity(value, "your best guess", unit, allow_negative)
    has_low = low is not None and str(low).strip() != ""
    has_high = high is not None and str(high).strip() != ""
    if has_low != has_high:
        raise InputError("Give both ends of the 80% range, or neither.")
    if not has_low:
        return NumericEntry(guess, None, None)
    lo = _quantity(low, "the low end of the range", unit, allow_negative)
    hi = _quantity(high, "the high end of the range", unit, allow_negative)
    if lo > hi:
        raise InputError("The low end of the range is above the high end.")
    if not lo <= guess <= hi:
        raise InputError("Your best guess should sit inside your 80% range.")
    return NumericEntry(guess, lo, hi)


def notes_entry(text: object) -> str:
    cleaned = str(text or "").strip()
    if not cleaned:
        raise InputError("Write something before locking in (or use 'skip to the answer').")
    if len(cleaned) > MAX_NOTES:
        raise InputError(f"Keep notes under {MAX_NOTES:,} characters (this is {len(cleaned):,}).")
    return cleaned


def choice_entry(choice: object, options: list[str]) -> str:
    if choice not in options:
        raise InputError("Pick one of the options.")
    return str(choice)


def handle_entry(text: object) -> str:
    cleaned = str(text or "").strip()
    if not cleaned:
        raise InputError("Enter a handle so your attempt can be found again.")
    if len(cleaned) > MAX_HANDLE:
        raise InputError(f"Keep the handle under {MAX_HANDLE} characters.")
    if not HANDLE_RE.match(cleaned):
        refused = "".join(dict.fromkeys(c for c in cleaned if not HANDLE_CHARS.match(c)))
        if refused:
            shown = " ".join(f"“{c}”" for c in refused[:6])
            raise InputError(f"A handle cannot hold {shown}: use letters, digits, spaces, dots, dashes or "
                             "underscores.")
        raise InputError("Start the handle with a letter or digit, then use letters, digits, spaces, dots, "
                         "dashes or underscores.")
    return cleaned


def cohort_entry(text: object) -> str:
    cleaned = str(text or "").strip()
    if not cleaned:
        return ""
    if len(cleaned) > MAX_COHORT:
        raise InputError(f"Keep the cohort code under {MAX_COHORT} characters.")
    if not COHORT_RE.match(cleaned):
        raise InputError("A cohort code uses letters, digits, dashes or underscores only.")
    return cleaned


def reason_entry(text: object, *, required: bool = True) -> str:
    cleaned = str(text or "").strip()
    if required and not cleaned:
        raise InputError("A comment is required.")
    if len(cleaned) > MAX_REASON:
        raise InputError(f"Keep the comment under {MAX_REASON:,} characters (this is {len(cleaned):,}).")
    return cleaned
