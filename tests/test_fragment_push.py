"""ui/runtime/fragment_push.py against a real Streamlit server: a rerun the server asks for reaches the browser session
as a run of that fragment alone, without the browser asking. Fails when Streamlit changes the internals it uses."""
from __future__ import annotations

import asyncio

from bench.load_ws import StreamlitSession, run_blocking
from tests.browser import AppServer

PROBE = "tests/apps/push_probe.py"


async def _pushed_run(url: str) -> tuple[list[str], tuple[str, ...], list[str]]:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    session = await StreamlitSession.open(url)
    try:
        await session.rerun()
        first = [m.body for m in session.page.of_kind("markdown")]
        while True:   # nothing more is sent: the next run is the one the server started by itself
            forward = ForwardMsg()
            forward.ParseFromString(await asyncio.wait_for(session.websocket.recv(), 30))
            kind = forward.WhichOneof("type")
            if kind == "new_session":
                fragments = tuple(forward.metadata.run.fragment_ids)
            elif kind == "delta":
                session.page.apply(forward)
            elif kind == "script_finished":
                return first, fragments, [m.body for m in session.page.of_kind("markdown")]
    finally:
        await session.close()


def test_the_server_reruns_one_fragment_of_a_session_by_itself(tmp_path):
    server = AppServer(tmp_path / "probe.duckdb", script=PROBE)
    server.start()
    try:
        first, fragments, after = run_blocking(_pushed_run(server.url))   # a browser test may hold this thread's loop
    finally:
        server.stop()
    assert first == ["outside the fragment", "outside a fragment, this_fragment() is None", "area run 1"]
    assert len(fragments) == 1, "a run of the one fragment, not of the page"
    assert after == ["outside the fragment", "outside a fragment, this_fragment() is None", "area run 2"]


def test_a_push_for_a_page_the_browser_has_left_is_not_asked_for():
    """A pushed rerun names its page; folded into the browser's own navigation it would take the candidate back
    to the room. The push goes only while the session's latest run is still on that page."""
    from streamlit.proto.ClientState_pb2 import ClientState

    from ui.runtime.fragment_push import request_if_still_on_page

    class Session:
        def __init__(self, page_script_hash):
            self.page_script_hash, self.asked = page_script_hash, []

        def request_rerun(self, state):
            self.asked.append(state.fragment_id)

    state = ClientState(fragment_id="room-part", page_script_hash="live-page", is_auto_rerun=True)
    stayed, left = Session("live-page"), Session("catalogue-page")
    assert request_if_still_on_page(stayed, state) and stayed.asked == ["room-part"]
    assert not request_if_still_on_page(left, state) and left.asked == []
