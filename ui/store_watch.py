"""The process's watch on the attempt store: a server that stops answering is told to every open page, unasked.

A press that meets a hung store ends on the outage page within its call's deadline (drills.store.pg_pool). But a
page where nobody presses asks the store nothing: a candidate reading a question would learn of the outage only on
their next press, however long it lasted. So one thread per process (PostgreSQL only: a DuckDB file lives in the
process and has no server to hang) asks the store every PROBE_EVERY_S (`store.probe()`, a SELECT 1 on a connection
of its own under a 2.5 s deadline). When a probe fails, the server reruns the clock fragment of every page that
registered here (ui.runtime.fragment_push), PUSHES times a second apart in case one is lost on the way, and a run
that finds the store known down draws the outage page at once without asking it again (ui.context.store_guard).

The outage is counted from the last probe the store answered (ui.faults.outage_span), and once a probe answers again
the attempts that ran through it get that time back, whether or not any page was open to see the outage, and the
outage pages' checks are pushed too, so the drill is back within a second of the store rather than at the next check.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ui.faults import OutageSpan, is_store_fault, outage_span
from ui.runtime import fragment_push
from ui.runtime.fragment_push import FragmentPage

_LOG = logging.getLogger(__name__)
PROBE_EVERY_S = 1.0   # with the probe's own 2.5 s deadline, a hung store is known within 3.5 s
PUSHES = 3            # pushes of one outage to a page, a probe apart: one lost on the way is made good


class StoreWatch:
    """The pages of one process that are told when its store stops answering, and whether it does now."""

    def __init__(self, store, *, push: Callable[[FragmentPage], bool] = fragment_push.rerun,
                 clock: Callable[[], float] = time.time, outage: OutageSpan | None = None):
        self._store, self._push, self._clock = store, push, clock
        self._outage = outage if outage is not None else outage_span(store.path)
        self._lock = threading.Lock()
        self._pages: dict[str, FragmentPage] = {}   # browser session -> its latest clock fragment
        self._pushed: dict[str, int] = {}           # browser session -> pushes of this outage so far
        self._waiting: dict[str, FragmentPage] = {}  # browser session -> its outage page's check, told when back
        self._answered_at = clock()                  # when the store last answered a probe
        self.down: BaseException | None = None       # why the last probe failed (None: it answered)
        self._stop = threading.Event()

    def watch(self, page: FragmentPage | None, *, until_back: bool = False) -> None:
        """`page`'s fragment is rerun by the server when the store stops answering, or with `until_back` (an outage
        page's check), once when it answers again (None: nothing to rerun)."""
        if page is not None:
            with self._lock:
                (self._waiting if until_back else self._pages)[page.session_id] = page

    def check(self) -> bool:
        """Ask the store once: on a failure, mark it down and push the pages not yet pushed PUSHES times; on an
        answer after an outage, give the outage back. False once the store was closed (the watch ends)."""
        try:
            self._store.probe()
        except Exception as error:   # noqa: BLE001 (sorted below: a store fault, or a store that was closed)
            if not is_store_fault(error):
                _LOG.info("The store watch ends: %s", error)
                return False
            self._went_down(error)
            return True
        self._answered_at = answered_at = self._clock()
        if self.down is not None:
            with self._lock:
                self.down = None
                self._pushed.clear()
                waiting, self._waiting = list(self._waiting.values()), {}
            self._outage.over(self._store, answered_at)
            for page in waiting:   # their check runs now, not up to RETRY_EVERY_S later (a lost one still runs then)
                self._push(page)
        return True

    def _went_down(self, error: BaseException) -> None:
        error.call_began = getattr(error, "call_began", None) or self._answered_at
        self._outage.began(self._answered_at)
        with self._lock:
            self.down = error
            due = [page for session, page in self._pages.items() if self._pushed.get(session, 0) < PUSHES]
            for page in due:
                self._pushed[page.session_id] = self._pushed.get(page.session_id, 0) + 1
        gone = [page for page in due if not self._push(page)]   # outside the lock: a push may be slow
        if gone:
            with self._lock:
                for page in gone:
                    if self._pages.get(page.session_id) is page:   # not a newer registration since
                        del self._pages[page.session_id]

    def run(self, every_s: float = PROBE_EVERY_S) -> None:
        """Probe every `every_s` until stopped or the store is closed (the body of the watch's thread)."""
        while not self._stop.is_set() and self.check():
            self._stop.wait(every_s)

    def stop(self) -> None:
        self._stop.set()


_WATCHES: dict[int, StoreWatch] = {}   # id(store) -> its watch: one per store opened in this process
_WATCHES_LOCK = threading.Lock()


def start(store) -> StoreWatch:
    """The watch of `store`, started on a thread of its own the first time it is asked for."""
    found = _WATCHES.get(id(store))
    if found is None:
        with _WATCHES_LOCK:
            found = _WATCHES.get(id(store))
            if found is None:
                found = _WATCHES[id(store)] = StoreWatch(store)
                threading.Thread(target=found.run, name="faultlines-store-watch", daemon=True).start()
    return found


def watching(store) -> StoreWatch | None:
    """The watch of `store` if one was started (none for a DuckDB store)."""
    return _WATCHES.get(id(store))


def stop_all() -> None:
    """End every watch (the stores are being dropped)."""
    with _WATCHES_LOCK:
        for watch in _WATCHES.values():
            watch.stop()
        _WATCHES.clear()
