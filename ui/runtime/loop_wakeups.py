"""Wake Streamlit's event loop once per burst of a session's messages, not once per message.

Every element a script run draws reaches the browser in two hops, each a wake-up of the server's event loop through
its self-pipe (a socket write, `call_soon_threadsafe`): the script thread hands the message to the loop, and the
loop, having queued it for the browser, wakes itself again to say there is data to send. A board run sends ~120
messages, so ~240 writes and as many extra turns of the loop; under bench.bench_load the script threads' writes
alone were 13 % of their on-CPU samples (py-spy, `_write_to_self`). Here a session's script events go into its own
queue, and the loop is woken once for whatever has queued by the time it turns (in order, one session's as
before); the loop's own "data to send" is set directly when it is already on the loop's thread. The two methods are
replaced through ui.runtime.seam; in plain mode each call goes to Streamlit's own.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable

from ui.runtime import seam

_LOGGER = logging.getLogger(__name__)
_install_lock = threading.Lock()


class _SessionQueue:
    """One session's callbacks for the event loop, run in order by one scheduled drain at a time."""

    __slots__ = ("loop", "lock", "pending", "scheduled")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.pending: deque[Callable[[], None]] = deque()
        self.scheduled = False

    def call_soon(self, callback: Callable[[], None]) -> None:
        with self.lock:
            self.pending.append(callback)
            if self.scheduled:   # a drain is on its way and will take this one too
                return
            self.scheduled = True
        try:
            self.loop.call_soon_threadsafe(self.drain)
        except RuntimeError:   # as Streamlit does: events after the loop closed are dropped
            with self.lock:
                self.pending.clear()
                self.scheduled = False
            if not self.loop.is_closed():
                raise
            _LOGGER.debug("Dropped event-loop callback", exc_info=True)

    def drain(self) -> None:
        """On the loop: run what has queued so far; what queues meanwhile goes in a later turn of the loop, so a
        long run cannot keep the loop from sending (as one callback per turn could not)."""
        with self.lock:
            batch = list(self.pending)
            self.pending.clear()
        for callback in batch:
            try:
                callback()
            except Exception as error:   # as the loop reports a failed callback, and the others still run
                self.loop.call_exception_handler(
                    {"message": "Exception in a session's event-loop callback", "exception": error})
        with self.lock:
            if self.pending:
                self.loop.call_soon(self.drain)   # on the loop's own thread: no wake-up needed
            else:
                self.scheduled = False


def _queue_of(session) -> _SessionQueue:
    queue = session.__dict__.get("_faultlines_loop_queue")
    if queue is None:
        with _install_lock:
            queue = session.__dict__.get("_faultlines_loop_queue")
            if queue is None:
                queue = session.__dict__["_faultlines_loop_queue"] = _SessionQueue(seam.session_event_loop(session))
    return queue


def _call_soon_on_event_loop(self, callback: Callable[[], None]) -> None:
    if seam.plain():
        _call_soon_on_event_loop.__wrapped__(self, callback)
        return
    _queue_of(self).call_soon(callback)


def _enqueued_some_message(self) -> None:
    if seam.plain():
        _enqueued_some_message.__wrapped__(self)
        return
    loop, need_send_data = seam.runtime_send_objects(self)
    if asyncio._get_running_loop() is loop:   # on the loop's own thread: no need to wake it
        need_send_data.set()
    else:
        loop.call_soon_threadsafe(need_send_data.set)


def _fits() -> bool:
    """Whether Streamlit still has the two methods this replaces, as this module knows them."""
    return seam.loop_methods_fit()


def install() -> None:
    """Once per process (app.py calls it on every run); a Streamlit that differs is left as it is."""
    if seam.loop_wakeups_installed():
        return
    with _install_lock:
        seam.replace_loop_wakeups(_call_soon_on_event_loop, _enqueued_some_message)
