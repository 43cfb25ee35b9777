"""Bad input gets a message written for a person, and never reaches the store."""
from __future__ import annotations

import pytest

from drills import answers as checks


@pytest.mark.parametrize("value, low, high, message", [
    ("nan", None, None, "finite"),
    ("inf", None, None, "finite"),
    ("-Infinity", None, None, "finite"),
    ("", None, None, "Enter your best guess"),
    ("   ", None, None, "Enter your best guess"),
    ("abc", None, None, "must be a number"),
    ("1e400", None, None, "finite"),
    ("1e13", None, None, "too large"),
    ("3,2", None, None, "Use a dot for decimals"),
    ("12,34", None, None, "Use a dot for decimals"),
    ("100", "200", "50", "low end of the range is above"),
    ("100", "50", "", "both ends"),
    ("300", "100", "200", "inside your 80% range"),
    ("-5", None, None, "cannot be negative"),
    ("5", "-1", "10", "low end of the range cannot be negative"),
    ("62.5%", None, None, "must be a number"),        # no unit given: a % sign is not a number
    ("1_000", None, None, "without “_”"),             # Python's literal syntax is not how people write numbers
    ("1_0.5", None, None, "without “_”"),
])
def test_bad_numeric_entries_are_refused_with_a_reason(value, low, high, message):
    with pytest.raises(checks.InputError, match=message):
        checks.numeric_entry(value, low, high)


@pytest.mark.parametrize("value, unit, message", [
    ("150 units", "units", "number alone: the field is already in units"),
    ("6 jobs/s", "jobs/s", "number alone: the field is already in jobs/s"),
    ("5x", "jobs/s", "without “x” \\(the field is in jobs/s\\)"),
    ("$7,500", "jobs", "not in dollars"),
])
def test_a_number_typed_with_words_or_a_unit_says_to_type_the_number_alone(value, unit, message):
    with pytest.raises(checks.InputError, match=message):
        checks.numeric_entry(value, unit=unit)


@pytest.mark.parametrize("value, message", [("1e308", "capped at 240 minutes"), ("241", "capped at 240 minutes"),
                                            ("1e400", "finite"), ("0.5", "at least 1 minute"), ("2_0", "without “_”")])
def test_extra_time_names_its_own_limit(value, message):
    from drills.instructor_actions import extra_minutes_entry

    with pytest.raises(checks.InputError, match=message):
        extra_minutes_entry(value)
    assert extra_minutes_entry("240") == 240 and extra_minutes_entry("1") == 1


def test_numbers_typed_like_people_type_them():
    assert checks.numeric_entry("$7,500", unit="$").value == 7500
    assert checks.numeric_entry("1e5").value == 100_000
    assert checks.numeric_entry("1,200").value == 1200
    assert checks.numeric_entry("-1,234,567.5", allow_negative=True).value == -1234567.5
    assert checks.numeric_entry("0").value == 0
    assert checks.numeric_entry("62.5%", "50 %", "75%", unit="%") == checks.NumericEntry(62.5, 50.0, 75.0)
    with pytest.raises(checks.InputError, match="is in jobs/s, not a percentage"):
        checks.numeric_entry("62.5%", unit="jobs/s")
    assert checks.numeric_entry(" 6.25 ", "6", "7") == checks.NumericEntry(6.25, 6.0, 7.0)


@pytest.mark.parametrize("handle, message", [("", "Enter a handle"), ("x" * 10_000, "under 40"),
                                             ("<script>alert(1)</script>", "letters, digits"),
                                             ("<b>bold</b>", "letters, digits"),
                                             ("bad/handle!!", "cannot hold “/” “!”"),
                                             ("-ada", "Start the handle with a letter or digit")])
def test_bad_handles(handle, message):
    with pytest.raises(checks.InputError, match=message):
        checks.handle_entry(handle)


def test_cohort_codes_and_notes():
    assert checks.cohort_entry("  spring-26 ") == "spring-26"
    assert checks.cohort_entry("") == ""
    with pytest.raises(checks.InputError):
        checks.cohort_entry("<img src=x onerror=alert(1)>")
    with pytest.raises(checks.InputError, match="under 4,000"):
        checks.notes_entry("n" * 10_000)
    with pytest.raises(checks.InputError):
        checks.notes_entry("   ")
    assert checks.notes_entry(" <b>keep</b> ") == "<b>keep</b>"  # stored as typed, shown as plain text
