"""Ask a browser session's fragment to rerun from the server's side, as its frontend's `run_every` would.

Streamlit has no public way for the server to start a run: a fragment reruns when its browser asks (a widget,
or `run_every`'s timer). A live room wants the opposite: the process hears a move (PostgreSQL NOTIFY) and every
page of the room redraws its part at once, without each browser polling several times a second to find out.
This module is the only place that reaches into Streamlit's runtime for that; tests/test_fragment_push.py runs
it against a real server and fails when Streamlit changes what it uses:
- the running fragment's id (`ThreadState.get().fragment_id`) and the run's context (session, page, query);
- `Runtime.instance().get_app_session(id)` and the runtime's event loop (`_get_async_objs().eventloop`);
- `AppSession.request_rerun(ClientState)` with a `fragment_id`, which a browser's own rerun request goes through,
  and `AppSession.page_script_hash`, the page the session's latest run started on.

A pushed run carries no widget states (the session keeps what its browser last sent, as for the frontend's own
timer reruns) and is queued behind a run in progress, never preempting it.
"""
from __future__ import annotations

from dataclasses import dataclass

from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx


@dataclass(frozen=True)
class FragmentPage:
    """One browser session's fragment, as its frontend names it in a rerun request."""
    session_id: str
    fragment_id: str
    page_script_hash: str
    query_string: str


def this_fragment() -> FragmentPage | None:
    """The fragment whose body is running now in this browser session (None outside a fragment, or without
    Streamlit's server, as in AppTest)."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not _serving():
        return None
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

        fragment_id = ThreadState.get().fragment_id
    except (ImportError, RuntimeError, AttributeError):
        return None
    if not fragment_id:
        return None
    return FragmentPage(ctx.session_id, fragment_id, ctx.page_script_hash, ctx.query_string)


def _serving() -> bool:
    from streamlit import runtime

    return runtime.exists()


def rerun(page: FragmentPage) -> bool:
    """Queue a rerun of `page`'s fragment; callable from any thread. False when that session is gone (its
    browser left) or there is no server, so the caller can forget it."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return False
    runtime = Runtime.instance()
    session = runtime.get_app_session(page.session_id)
    if session is None:
        return False
    state = ClientState(fragment_id=page.fragment_id, page_script_hash=page.page_script_hash,
                        query_string=page.query_string, is_auto_rerun=True)
    # AppSession is not thread-safe: its requests are made on the runtime's event loop, as a browser's are.
    runtime._get_async_objs().eventloop.call_soon_threadsafe(request_if_still_on_page, session, state)
    return True


def request_if_still_on_page(session, state) -> bool:
    """On the event loop: ask `session` for the fragment run `state` names, unless its browser has since moved to
    another page. A request carries its page, and one folded into the browser's own navigation (a run pending
    when it lands) takes the newer request's page: a push landing just after a click on another page would pull
    the candidate back to the room. Streamlit records the page each run starts on (`AppSession.page_script_hash`);
    where it does not, the request goes as before."""
    on_page = getattr(session, "page_script_hash", state.page_script_hash)
    if on_page != state.page_script_hash:
        return False
    session.request_rerun(state)
    return True
