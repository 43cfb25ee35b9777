"""The candidate pages of each live room in this process, and the step each one drew.

When the process hears that a room moved (drills.live_watch, PostgreSQL NOTIFY), the pages still showing an
older step have their room part rerun by the server (ui.runtime.fragment_push), so a Close reaches every page at once
instead of each browser polling twice a second to find out. A page gone from the server is forgotten.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from ui.runtime import fragment_push
from ui.runtime.fragment_push import FragmentPage


class RoomPages:
    """One per process: room (live session id) -> browser session -> (its room fragment, the step it drew)."""

    def __init__(self, rerun: Callable[[FragmentPage], bool] = fragment_push.rerun):
        self._rerun = rerun
        self._lock = threading.Lock()
        self._rooms: dict[int, dict[str, tuple[FragmentPage, int]]] = {}

    def drew(self, room: int, page: FragmentPage | None, step: int) -> None:
        """`page` (None outside a server's fragment: nothing to push to) has just drawn `room` at `step`."""
        if page is None:
            return
        with self._lock:
            self._rooms.setdefault(room, {})[page.session_id] = (page, step)

    def drawing(self, room: int, page: FragmentPage | None, read: Callable[[], tuple]) -> tuple:
        """The version of `room` a run of `page` is to draw (`read()`: the listener's, else the store's), with
        the page registered at it first. A move the listener heard between the first read and the registration
        was pushed only on the page's older registration, which the page's own run then overwrites, so the page
        would depend on that push going through; the version is read again after registering: a move heard
        before that is drawn now, and one heard after it finds the page registered at an older step and pushes
        it another run."""
        drawn = read()
        self.drew(room, page, drawn[0])
        latest = read()
        if latest[0] != drawn[0]:
            self.drew(room, page, latest[0])
        return latest

    def moved(self, room: int, version: tuple) -> None:
        """The watcher read `room` at `version` (step id first): rerun each page that drew another step."""
        step = version[0]
        with self._lock:
            behind = [(s, p) for s, (p, drawn) in self._rooms.get(room, {}).items() if drawn != step]
            for session_id, page in behind:   # asked once: a second notification of this step asks no more
                self._rooms[room][session_id] = (page, step)
        gone = [session_id for session_id, page in behind if not self._rerun(page)]
        if gone:
            with self._lock:
                for session_id in gone:
                    self._rooms.get(room, {}).pop(session_id, None)

    def pages(self, room: int) -> dict[str, int]:
        """Browser session -> the step its page drew (for tests and the console's own checks)."""
        with self._lock:
            return {s: step for s, (_, step) in self._rooms.get(room, {}).items()}
