"""Wake Streamlit's event loop once per burst of a session's messages, not once per message.

Every element a script run draws reaches the browser in two hops, each a wake-up of the server's event loop through
its self-pipe (a socket write, `call_soon_threadsafe`): the script thread hands the message to the loop, and the
loop, having queued it for the browser, wakes itself again to say there is data to send. A board run sends ~120
messages, so ~240 writes and as many extra turns of the loop; under bench.bench_load the script threads' writes
alone were 13 % of their on-CPU samples (py-spy, `_write_to_self`). Here a session's script events go into its own
queue, and the loop is woken once for whatever has queued by the time it turns (in order, one session's as
before); the loop's own "data to send" is set directly when it is already on the loop's thread.
"""
from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable

from streamlit.runtime import app_session, runtime

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
                queue = session.__dict__["_faultlines_loop_queue"] = _SessionQueue(session._event_loop)
    return queue


def _call_soon_on_event_loop(self, callback: Callable[[], None]) -> None:
    _queue_of(self).call_soon(callback)


def _enqueued_some_message(self) -> None:
    async_objs = self._get_async_objs()
    if asyncio._get_running_loop() is async_objs.eventloop:   # on the loop's own thread: no need to wake it
        async_objs.need_send_data.set()
    else:
        async_objs.eventloop.call_soon_threadsafe(async_objs.need_send_data.set)


def _streamlits(method):
    """Streamlit's own method, also once install() has put this module's in its place."""
    return getattr(method, "__wrapped__", method)


def _fits() -> bool:
    """Whether Streamlit still has the two methods this replaces, as this module knows them."""
    session_call = _streamlits(getattr(app_session.AppSession, "_call_soon_on_event_loop", None))
    enqueued = _streamlits(getattr(runtime.Runtime, "_enqueued_some_message", None))
    return (session_call is not None and enqueued is not None
            and session_call.__code__.co_varnames[:2] == ("self", "callback")
            and "_event_loop" in session_call.__code__.co_names
            and enqueued.__code__.co_argcount == 1
            and {"eventloop", "need_send_data", "call_soon_threadsafe"} <= set(enqueued.__code__.co_names))


def install() -> None:
    """Once per process (app.py calls it on every run); a Streamlit that differs is left as it is."""
    if getattr(app_session.AppSession._call_soon_on_event_loop, "__wrapped__", None) is not None:
        return
    with _install_lock:
        if getattr(app_session.AppSession._call_soon_on_event_loop, "__wrapped__", None) is not None or not _fits():
            return
        _call_soon_on_event_loop.__wrapped__ = app_session.AppSession._call_soon_on_event_loop
        _enqueued_some_message.__wrapped__ = runtime.Runtime._enqueued_some_message
        runtime.Runtime._enqueued_some_message = _enqueued_some_message
        app_session.AppSession._call_soon_on_event_loop = _call_soon_on_event_loop
