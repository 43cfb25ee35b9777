"""PostgreSQL lab page: the One Tenant drill's claims about PostgreSQL, run on a live PostgreSQL 18.

Pick an experiment, lock in a guess, press Play; the run's result is drawn with the guess on it.
"""
from __future__ import annotations

import streamlit as st

from ui.frame import require_frame
from ui.labs.pg_lab import pick_view, render_view

require_frame()

st.title("PostgreSQL lab")
st.caption("Real worker threads, each with its own connection, racing on an embedded PostgreSQL 18. "
           "Races come out a little differently every run.")

render_view(pick_view())
