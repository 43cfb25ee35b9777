"""The one seam between Fault Lines and Streamlit's internals: every import below Streamlit's documented API is here.

Each need is one function, and each has a fallback to documented Streamlit behaviour, taken when Streamlit no longer
looks as this module knows it, and always in plain mode (`FAULTLINES_PLAIN_STREAMLIT=1`), in which the suite proves
the app keeps its promises on stock Streamlit. docs/architecture.md lists each seam with what it buys, measured
(bench/bench_seam.py); the modules that use them (theme_cache, loop_wakeups, fragment_push, ui/frame.py,
ui/context.py, ui/drill/lockin.py, ui/drill/reveal.py, ui/identity.py) hold their own logic in terms of these.
tests/test_architecture.py fails when any other module imports Streamlit's internals.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

from ui import keys

K = keys.register("seam", __name__)   # this module's keys (ui.keys holds only shared ones)
PAGE_RUN_OWED = K.kept("page_run_owed")   # plain mode: a callback left its fragments for the page's run to redraw

PLAIN_ENV = "FAULTLINES_PLAIN_STREAMLIT"
_LOGGER = logging.getLogger(__name__)
_run = threading.local()   # .framed: a page is running inside app.py's frame on this script thread


def plain() -> bool:
    """Whether every optimisation is off: each function below takes its documented fallback. Read on every call,
    so a test (or the suite's second pass) can turn it on in a process that already installed the others."""
    return os.environ.get(PLAIN_ENV) == "1"


def _ctx():
    """This thread's script run context (None outside a script run)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True)


# ---- which run is this -----------------------------------------------------------------------------------------

@contextmanager
def page_in_frame() -> Iterator[None]:
    """app.py runs the chosen page inside this (ui.frame.run_in_frame): the page knows the frame is around it."""
    _run.framed = True
    try:
        yield
    finally:
        _run.framed = False


def in_frame() -> bool:
    """Whether a page's body is running inside app.py's frame on this thread (a full run of the app)."""
    return getattr(_run, "framed", False)


def fragment_run() -> bool:
    """Whether this script run is a fragment's own (a widget inside it fired), not the whole page's.

    Streamlit says so in the run's fragment_ids_this_run. Fallback, by what Streamlit documents: a fragment's own
    run runs the fragment alone, never app.py, so a page's code running outside app.py's frame is a fragment's run
    (or the callbacks before it). Outside any script run (bare Python), no run is a fragment's."""
    ctx = _ctx()
    if ctx is None:
        return False
    if not plain() and hasattr(ctx, "fragment_ids_this_run"):
        return bool(ctx.fragment_ids_this_run)
    return not in_frame()


def run_key() -> object | None:
    """An object Streamlit makes afresh for every script run and for each fragment a run reruns (the run's cursor
    table), for reads to be shared within one; None (plain mode, no run): nothing is shared, each read is fresh."""
    if plain():
        return None
    return getattr(_ctx(), "cursors", None)


def fragment_run_key() -> object | None:
    """One object per fragment run, shared by every fragment it reruns (its list of fragment ids); None in a full
    run, in plain mode or outside a run: nothing is shared."""
    if plain():
        return None
    run = getattr(_ctx(), "fragment_ids_this_run", None)
    return run if run else None


# ---- the skip count's fragment in a Lock in's run ------------------------------------------------------------------

def _the_list_streamlit_iterates(ctx) -> bool:
    """Whether the fragment run in progress iterates ctx.fragment_ids_this_run itself, not a copy: the script
    runner's code_to_exec holds the list it will loop over after the callbacks (found on this thread's stack)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "code_to_exec" and "streamlit" in frame.f_code.co_filename:
            return frame.f_locals.get("fragment_ids_this_run") is ctx.fragment_ids_this_run
        frame = frame.f_back
    return False


def run_fragments_alongside(keys: tuple[str, ...]) -> bool:
    """From a widget callback in a fragment's run: have the fragments named by `keys` redrawn in this run. True when
    they will be; False (another Streamlit) tells the caller to rerun them the documented way, st.rerun(keys), which
    ends this run and starts another.

    Streamlit runs a fragment run's queue after the callbacks, from the list it keeps as fragment_ids_this_run, and
    the browser applies the extra fragment's elements in place (tests/test_load_ws.py). Extending a copy would
    report success and leave the count stale, so the list is checked to be the one the run iterates.

    Plain mode: a callback cannot tell a fragment's run from a whole page's by Streamlit's documented API (AppTest,
    and a browser whose fragment request was folded into a page run, run a fragment's callbacks in a page run, where
    a keyed rerun would cut the page short). So the redraw is owed instead: the fragment's body, which knows
    (`page_run_owed`), reruns the whole page when it is running alone."""
    if plain():
        st.session_state[PAGE_RUN_OWED] = True
        return True
    ctx = _ctx()
    queue = getattr(ctx, "fragment_ids_this_run", None)
    try:
        wanted = ctx.fragment_storage.resolve_target(list(keys))
    except Exception:   # noqa: BLE001 (an unknown key, or a Streamlit without keyed fragments: the rerun path)
        return False
    if not isinstance(queue, list) or not queue or not set(queue) <= set(wanted):
        return False
    if not _the_list_streamlit_iterates(ctx):
        return False
    queue.extend(f for f in wanted if f not in queue)   # page order: the question, then the skip count below it
    return True


def page_run_owed() -> bool:
    """Called first in a fragment's body: whether a callback of this run left other fragments to be redrawn
    (plain mode's run_fragments_alongside) and this is a fragment's own run, so the caller must rerun the page
    (st.rerun(scope="app")). In a page's run everything is drawn anyway and nothing is owed."""
    return bool(st.session_state.pop(PAGE_RUN_OWED, False)) and fragment_run()


# ---- app.py's pages -------------------------------------------------------------------------------------------

# What a page keeps on itself: its file, title, icon, URL path and flags. All immutable, so a shallow copy is a
# page of its own.
_PAGE_VALUES = (str, bool, Path, type(None))


def pages_copy_cleanly(pages) -> bool:
    """Whether these st.Page objects may be built once and shallow-copied for each run's st.navigation: the flag
    st.navigation sets on the page it returns (`_can_be_called`) and every other value live in the page's own
    __dict__, all immutable. False in plain mode: the caller builds its pages every run, as Streamlit documents."""
    if plain():
        return False
    return all(type(page) is st.Page and "_can_be_called" in vars(page)
               and all(isinstance(value, _PAGE_VALUES) for value in vars(page).values())
               for page in pages)


def leave_pages_directory_layout() -> bool:
    """Whether Streamlit was treating `pages/` as its old multipage layout (a page run alone, without app.py):
    it then is told not to, so the next rerun goes through app.py, as it does once app.py has called st.navigation.
    Plain mode, or a Streamlit without the flag: False, and a page opened first on a fresh server runs alone once,
    as Streamlit's pages/ layout documents."""
    if plain():
        return False
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:
        return False
    if not getattr(PagesManager, "uses_pages_directory", False):
        return False
    PagesManager.uses_pages_directory = False
    return True


# ---- secrets --------------------------------------------------------------------------------------------------

def no_secrets_file(error: BaseException) -> bool:
    """Whether `error`, raised by a read of st.secrets, says there is no secrets file at all (Streamlit then looks
    for the files again on every read), so its absence may be kept a while. Plain mode: False, every read asks."""
    if plain():
        return False
    from streamlit.errors import StreamlitSecretNotFoundError

    return isinstance(error, StreamlitSecretNotFoundError)


# ---- the theme of every run's new_session message -------------------------------------------------------------

def replace_theme_builder(wrap: Callable[[Callable], Callable], on_reparse: Callable[[], None]) -> bool:
    """Put `wrap(builder)` in place of Streamlit's theme builder (app_session._populate_theme_msg), once per
    process, and call `on_reparse` whenever the config files are parsed again. False when Streamlit has no such
    builder (its own is left) and in plain mode. The wrapper itself must defer to the builder when plain mode is
    turned on later (see theme_cache)."""
    if plain():
        return False
    from streamlit import config
    from streamlit.runtime import app_session

    current = getattr(app_session, "_populate_theme_msg", None)
    if current is None or hasattr(current, "__wrapped__"):   # a Streamlit without it, or done already
        return False
    config.on_config_parsed(on_reparse, force_connect=True)   # a config edited while serving builds afresh
    app_session._populate_theme_msg = wrap(current)
    return True


def theme_builder() -> Callable | None:
    """Streamlit's own theme builder, also once replace_theme_builder put another in its place."""
    from streamlit.runtime import app_session

    current = getattr(app_session, "_populate_theme_msg", None)
    return getattr(current, "__wrapped__", current)


# ---- the event loop's wake-ups --------------------------------------------------------------------------------

def _streamlits(method):
    """Streamlit's own method, also once replace_loop_wakeups has put another in its place."""
    return getattr(method, "__wrapped__", method)


def loop_methods_fit() -> bool:
    """Whether Streamlit still has the two methods loop_wakeups replaces, as it knows them:
    AppSession._call_soon_on_event_loop(self, callback) on self._event_loop, and Runtime._enqueued_some_message
    setting need_send_data through the loop's call_soon_threadsafe."""
    from streamlit.runtime import app_session, runtime

    session_call = _streamlits(getattr(app_session.AppSession, "_call_soon_on_event_loop", None))
    enqueued = _streamlits(getattr(runtime.Runtime, "_enqueued_some_message", None))
    return (session_call is not None and enqueued is not None
            and session_call.__code__.co_varnames[:2] == ("self", "callback")
            and "_event_loop" in session_call.__code__.co_names
            and enqueued.__code__.co_argcount == 1
            and {"eventloop", "need_send_data", "call_soon_threadsafe"} <= set(enqueued.__code__.co_names))


def loop_wakeups_installed() -> bool:
    from streamlit.runtime import app_session

    return getattr(app_session.AppSession._call_soon_on_event_loop, "__wrapped__", None) is not None


def replace_loop_wakeups(call_soon: Callable, enqueued: Callable) -> bool:
    """Put `call_soon(session, callback)` and `enqueued(runtime)` in place of the two methods loop_methods_fit
    names; each gets Streamlit's own as `__wrapped__`, to defer to in plain mode. False when done already or when
    Streamlit's differ (its own are left), and in plain mode."""
    from streamlit.runtime import app_session, runtime

    if plain() or loop_wakeups_installed() or not loop_methods_fit():
        return False
    call_soon.__wrapped__ = app_session.AppSession._call_soon_on_event_loop
    enqueued.__wrapped__ = runtime.Runtime._enqueued_some_message
    runtime.Runtime._enqueued_some_message = enqueued
    app_session.AppSession._call_soon_on_event_loop = call_soon
    return True


def session_event_loop(session):
    """The event loop an AppSession hands its script events to."""
    return session._event_loop


def runtime_send_objects(runtime):
    """The runtime's event loop and its 'data to send' event, as (loop, event)."""
    async_objs = runtime._get_async_objs()
    return async_objs.eventloop, async_objs.need_send_data


# ---- a server-side fragment rerun -----------------------------------------------------------------------------

def running_fragment() -> tuple[str, str, str, str] | None:
    """(session id, fragment id, page script hash, query string) of the fragment whose body runs now in a browser
    session under Streamlit's server; None outside a fragment, without a server (AppTest), or in plain mode, where
    nothing can be pushed and a page learns of a move by polling."""
    if plain():
        return None
    ctx = _ctx()
    try:
        from streamlit import runtime
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

        if ctx is None or not runtime.exists():
            return None
        fragment_id = ThreadState.get().fragment_id
    except (ImportError, RuntimeError, AttributeError):
        return None
    if not fragment_id:
        return None
    return ctx.session_id, fragment_id, ctx.page_script_hash, ctx.query_string


def fragment_rerun_request(fragment_id: str, page_script_hash: str, query_string: str):
    """What a browser's frontend sends to rerun one fragment by its timer (a ClientState)."""
    from streamlit.proto.ClientState_pb2 import ClientState

    return ClientState(fragment_id=fragment_id, page_script_hash=page_script_hash, query_string=query_string,
                       is_auto_rerun=True)


def on_session_loop(session_id: str, call: Callable) -> bool:
    """Schedule `call(session)` on the server's event loop for the browser session `session_id` (AppSession is not
    thread-safe: its requests are made on the loop, as a browser's are); callable from any thread. False when that
    session is gone, there is no server, or in plain mode."""
    if plain():
        return False
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    runtime = Runtime.instance()
    session = runtime.get_app_session(session_id)
    if session is None:
        return False
    runtime._get_async_objs().eventloop.call_soon_threadsafe(call, session)
    return True


def session_page(session, default: str) -> str:
    """The page the session's latest run started on (AppSession.page_script_hash), or `default` where Streamlit
    does not record it."""
    return getattr(session, "page_script_hash", default)


def session_on_page(session_id: str, page_script_hash: str) -> bool | None:
    """Whether the browser session `session_id` is connected now (Runtime.is_active_session) and its latest run
    was on the page `page_script_hash`; None without a server or in plain mode, where nobody can tell."""
    if plain():
        return None
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    runtime = Runtime.instance()
    session = runtime.get_app_session(session_id) if runtime.is_active_session(session_id) else None
    return session is not None and session_page(session, page_script_hash) == page_script_hash
