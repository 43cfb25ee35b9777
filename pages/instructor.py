"""Instructors: the cohort scoreboard behind the instructor passphrase.

Thin page: the gate is ui.instructor_access, the board is ui.instructor; reports come from drills.reports,
actions (overrides, extra time) from drills.instructor_actions.
"""
from __future__ import annotations

import streamlit as st

from ui.instructor import render_board
from ui.instructor_access import sign_in, sign_out_button
from ui.safe import escape_markdown
from ui.frame import require_frame

require_frame()

st.title("Instructor scoreboard")
instructor = sign_in()
if instructor is None:
    st.stop()

cols = st.columns([5, 1])
cols[0].caption(f"Signed in as {escape_markdown(instructor)}. Every override and time grant is recorded under this name.")
with cols[1]:
    sign_out_button()
render_board(instructor)
