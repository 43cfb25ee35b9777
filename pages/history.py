"""My history: every attempt under a handle, opened with the personal resume code.

Thin page: sign-in, tables and charts come from ui.drill.history.
"""
from __future__ import annotations

import streamlit as st

from ui.frame import require_frame
from ui.drill.history import render_history

require_frame()

st.title("My history")
render_history()
