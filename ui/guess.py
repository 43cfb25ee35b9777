"""Guess-then-play for the simulation pages: lock a guess, press Play, compare.

Reader guesses live in session state only (readers are not candidates); drill
embeds store theirs through the attempt store instead.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable

import plotly.graph_objects as go
import streamlit as st

from ui import keys


def guess_lockin(name: str, label: str, unit: str, *, min_value: float, max_value: float,
                 default: float, step: float = 1.0) -> float | None:
    """Show a one-field form; return the locked guess, or None until the reader locks one."""
    locked = st.session_state.get(keys.guess_key(name))
    if locked is not None:
        cols = st.columns([3, 1])
        cols[0].info(f"Your locked guess: **{locked:,.4g} {unit}**")
        if cols[1].button("Guess again", key=f"reguess::{name}"):
            st.session_state.pop(keys.guess_key(name), None)
            st.session_state.pop(keys.played_key(name), None)
            st.rerun()
        return float(locked)
    with st.form(f"guessform::{name}", border=True):
        value = st.number_input(f"{label} ({unit})", min_value=float(min_value),
                                max_value=float(max_value), value=float(default), step=float(step))
        if st.form_submit_button("Lock in my guess", type="primary"):
            if value is None or not math.isfinite(value):
                st.error("Enter a finite number.")
            else:
                st.session_state[keys.guess_key(name)] = float(value)
                st.rerun()
    st.caption("Lock in a guess to unlock Play.")
    return None


def play_button(name: str, guess: float | None) -> bool:
    """Play is enabled only once a guess is locked; stays 'played' until the guess is reset."""
    if st.button("▶ Play", key=f"play::{name}", disabled=guess is None, type="primary"):
        st.session_state[keys.played_key(name)] = True
    return bool(st.session_state.get(keys.played_key(name)))


def animate(frames: Iterable[go.Figure], *, delay_s: float = 0.05, animate_now: bool = True,
            chart_key: str | None = None) -> None:
    """Draw a sequence of figures into one placeholder, last one stays on screen.

    When ``animate_now`` is false (a rerun after the first play) only the final frame is drawn.
    """
    placeholder = st.empty()
    frames = list(frames)
    if not frames:
        return
    shown = frames if animate_now else frames[-1:]
    for i, fig in enumerate(shown):
        placeholder.plotly_chart(fig, width="stretch",
                                 key=None if i < len(shown) - 1 else chart_key)
        if i < len(shown) - 1:
            time.sleep(delay_s)


def guess_verdict(guess: float, truth: float, unit: str, *, tolerance_rel: float = 0.1,
                  format_truth: Callable[[float], str] | None = None) -> bool:
    """Show the guess beside the simulated truth; return whether it was within tolerance."""
    fmt = format_truth or (lambda v: f"{v:,.4g}")
    close = abs(guess - truth) <= tolerance_rel * max(abs(truth), 1e-9)
    cols = st.columns(3)
    cols[0].metric("Your guess", f"{fmt(guess)} {unit}")
    cols[1].metric("Simulation", f"{fmt(truth)} {unit}")
    off = guess - truth
    verdict = "within tolerance" if close else ("too high" if off > 0 else "too low")
    cols[2].metric("Off by", f"{fmt(abs(off))} {unit}", delta=verdict,
                   delta_color="green" if close else "red",
                   delta_arrow="off" if close else ("up" if off > 0 else "down"))
    return close
