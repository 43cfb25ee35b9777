"""Chromium: a Lock in on the board is one script run (one new-session message reaches the browser), and the
browser draws what that run sent for the skip button beside it: its count of open questions follows."""
from __future__ import annotations

import re

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from drills.loader import load_catalogue
from tests.browser import start_drill, wait_for_app

pytestmark = pytest.mark.browser


def _skip_count(page) -> str:
    page.get_by_role("button", name="Skip to the answer").click()
    confirm = page.get_by_role("button", name=re.compile(r"^Skip \d+ questions?$"))
    confirm.wait_for()
    label = confirm.inner_text().strip()
    page.keyboard.press("Escape")
    confirm.wait_for(state="hidden")
    return label


def test_a_board_lock_in_is_one_run_and_the_skip_count_follows(app_server, page):
    runs: list[tuple[str, ...]] = []

    def watch(socket) -> None:
        def received(payload) -> None:
            if isinstance(payload, (bytes, bytearray)):
                msg = ForwardMsg()
                msg.ParseFromString(bytes(payload))
                if msg.WhichOneof("type") == "new_session":
                    runs.append(tuple(msg.metadata.run.fragment_ids))
        socket.on("framereceived", received)

    page.on("websocket", watch)
    board = load_catalogue().drills["one_tenant"].drill.part("board")
    start_drill(page, app_server.url, "One Tenant Takes Everyone Down", handle="browser-one-run")
    page.get_by_role("button", name="Next →").click()
    page.get_by_label(re.compile("^Best guess")).first.wait_for()
    wait_for_app(page)
    count = len(board.questions)
    assert _skip_count(page) == f"Skip {count} questions"
    for locked in (1, 2):
        before = len(runs)
        box = page.get_by_label(re.compile("^Best guess")).first
        box.fill(f"{10 + locked}")
        box.press("Enter")
        # Wait for this lock-in's own line: the first lock-in's "Locked in." stays on the page, so waiting for a
        # success alert alone lets the second lock-in be read before its run has drawn.
        page.get_by_text(re.compile("Your guess:")).nth(locked - 1).wait_for()
        wait_for_app(page)
        assert len(runs) - before == 1 and len(runs[-1]) == 1, \
            f"lock-in {locked} took runs {runs[before:]}: not one run of one fragment"
        assert page.get_by_text(re.compile("Your guess:")).count() == locked
        assert _skip_count(page) == f"Skip {count - locked} questions"
    assert page.get_by_role("button", name=re.compile("^Reveal:")).first.is_disabled()
