"""Instructors: their classes and the scoreboard, behind an instructor account (or the embedded passphrase).

Thin page: the gate is ui.instructor.access, classes are ui.instructor.classes, the board is ui.instructor.board; reports come
from drills.reports, actions (overrides, extra time) from drills.instructor_actions.
"""
from __future__ import annotations

import streamlit as st

from ui.instructor.classes import failed_tries_note, render_classes, visible_cohorts
from ui.context import get_store
from ui.instructor.board import render_board
from ui.instructor.access import sign_in, sign_out_button
from ui.safe import escape_markdown
from ui.frame import require_frame

require_frame()

st.title("Instructor scoreboard")
store = get_store()
instructor = sign_in(store)
if instructor is None:
    st.stop()

cols = st.columns([5, 1])
cols[0].caption(f"Signed in as {escape_markdown(instructor.name)}. Every override and time grant is recorded under "
                "this name.")
with cols[1]:
    sign_out_button()
failed_tries_note(store, instructor)
render_classes(store, instructor)
render_board(instructor.name, visible_cohorts(store, instructor))
