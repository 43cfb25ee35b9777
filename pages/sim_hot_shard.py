"""Hot shard simulation page: a celebrity key, noisy tenants in worker groups, shuffle sharding.

Thin page: each tab (sliders, guess, Play, the reading of the run) is in ui.sims.hot_shard_tabs.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.sims import hot_shard_tabs
from ui.frame import require_frame

require_frame()

st.title("Hot shard")
st.caption("Hashing spreads keys, not load. Guess first, then watch what one heavy key does to its shard.")

celebrity_tab, tenants_tab, shuffle_tab = st.tabs(hot_shard_tabs.TABS, key=keys.TAB, bind="query-params")
with celebrity_tab:
    hot_shard_tabs.celebrity_tab()
with tenants_tab:
    hot_shard_tabs.tenants_tab()
with shuffle_tab:
    hot_shard_tabs.shuffle_tab()
