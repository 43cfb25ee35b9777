"""Hot tenant: a live event-store lab (buckets, retries, bounded reads, fenced owners) and a partition sim.

Thin page: the lab tab is ui.labs.hot_tenant_lab (over labs.hot_tenant), the simulation tab ui.labs.hot_tenant_sim.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.frame import require_frame
from ui.labs.hot_tenant_lab import render_lab
from ui.labs.hot_tenant_sim import render_sim
from ui.sims.embed import HOT_TENANT_TABS

require_frame()

st.title("Hot tenant event store")
st.markdown("One tenant writes faster than any single partition can take. Spread its independent events "
            "without ever storing one twice, read the newest ones without touching every bucket, and keep "
            "a strictly ordered stream behind a single fenced owner.")
# Bound to the URL, so a drill's "Explore" link (ui.sims.embed) can open the simulation tab directly.
lab_tab, sim_tab = st.tabs(list(HOT_TENANT_TABS), key=keys.TAB, bind="query-params")
with lab_tab:
    render_lab()
with sim_tab:
    render_sim()
