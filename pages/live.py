"""The live room: a class answers the question its instructor opened, then sees the room's answers against the truth.

Thin page: the room and the console are ui.live.room; the room's state is in the store (drills.store.live).
"""
from __future__ import annotations

import streamlit as st

from ui.frame import require_frame
from ui.live.room import render_live_page

require_frame()

st.title("Live room")
render_live_page()
