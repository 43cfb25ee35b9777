"""ui/fragment_push.py against a real Streamlit server: a rerun the server asks for reaches the browser session
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
