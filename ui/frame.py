"""Keep every page inside app.py's frame, even on the first request after a server start.

Streamlit treats a `pages/` folder as the old multipage layout until app.py has called
st.navigation once; a bookmarked /drill link arriving first would then run the page alone
(no sidebar clock, wrong menu). Pages call require_frame(), which reruns through app.py.
"""
from __future__ import annotations

import threading

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui import keys

K = keys.register("frame", __name__)   # this module's keys (ui.keys holds only shared ones)
RERUN = K.kept("frame_rerun")            # this session already reran an unframed page through app.py

_run = threading.local()


def run_in_frame(navigation) -> None:
    """app.py runs the chosen page through this, so the page knows the frame is around it."""
    _run.framed = True
    try:
        navigation.run()
    finally:
        _run.framed = False


def require_frame() -> None:
    """Rerun through app.py when a page was run on its own.

    The flag alone is not enough: a second session that started while another was still in the old
    layout runs its page alone even after the first has cleared the flag, so an unframed run reruns
    once per session whatever the flag says. (Once only: a page tested on its own still renders.)
    """
    if getattr(_run, "framed", False):
        return
    if PagesManager.uses_pages_directory or not st.session_state.get(RERUN):
        st.session_state[RERUN] = True
        PagesManager.uses_pages_directory = False
        st.rerun()
