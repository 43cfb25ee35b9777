"""Fault Lines: the frame around every page (navigation, sidebar clock, the store).

Pages live in pages/ and are declared here; only declared pages are shown.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.context import current_token, get_store
from ui.frame import run_in_frame
from ui.timer import sidebar_clock

st.set_page_config(page_title="Fault Lines", page_icon="🧭", layout="wide")

PAGES = {
    "Drills": [
        st.Page("pages/home.py", title="Catalogue", icon="🏠", default=True),
        st.Page("pages/drill.py", title="Drill", icon="📝", url_path="drill"),
        st.Page("pages/results.py", title="Results", icon="📊", url_path="results"),
    ],
    "Simulations": [
        st.Page("pages/sim_hot_shard.py", title="Hot shard", icon="🔥", url_path="hot-shard"),
        st.Page("pages/sim_concurrency_pool.py", title="Concurrency pool", icon="🚦", url_path="concurrency-pool"),
        st.Page("pages/sim_retry_storm.py", title="Retry storm", icon="🌩️", url_path="retry-storm"),
        st.Page("pages/sim_platform.py", title="Whole platform", icon="🏭", url_path="platform"),
    ],
    "Labs": [
        st.Page("pages/hot_tenant.py", title="Hot tenant event store", icon="🧪", url_path="hot-tenant"),
    ],
    "Instructors": [
        st.Page("pages/instructor.py", title="Scoreboard", icon="🎓", url_path="instructor"),
    ],
}

get_store()  # open (and migrate) the store once per process, before any page runs
navigation = st.navigation(PAGES)

with st.sidebar:
    token = current_token()
    if token:
        sidebar_clock(token, st.query_params.get(keys.PART))

run_in_frame(navigation)
