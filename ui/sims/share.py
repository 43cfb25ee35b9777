"""Sharing a tab's settings: the link (with the locked guess and its settings' digest) and the command line.
"""
from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from sims.__main__ import command
from ui.sims.guess import digest, guess_for_param, guess_lockin, guess_param
from ui.sims.tab import SimTab

def share_link(query: dict[str, str]) -> str:
    """This page's address with the given settings: st.context.url when served, a bare query in tests."""
    base = (st.context.url or "").split("?", 1)[0]
    return f"{base}?{urlencode(query)}"


def with_guess(query: dict[str, str], name: str, guess: float | None, scope: str | None = None) -> dict[str, str]:
    """The settings' query plus the locked guess and the settings it was made for, when there is one."""
    if guess is None:
        return query
    return {**query, guess_param(name): format(guess, ".12g"), **({guess_for_param(name): scope} if scope else {})}


def locked_guess(tab: SimTab, params: object, seed: int) -> tuple[float | None, str]:
    """The reader's guess for these settings and seed (None until locked), and the settings' digest.

    A guess belongs to the settings it was made for: move a slider and the page asks for a new one. A link
    carries that too, as the digest beside the guess (``guess_lockin`` with ``in_url`` keeps the two together).
    """
    scope = digest(tab.model, params, seed)
    question = tab.question
    guess = guess_lockin(tab.name, question.label, question.unit, min_value=question.min_value,
                         max_value=question.max_value, step=question.step, scope=scope, in_url=True)
    return guess, scope


def share_panel(model: str, params: object, seed: int, query: dict[str, str]) -> None:
    with st.expander("Share or rerun these settings", icon=":material/link:"):
        st.caption("Copy the link (the icon at the right of the box) to open this page with these settings, "
                   "this seed and your locked guess:")
        st.code(share_link(query), language=None, wrap_lines=True)
        st.caption("Or run the same simulation from a terminal in the project folder; it prints the summary "
                   "as JSON:")
        st.code(command(model, params, seed), language="bash", wrap_lines=True)
