"""Results: how an attempt went, reached only through its own attempt token.

All of the figures and tables come from ui.drill.results; this page only finds the attempt.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import get_store, require_attempt
from ui.drill.results import record_results_visit, render_results
from ui.frame import require_frame

require_frame()

attempt, loaded = require_attempt(
    "Results",
    "Results belong to an attempt. Open them from your attempt link, or start a drill first.",
)
st.title(f"Results — {loaded.drill.title}")
if attempt.finished_at is None:
    st.info("This attempt is still open, so this is a snapshot: a question's truth and score appear here only "
            "once you have locked it in and opened its worked answer (or skipped it). Finish the drill to see "
            "every answer.")
    record_results_visit(get_store(), attempt)
st.page_link("pages/drill.py", label="Back to the drill", icon=":material/arrow_back:", query_params={keys.ATTEMPT_TOKEN: attempt.token})
render_results(AttemptView.load(get_store(), attempt, loaded))
