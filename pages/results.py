"""Results: how an attempt went, reached only through its own attempt token.

All of the figures and tables come from ui.results; this page only finds the attempt.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.attempt_view import AttemptView
from ui.context import current_attempt, get_store
from ui.results import render_results
from ui.frame import require_frame

require_frame()

found = current_attempt()
if found is None:
    st.title("Results")
    st.info("Results belong to an attempt. Open them from your attempt link, or start a drill first.")
    st.page_link("pages/home.py", label="Go to the catalogue", icon="🏠")
    st.stop()

attempt, loaded = found
st.title(f"Results — {loaded.drill.title}")
if attempt.finished_at is None:
    st.info("This attempt is still open: the figures below are a snapshot so far.")
st.page_link("pages/drill.py", label="Back to the drill", icon="↩️", query_params={keys.ATTEMPT_TOKEN: attempt.token})
render_results(AttemptView.load(get_store(), attempt, loaded))
