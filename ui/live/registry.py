"""The live room's process registry: one watcher per process and store, and the room pages it reruns.

On PostgreSQL the watcher is a LISTEN thread (drills.live_watch) that reruns a room's pages after a move it heard
(ui.live.push); on DuckDB it is the store's own version, which pages poll. In the plain mode
(FAULTLINES_PLAIN_STREAMLIT=1, Streamlit's documented API only) nothing is pushed: every page polls.
"""
from __future__ import annotations

import threading

from drills.live_watch import watch_for
from ui.context import get_store
from ui.live.push import RoomPages
from ui.runtime import seam

_PROCESS_LOCK = threading.Lock()
_WATCHES: dict[str, tuple] = {}   # store target -> (its watcher, the room pages it reruns): one per process


def _process_watch(target: str) -> tuple:
    """One watcher per process and store. A plain dict, not st.cache_resource: every page run asks for it, and a
    cached function's call inspects its signature each time."""
    found = _WATCHES.get(target)
    if found is None:
        with _PROCESS_LOCK:
            found = _WATCHES.get(target)
            if found is None:
                pages = RoomPages()
                store = get_store()
                watch = watch_for(store)
                if not plain_streamlit():   # a server-side rerun is below Streamlit's documented API
                    watch.on_move(pages.moved)
                    watch.every_second(pages.retry)
                    watch.every_second(lambda: pages.beat(store.live_heartbeats))
                    watch.on_drop(pages.dropped)
                found = _WATCHES[target] = (watch, pages)
    return found


def plain_streamlit() -> bool:
    """The plain mode: every optimisation that leans on Streamlit's internals is off (the server push here);
    the seam is the one place that reads it."""
    return seam.plain()


def pushes(store, page_session: str | None) -> bool:
    """Whether the process's listener reruns this page's room part itself after a move: it listens, the push
    is on, and no push to this page has failed. Otherwise the page polls."""
    return (not plain_streamlit() and page_session is not None and watch(store.path).pushes
            and not pages(store.path).lost(page_session))


def watch(target: str):
    """This process's watcher of the store at `target` (drills.live_watch)."""
    return _process_watch(target)[0]


def pages(target: str) -> RoomPages:
    """The candidate pages of each room in this process, and the step each drew (ui.live.push)."""
    return _process_watch(target)[1]


def heard(session_id: int) -> tuple:
    """What this process has heard of the room so far: taken before the run reads the store, so a move that
    lands while the page draws is one the fragment has not heard yet, and reruns for."""
    return watch(get_store().path).version(session_id)


def room_version(store, session_id: int) -> tuple:
    """The room's version: as this process's listener last read it (no query), else from the store."""
    known = watch(store.path).room(session_id)
    return known if known is not None else store.live_version(session_id)
