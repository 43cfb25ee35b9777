"""Every query parameter bounded before a page, or a widget bound to the URL, parses it (issue 34).

A link is typed by anyone: the frame drops what no page could use (a value past ``MAX_VALUE_CHARS``,
control characters, a number too long to be a setting, an id or a seed, or not finite) and says so,
so neither Streamlit's own binding nor a page ever sees a 400-digit number.
"""
from __future__ import annotations

import math
import re

import streamlit as st

MAX_PARAMS = 64             # parameters one link may carry; the longest share link has about forty
MAX_NAME_CHARS = 64
MAX_VALUE_CHARS = 2_000     # a pinned platform run, in words, is the longest value a page writes
MAX_DIGITS = 15             # seeds, ids and settings all fit; a double holds 15 digits exactly
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
NON_FINITE = re.compile(r"[+-]?(nan|inf|infinity)", re.IGNORECASE)
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def refused(name: str, value: str) -> str | None:
    """Why a parameter cannot be used, or None when a page may parse it."""
    if len(name) > MAX_NAME_CHARS or CONTROL.search(name):
        return "its name is not one this app writes"
    if len(value) > MAX_VALUE_CHARS:
        return f"it is longer than {MAX_VALUE_CHARS:,} characters"
    if CONTROL.search(value):
        return "it holds control characters"
    text = value.strip()
    if NON_FINITE.fullmatch(text):
        return "it is not a finite number"
    if NUMBER.fullmatch(text):
        digits = sum(ch.isdigit() for ch in text.split("e")[0].split("E")[0])
        if digits > MAX_DIGITS or not math.isfinite(float(text)):
            return f"a number with more than {MAX_DIGITS} digits is not a setting, an id or a seed"
    return None


def bound_query_params() -> None:
    """Drop every query parameter no page could use, with one line saying which and why."""
    params = st.query_params
    names = list(params.keys())
    dropped: list[str] = []
    for position, name in enumerate(names):
        values = params.get_all(name)
        reason = "the link carries too many parameters" if position >= MAX_PARAMS else next(
            (why for why in (refused(name, value) for value in values) if why), None)
        if reason:
            del params[name]
            dropped.append(f"{name[:MAX_NAME_CHARS]!r} ({reason})")
    if dropped:
        st.caption("Part of this link was ignored: " + "; ".join(dropped[:5]) + (" …" if len(dropped) > 5 else ""))
