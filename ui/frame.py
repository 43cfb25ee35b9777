"""Keep every page inside app.py's frame, even on the first request after a server start.

Streamlit treats a `pages/` folder as the old multipage layout until app.py has called
st.navigation once; a bookmarked /drill link arriving first would then run the page alone
(no sidebar clock, wrong menu). Pages call require_frame(), which reruns through app.py.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Callable

import streamlit as st

from ui import keys
from ui.runtime import seam

K = keys.register("frame", __name__)   # this module's keys (ui.keys holds only shared ones)
RERUN = K.kept("frame_rerun")            # this session already reran an unframed page through app.py

Sections = dict[str, list[st.Page]]
_declared: Sections | None = None   # app.py's pages as first built in this process, never handed to st.navigation
_declared_lock = threading.Lock()


def _copies_cleanly(sections: Sections) -> bool:
    """Whether these pages are plain objects whose shallow copies st.navigation can mark independently (the seam's
    check; a Streamlit that keeps something else on a page, or plain mode, gets its pages built every run)."""
    return seam.pages_copy_cleanly([page for pages in sections.values() for page in pages])


def declared_pages(declare: Callable[[], Sections]) -> Sections:
    """app.py's pages for this run: `declare()` is called once per process, and each run gets shallow copies.

    Each st.Page resolves and stats its file when it is made: about 3.5 ms a run for the app's 13 pages, every
    full run of every session. The pages cannot simply be shared, because st.navigation marks the page it
    returns as callable on the page object itself, and page.run() clears it: two sessions' runs would race on
    one flag. A copy per run gives each run its own flag for ~2 us a page. In plain mode every run builds afresh.
    """
    global _declared
    if seam.plain():
        return declare()
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
    with seam.page_in_frame():
        navigation.run()


def require_frame() -> None:
    """Rerun through app.py when a page was run on its own.

    The flag alone is not enough: a second session that started while another was still in the old
    layout runs its page alone even after the first has cleared the flag, so an unframed run reruns
    once per session whatever the flag says. (Once only: a page tested on its own still renders.)
    """
    if seam.in_frame():
        return
    if seam.leave_pages_directory_layout() or not st.session_state.get(RERUN):
        st.session_state[RERUN] = True
        st.rerun()
