"""Ask a browser session's fragment to rerun from the server's side, as its frontend's `run_every` would.

Streamlit has no public way for the server to start a run: a fragment reruns when its browser asks (a widget,
or `run_every`'s timer). A live room wants the opposite: the process hears a move (PostgreSQL NOTIFY) and every
page of the room redraws its part at once, without each browser polling several times a second to find out.
What this reaches in Streamlit for goes through ui.runtime.seam (`running_fragment`, `on_session_loop`,
`fragment_rerun_request`, `session_page`); tests/test_fragment_push.py runs it against a real server and fails when
Streamlit changes what it uses.

A pushed run carries no widget states (the session keeps what its browser last sent, as for the frontend's own
timer reruns) and is queued behind a run in progress, never preempting it. A push that fails (Streamlit changed
under it) is reported: to the caller's `on_failure`, and by `pushes_work()` turning False for the process, so the
room's pages poll fast instead of waiting for pushes that never come. In plain mode nothing is pushed.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ui.runtime import seam

_LOGGER = logging.getLogger(__name__)
_failure_lock = threading.Lock()
_failure: BaseException | None = None   # the first push that failed in this process


@dataclass(frozen=True)
class FragmentPage:
    """One browser session's fragment, as its frontend names it in a rerun request."""
    session_id: str
    fragment_id: str
    page_script_hash: str
    query_string: str


def this_fragment() -> FragmentPage | None:
    """The fragment whose body is running now in this browser session (None outside a fragment, without
    Streamlit's server, as in AppTest, or in plain mode)."""
    found = seam.running_fragment()
    return None if found is None else FragmentPage(*found)


def pushes_work() -> bool:
    """Whether a push can be relied on in this process: False in plain mode and once any push has failed (a page
    waiting for pushes should then poll at its fast interval)."""
    return not seam.plain() and _failure is None


def last_failure() -> BaseException | None:
    """Why the first failed push of this process failed (None: none has)."""
    return _failure


def _failed(page: FragmentPage, error: BaseException, on_failure: Callable | None) -> None:
    global _failure
    with _failure_lock:
        first = _failure is None
        if first:
            _failure = error
    if first:
        _LOGGER.warning("A server-side fragment push failed; the room's pages poll instead", exc_info=error)
    if on_failure is not None:
        on_failure(page, error)


def rerun(page: FragmentPage, on_failure: Callable[[FragmentPage, BaseException], None] | None = None) -> bool:
    """Queue a rerun of `page`'s fragment; callable from any thread. False when that session is gone (its
    browser left), there is no server, or in plain mode, so the caller can forget it; also False, after
    `on_failure(page, error)` is called, when the push cannot be made. A request that fails later, on the event
    loop, calls `on_failure` there (from the loop's thread) and turns pushes_work() False."""
    state = None
    try:
        state = seam.fragment_rerun_request(page.fragment_id, page.page_script_hash, page.query_string)
        return seam.on_session_loop(page.session_id, lambda session: _request(session, state, page, on_failure))
    except Exception as error:   # noqa: BLE001 (Streamlit changed under the push: reported, never raised)
        _failed(page, error, on_failure)
        return False


def on_page(page: FragmentPage) -> bool | None:
    """Whether `page`'s browser is connected and still on its page (the one its fragment ran on); None when
    nobody can tell (no server, plain mode). Callable from any thread."""
    try:
        return seam.session_on_page(page.session_id, page.page_script_hash)
    except Exception:   # noqa: BLE001 (Streamlit changed under it: unknown, as without a server)
        _LOGGER.warning("could not tell whether a browser session is on its page", exc_info=True)
        return None


def _request(session, state, page: FragmentPage, on_failure) -> None:
    try:
        request_if_still_on_page(session, state)
    except Exception as error:   # noqa: BLE001 (on the loop: report it rather than lose it in the loop's log)
        _failed(page, error, on_failure)


def request_if_still_on_page(session, state) -> bool:
    """On the event loop: ask `session` for the fragment run `state` names, unless its browser has since moved to
    another page. A request carries its page, and one folded into the browser's own navigation (a run pending
    when it lands) takes the newer request's page: a push landing just after a click on another page would pull
    the candidate back to the room. Streamlit records the page each run starts on (`AppSession.page_script_hash`);
    where it does not, the request goes as before."""
    if seam.session_page(session, state.page_script_hash) != state.page_script_hash:
        return False
    session.request_rerun(state)
    return True
