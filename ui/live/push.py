"""The candidate pages of each live room in this process, the step each one drew, and the pushes not yet drawn.

When the process hears that a room moved (drills.live_watch, PostgreSQL NOTIFY), the pages still showing an
older step have their room part rerun by the server (ui.runtime.fragment_push), so a Close reaches every page at once
instead of each browser polling twice a second to find out. A page gone from the server is forgotten. A push
the page has not drawn within PUSH_RETRY_S is sent again each second until PUSHES have gone (the listener looks
every second; by then the page's own tick looks for itself), and a push that fails outright marks its page lost:
that page polls from then on (ui.live.seat), since nothing else would tell it.

The process also does what each page's tick did every few seconds, so the ticks can be rare (at 500 seats they
were a quarter of the server's work during a Close): it beats for the seats (beat), draws each pushed move once
more REDRAW_AFTER_S after the room's pages here settled, since a run the server finished can still fail to reach
its browser (recheck), and when its listener drops it pushes every page once, so each finds the push off and
polls, and beats for itself, from then on (dropped).
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from drills.store.live import HEARTBEAT_S
from ui.runtime import fragment_push
from ui.runtime.fragment_push import FragmentPage

_LOG = logging.getLogger(__name__)
PUSH_RETRY_S = 1.0   # a pushed page that has not drawn the move by then is pushed again: the room promises 1 s
PUSHES = 5           # pushes of one move to a page (one a second) before its own tick is left to find it
PUSH_AT_ONCE = 2     # pushed runs a process has drawing at a time; the rest of the room waits its turn (moved)
BEATS_LATE_S = HEARTBEAT_S + 1.5   # beat() runs on the listener's second: this late, its pages beat for themselves
REDRAW_AFTER_S = 2.0   # a pushed move drawn this long ago, its room settled here, is drawn once more (recheck)


class RoomPages:
    """One per process: room (live session id) -> browser session -> (its room fragment, the step it drew)."""

    def __init__(self, rerun: Callable[[FragmentPage], bool] = fragment_push.rerun,
                 clock: Callable[[], float] = time.monotonic,
                 on_page: Callable[[FragmentPage], bool | None] = fragment_push.on_page):
        self._rerun, self._clock, self._on_page = rerun, clock, on_page
        self._seats: dict[tuple[int, str], tuple[FragmentPage, int]] = {}   # (room, browser session) -> (page, candidate)
        self._beat_at: float | None = None   # when beat() last told the store of the seats here
        self._beaten: set[tuple[int, str]] = set()   # the pages that beat was for
        self._lock = threading.Lock()
        self._rooms: dict[int, dict[str, tuple[FragmentPage, int]]] = {}
        # pushed (or queued to be), not drawn: (step, when pushed (None while queued), tries)
        self._asked: dict[tuple[int, str], tuple[int, float | None, int]] = {}
        self._queue: deque[tuple[int, str]] = deque()   # pages of a move waiting for their push (PUSH_AT_ONCE)
        self._flying: dict[tuple[int, str], float] = {}   # pushed and not yet finished drawing: when pushed
        self._lost: set[str] = set()   # browser sessions a push could not reach: their pages poll
        self._drawn_at: dict[tuple[int, str], float] = {}   # (room, browser session) -> when its part last drew
        self._once: set[tuple[int, str]] = set()   # asked for a one-off push (a recheck, a drop): never retried
        self._recheck: dict[tuple[int, str], float] = {}   # drew a pushed move: when, for its one more draw

    def drew(self, room: int, page: FragmentPage | None, step: int) -> None:
        """`page` (None outside a server's fragment: nothing to push to) has just drawn `room` at `step`."""
        if page is None:
            return
        with self._lock:
            self._rooms.setdefault(room, {})[page.session_id] = (page, step)
            self._drawn_at[(room, page.session_id)] = self._clock()
            key = (room, page.session_id)
            asked = self._asked.get(key)
            if asked is not None and asked[0] == step:
                del self._asked[key]
                if key in self._once:
                    self._once.discard(key)
                elif asked[1] is not None:   # a move it was pushed: drawn once more when the room has settled
                    self._recheck[key] = self._clock()

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
        """The watcher read `room` at `version` (step id first): rerun each page that drew another step.

        PUSH_AT_ONCE at a time, the next as one finishes drawing (finished): a few hundred pages pushed at once
        draw together, sharing the process's GIL with each other and with the event loop that sends their
        draws, so every page waited for nearly the last (500 seats on 3 processes: the first page showed the
        Close 1.2 s after it, though its draw had ended 0.13 s after it)."""
        step = version[0]
        with self._lock:
            behind = [(s, p) for s, (p, drawn) in self._rooms.get(room, {}).items() if drawn != step]
            for session_id, page in behind:   # asked once: a second notification of this step asks no more
                self._rooms[room][session_id] = (page, step)
                self._ask((room, session_id), step)
        self._pump()

    def _ask(self, key: tuple[int, str], step: int, *, once: bool = False) -> None:
        """Queue a push of that page for `step` (the lock held); `once`: a one-off, never pushed again."""
        asked = self._asked.get(key)
        if asked is None or asked[1] is not None:   # not waiting in the queue already: it joins it
            self._queue.append(key)   # (pushed for an older move: pushed for this one too)
        self._asked[key] = (step, None, 1)
        self._recheck.pop(key, None)   # this push draws it afresh
        if once:
            self._once.add(key)
        else:
            self._once.discard(key)

    def dropped(self) -> None:
        """The listener lost its connection: no move is heard and nobody beats for the seats until it is back.
        Push every page once (paced, as a move is), so each run finds the push off and the page polls, and beats
        for itself, from then on (ui.live.seat) instead of waiting for its rare tick to find out."""
        with self._lock:
            for room, found in self._rooms.items():
                for session_id, (_, step) in found.items():
                    if (room, session_id) not in self._asked:   # a page with a push on its way finds out in it
                        self._ask((room, session_id), step, once=True)
            self._beat_at, self._beaten = None, set()
        self._pump()

    def finished(self, room: int, page: FragmentPage | None) -> None:
        """`page`'s run of `room` ended (drawn or not): the next page waiting for its push is pushed."""
        if page is not None:
            with self._lock:
                self._flying.pop((room, page.session_id), None)
            self._pump()

    def _pump(self) -> None:
        """Push queued pages while fewer than PUSH_AT_ONCE pushed runs are drawing."""
        while self._pump_some():
            pass   # a push that found its page gone (or failed) freed its turn at once

    def _pump_some(self) -> bool:
        """One round of _pump; whether a push of it freed its turn already."""
        now, due = self._clock(), {}
        with self._lock:
            while self._queue and len(self._flying) < PUSH_AT_ONCE:
                room, session_id = self._queue.popleft()
                asked, found = self._asked.get((room, session_id)), self._rooms.get(room, {}).get(session_id)
                if asked is None or asked[1] is not None or found is None:
                    continue   # drawn meanwhile (its own tick), pushed already, or gone
                self._asked[(room, session_id)] = (asked[0], now, 1)
                self._flying[(room, session_id)] = now
                due.setdefault(room, []).append((session_id, found[0]))
        for room, pages in due.items():
            self._push(room, pages)
        with self._lock:
            return any((room, session_id) not in self._flying for room, pages in due.items() for session_id, _ in pages)

    def retry(self) -> int:
        """Push once more every page that has not drawn its move PUSH_RETRY_S after it was pushed (a run the
        server dropped, or one that drew an older row); the listener calls this every second. How many."""
        now = self._clock()
        with self._lock:
            for key, at in list(self._flying.items()):   # a run that never came or never ended holds no turn
                if now - at >= PUSH_RETRY_S:
                    del self._flying[key]
            due = [(room, session_id, step, tries) for (room, session_id), (step, at, tries) in self._asked.items()
                   if at is not None and now - at >= PUSH_RETRY_S * tries]
            again: dict[int, list] = {}
            for room, session_id, step, tries in due:
                if tries >= PUSHES or (room, session_id) in self._once:   # a one-off, or pushed every second up
                    del self._asked[(room, session_id)]   # to its own tick: the tick finds it, polls from then on
                    self._once.discard((room, session_id))
                    continue
                self._asked[(room, session_id)] = (step, self._asked[(room, session_id)][1], tries + 1)
                found = self._rooms.get(room, {}).get(session_id)
                if found is not None:
                    again.setdefault(room, []).append((session_id, found[0]))
        for room, pages in again.items():
            _LOG.warning("live room %s: %d pages had not drawn the move %.1f s after it was pushed: pushed again",
                      room, len(pages), PUSH_RETRY_S)
            self._push(room, pages)
        self._recheck_due(now)
        self._pump()
        return sum(len(p) for p in again.values())

    def _recheck_due(self, now: float) -> None:
        """Queue the one more draw of each page that drew a pushed move REDRAW_AFTER_S ago, once every page of its
        room here has drawn what it was pushed: a second draw while they still draw the move slows theirs (at
        500 seats it doubled the time to the last page)."""
        with self._lock:
            busy = {room for room, _ in self._asked}
            due = [key for key, at in self._recheck.items() if now - at >= REDRAW_AFTER_S and key[0] not in busy]
            for key in due:
                del self._recheck[key]
                found = self._rooms.get(key[0], {}).get(key[1])
                if found is not None:
                    self._ask(key, found[1], once=True)

    def _push(self, room: int, pages: list[tuple[str, FragmentPage]]) -> None:
        gone, failed = [], []
        for session_id, page in pages:
            try:
                if not self._rerun(page):
                    gone.append(session_id)
            except Exception:   # noqa: BLE001 - the push itself broke (Streamlit's internals): that page polls
                _LOG.warning("live room %s: the push to page %s failed; it polls from now on", room, session_id,
                             exc_info=True)
                failed.append(session_id)
        if gone or failed:
            with self._lock:
                for session_id in gone:
                    self._rooms.get(room, {}).pop(session_id, None)
                    self._asked.pop((room, session_id), None)
                    self._once.discard((room, session_id))
                    self._recheck.pop((room, session_id), None)
                    self._lost.discard(session_id)
                for session_id in gone + failed:
                    self._flying.pop((room, session_id), None)
                self._lost.update(failed)

    def in_flight(self, room: int, session_id: str) -> bool:
        """Whether a push to that page is under way (pushed, not drawn, not yet given up on)."""
        with self._lock:
            return (room, session_id) in self._asked

    def settled(self, room: int) -> bool:
        """Whether every page of `room` in this process has drawn what it was pushed (or was given up on)."""
        with self._lock:
            return not any(asked_room == room for asked_room, _ in self._asked)

    def drawn_for(self, room: int, session_id: str) -> float:
        """Seconds since that page's room part last drew (infinite when it never did here)."""
        with self._lock:
            at = self._drawn_at.get((room, session_id))
        return float("inf") if at is None else self._clock() - at

    def lose(self, session_id: str) -> None:
        """A push did not reach that page: it polls from now on."""
        with self._lock:
            self._lost.add(session_id)

    def lost(self, session_id: str) -> bool:
        with self._lock:
            return session_id in self._lost

    def pages(self, room: int) -> dict[str, int]:
        """Browser session -> the step its page drew (for tests and the console's own checks)."""
        with self._lock:
            return {s: step for s, (_, step) in self._rooms.get(room, {}).items()}

    def seated(self, room: int, page: FragmentPage | None, candidate_id: int) -> None:
        """`page` is candidate `candidate_id`'s seat in `room`: beat() keeps it present while its browser is
        connected and on that page."""
        if page is not None:
            with self._lock:
                self._seats[(room, page.session_id)] = (page, candidate_id)

    def beat(self, heartbeats: Callable[[int, list[int]], None]) -> None:
        """Every HEARTBEAT_S (the listener calls this each second): `heartbeats(room, candidates)` once per room
        for the seats whose browsers are connected and still on the room's page. A page gone or elsewhere is
        forgotten here, and beats for itself if it comes back (ui.live.seat). The pages need not run a tick of
        their own to be present, which at 500 seats was a third of a core."""
        now = self._clock()
        if self._beat_at is not None and now - self._beat_at < HEARTBEAT_S:
            return
        with self._lock:
            seats = list(self._seats.items())
        here: dict[int, list[int]] = {}
        beaten = set()
        for (room, session_id), (page, candidate_id) in seats:
            known = self._on_page(page)
            if known:
                here.setdefault(room, []).append(candidate_id)
                beaten.add((room, session_id))
            elif known is not None:
                with self._lock:
                    self._seats.pop((room, session_id), None)
        for room, candidates in here.items():
            heartbeats(room, candidates)
        with self._lock:
            self._beat_at, self._beaten = now, beaten

    def beating(self, room: int, session_id: str) -> bool:
        """Whether beat() keeps that page's seat present: its last beat was for the page, and it is on time."""
        with self._lock:
            return ((room, session_id) in self._beaten and self._beat_at is not None
                    and self._clock() - self._beat_at < BEATS_LATE_S)
