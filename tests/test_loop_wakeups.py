"""A session's script events wake Streamlit's event loop once per burst, in order (ui/runtime/loop_wakeups.py)."""
from __future__ import annotations

import asyncio
import threading

from streamlit.runtime import app_session, runtime

from ui.runtime import loop_wakeups, seam


def test_streamlit_still_has_what_this_replaces():
    # The internals this leans on: AppSession._call_soon_on_event_loop(self, callback) schedules every script
    # runner event on self._event_loop, and Runtime._enqueued_some_message sets need_send_data through
    # call_soon_threadsafe. If a release changes them, install() leaves Streamlit as it is and this fails.
    assert loop_wakeups._fits()


def test_what_it_replaces_is_still_recognised_once_installed(monkeypatch):
    # app.py installs it in every AppTest run, so a worker that ran one before this file holds the replacements:
    # the check must read Streamlit's own methods behind them (a CI run failed on exactly that ordering). Installed
    # as outside plain mode, whichever pass runs this: in plain mode install() does nothing, and replacements an
    # earlier test installed defer to Streamlit's own (test_seam), so either order could meet either state.
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    loop_wakeups.install()
    assert app_session.AppSession._call_soon_on_event_loop.__wrapped__ is not None
    assert loop_wakeups._fits()


class _Loop:
    """A real event loop on its own thread, counting the wake-ups asked of it from other threads."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.wakeups = 0
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        original = self.loop.call_soon_threadsafe

        def counted(callback, *args, **kwargs):
            self.wakeups += 1
            return original(callback, *args, **kwargs)

        self.loop.call_soon_threadsafe = counted

    def settle(self) -> None:
        done = threading.Event()
        self.loop.call_soon_threadsafe(done.set)
        assert done.wait(10)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class _Session:
    def __init__(self, loop) -> None:
        self._event_loop = loop


def test_a_burst_runs_in_order_on_the_loop_with_fewer_wakeups():
    loop = _Loop()
    try:
        session, ran, threads = _Session(loop.loop), [], set()
        hold = threading.Event()
        loop.loop.call_soon_threadsafe(hold.wait, 10)   # the loop is busy while the script thread sends a burst
        for n in range(200):
            loop_wakeups._call_soon_on_event_loop(session, lambda n=n: ran.append(n) or threads.add(
                threading.get_ident()))
        hold.set()
        loop.settle()
        assert ran == list(range(200))
        assert threads == {loop.thread.ident}
        assert loop.wakeups <= 3, "one wake-up for the burst (plus the test's own)"
        loop_wakeups._call_soon_on_event_loop(session, lambda: ran.append("later"))
        loop.settle()
        assert ran[-1] == "later", "after a drained burst the next event wakes the loop again"
    finally:
        loop.close()


def test_a_failing_callback_is_reported_and_the_rest_still_run():
    loop = _Loop()
    try:
        reported, ran = [], []
        loop.loop.set_exception_handler(lambda _, context: reported.append(context["exception"]))
        session = _Session(loop.loop)
        hold = threading.Event()
        loop.loop.call_soon_threadsafe(hold.wait, 10)
        loop_wakeups._call_soon_on_event_loop(session, lambda: 1 / 0)
        loop_wakeups._call_soon_on_event_loop(session, lambda: ran.append("after"))
        hold.set()
        loop.settle()
        assert ran == ["after"] and isinstance(reported[0], ZeroDivisionError)
    finally:
        loop.close()


def test_data_to_send_is_set_directly_on_the_loops_thread():
    loop = _Loop()
    try:
        event = asyncio.Event()

        class _Runtime:
            def _get_async_objs(self):
                return type("AsyncObjects", (), {"eventloop": loop.loop, "need_send_data": event})

        asked = loop.wakeups
        done = threading.Event()
        loop.loop.call_soon_threadsafe(lambda: (loop_wakeups._enqueued_some_message(_Runtime()), done.set()))
        assert done.wait(10) and event.is_set()
        assert loop.wakeups == asked + 1, "only the test's own call: the loop did not wake itself"
        event.clear()
        loop_wakeups._enqueued_some_message(_Runtime())   # from another thread: through the loop, as before
        loop.settle()
        assert event.is_set()
    finally:
        loop.close()


def test_install_replaces_both_once(monkeypatch):
    original_call = getattr(app_session.AppSession._call_soon_on_event_loop, "__wrapped__",
                            app_session.AppSession._call_soon_on_event_loop)
    original_enqueued = getattr(runtime.Runtime._enqueued_some_message, "__wrapped__",
                                runtime.Runtime._enqueued_some_message)
    monkeypatch.setattr(app_session.AppSession, "_call_soon_on_event_loop", original_call)
    monkeypatch.setattr(runtime.Runtime, "_enqueued_some_message", original_enqueued)
    monkeypatch.delattr(loop_wakeups._call_soon_on_event_loop, "__wrapped__", raising=False)
    loop_wakeups.install()
    loop_wakeups.install()
    assert app_session.AppSession._call_soon_on_event_loop is loop_wakeups._call_soon_on_event_loop
    assert runtime.Runtime._enqueued_some_message is loop_wakeups._enqueued_some_message
    assert loop_wakeups._call_soon_on_event_loop.__wrapped__ is original_call
