"""Spaced review: missed questions come back on an FSRS schedule, each asked with fresh numbers.

Thin page: sign-in, the due item and the schedule come from ui.drill.review.
"""
from __future__ import annotations

import streamlit as st

from ui.frame import require_frame
from ui.drill.review import render_review

require_frame()

st.title("Spaced review")
render_review()
