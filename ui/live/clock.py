"""The room's clock on the console and on every seat: the instructor's clock, which the room keeps.

Seats have no clock of their own; this one is drills.live.room_clock, ticked by the browser like the sidebar's
countdown (ui.drill.browser_clock), so it costs the server nothing between moves.
"""
from __future__ import annotations

import streamlit as st

from drills import live
from ui.drill.browser_clock import ClockView, clock_markup


def room_clock(store, loaded, steps) -> None:
    """Draw the room's clock and its pacing from the session's steps (as the console read them)."""
    now = store.clock()
    room = live.room_clock(loaded, steps, now)
    if room.started_at is not None:
        # Numbers only go into this HTML (never a name or other user text).
        st.html(clock_markup(ClockView(room.started_at, room.limit_s, 0.0, now, room.clock)),
                unsafe_allow_javascript=True)
    st.caption(f"The room's clock: {live.pace_words(room)}")
