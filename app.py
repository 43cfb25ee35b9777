"""Fault Lines: the frame around every page (navigation, sidebar clock, the store).

Pages live in pages/ and are declared here; only declared pages are shown.
"""
from __future__ import annotations

import streamlit as st

from ui.a11y import page_aids
from ui.context import (
    current_token,
    get_store,
    store_answers,
    store_fault,
    store_guard,
    store_opens,
    store_outage,
    watch_until_back,
)
from ui.faults import show_store_fault, show_store_outage
from ui.frame import declared_pages, run_in_frame
from ui.runtime.heap import freeze_after_imports
from ui.identity import account_box, account_row
from ui.runtime.loop_wakeups import install as wake_loop_per_burst
from ui.sims.visits import attribution_note, record_sim_visit
from ui.runtime.theme_cache import install as build_theme_once
from ui.url_params import bound_query_params
from ui.drill.timer import attempt_clocks

freeze_after_imports()   # what the imports so far made lives as long as the process: no full GC pass walks it
build_theme_once()   # every run starts with a new_session message: its theme is built once, not per run
wake_loop_per_burst()   # a run's elements wake the server's event loop once per burst, not twice per element
st.set_page_config(page_title="Fault Lines", page_icon=":material/explore:", layout="wide")
page_aids()   # focus ring, skip link, the navigation's list roles, phone-sized titles
bound_query_params()   # before any page or URL-bound widget parses one: a 400-digit ?live= is dropped, and said so

# No custom url_path: until app.py first runs, Streamlit routes by the pages/ file names,
# so the URLs must be those names for a bookmark to work on a freshly started server.
def _declare() -> dict[str, list[st.Page]]:
    return {
        "Drills": [
            st.Page("pages/home.py", title="Catalogue", icon=":material/home:", default=True),
            st.Page("pages/drill.py", title="Drill", icon=":material/edit_note:"),
            st.Page("pages/results.py", title="Results", icon=":material/bar_chart:"),
            st.Page("pages/history.py", title="My history", icon=":material/folder_open:"),
            st.Page("pages/review.py", title="Spaced review", icon=":material/replay:"),
            st.Page("pages/live.py", title="Live room", icon=":material/sensors:"),
        ],
        "Simulations": [
            st.Page("pages/sim_hot_shard.py", title="Hot shard", icon=":material/local_fire_department:"),
            st.Page("pages/sim_concurrency_pool.py", title="Concurrency pool", icon=":material/traffic:"),
            st.Page("pages/sim_retry_storm.py", title="Retry storm", icon=":material/thunderstorm:"),
            st.Page("pages/sim_platform.py", title="Whole platform", icon=":material/factory:"),
            st.Page("pages/sim_cache_stampede.py", title="Cache stampede", icon=":material/cached:"),
            st.Page("pages/sim_retry_chain.py", title="Retry chain", icon=":material/sync_problem:"),
            st.Page("pages/sim_leases.py", title="Leases and split brain", icon=":material/call_split:"),
        ],
        "Labs": [
            st.Page("pages/hot_tenant.py", title="Hot tenant event store", icon=":material/science:"),
            st.Page("pages/pg_lab.py", title="PostgreSQL lab", icon=":material/database:"),
        ],
        "Instructors": [
            st.Page("pages/instructor.py", title="Scoreboard", icon=":material/school:"),
        ],
    }


PAGES = declared_pages(_declare)   # built once per process; each run gets its own copies for st.navigation

# Open (and migrate) the store once per process, before any page runs; if it cannot open, the pages
# that read or write attempts show why, and the simulations and labs carry on without it.
STORE_SECTIONS = ("Drills", "Instructors")
# A store that fails after start-up: this session's pages that need it show one plain page that retries.
# It stays that page while the store is away, even once the store fails to open afresh (a DuckDB file
# that refuses commits is closed, and reopening it fails too): the outage page says what is safe.
outage = store_outage()
fault = store_fault() if outage is None else None
navigation = st.navigation(PAGES, position="top")
needs_store = any(navigation is page for section in STORE_SECTIONS for page in PAGES[section])
with store_guard():
    if outage is None:
        record_sim_visit(navigation.url_path)   # a sim page opened while its questions are open goes on the timeline
        with st.sidebar:
            if fault is None:
                account_box(get_store())   # who is signed in, with Sign in / Sign out, when a provider is configured
            token = current_token()
        if token:
            attempt_clocks(token)   # the sidebar's, and the same countdown on the page where the sidebar starts collapsed
    if fault is not None and needs_store:
        show_store_fault(fault, store_back=store_opens)
    elif outage is not None and needs_store:
        show_store_outage(*outage, store_back=store_answers, on_check=watch_until_back)
    else:
        if outage is None and fault is None:
            account_row(get_store())   # Sign out in the page too: a phone starts with the sidebar collapsed
        unattributed = attribution_note(navigation.url_path) if outage is None else None
        if unattributed:
            st.caption(unattributed)
        run_in_frame(navigation)
