"""Keep every page inside app.py's frame, even on the first request after a server start.

Streamlit treats a `pages/` folder as the old multipage layout until app.py has called
st.navigation once; a bookmarked /drill link arriving first would then run the page alone
(no sidebar clock, wrong menu). Pages call require_frame(), which reruns through app.py.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

from ui import keys

K = keys.register("frame", __name__)   # this module's keys (ui.keys holds only shared ones)
RERUN = K.kept("frame_rerun")            # this session already reran an unframed page through app.py

_run = threading.local()

Sections = dict[str, list[st.Page]]
_declared: Sections | None = None   # app.py's pages as first built in this process, never handed to st.navigation
_declared_lock = threading.Lock()
# What a page keeps on itself: its file, title, icon, URL path and flags. All immutable, so a shallow copy is a
# page of its own; a Streamlit that keeps something else there gets its pages built afresh on every run.
_PAGE_VALUES = (str, bool, Path, type(None))


def _copies_cleanly(sections: Sections) -> bool:
    """Whether these pages are plain objects whose shallow copies st.navigation can mark independently: the
    flag it sets (`_can_be_called`) and every other value live in the page's own __dict__, all immutable."""
    return all(type(page) is st.Page and "_can_be_called" in vars(page)
               and all(isinstance(value, _PAGE_VALUES) for value in vars(page).values())
               for pages in sections.values() for page in pages)


def declared_pages(declare: Callable[[], Sections]) -> Sections:
    """app.py's pages for this run: `declare()` is called once per process, and each run gets shallow copies.

    Each st.Page resolves and stats its file when it is made: about 3.5 ms a run for the app's 13 pages, every
    full run of every session. The pages cannot simply be shared, because st.navigation marks the page it
    returns as callable on the page object itself, and page.run() clears it: two sessions' runs would race on
    one flag. A copy per run gives each run its own flag for ~2 us a page.
    """
    global _declared
    if _declared is None:
        with _declared_lock:
            if _declared is None:
                built = declare()
                if not _copies_cleanly(built):   # another Streamlit (or no script run, e.g. bare Python)
                    return built
                _declared = built
    return {section: [copy.copy(page) for page in pages] for section, pages in _declared.items()}


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
