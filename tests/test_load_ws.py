"""The websocket load generator (bench/load_ws.py): sessions without a browser, against a real server.

Two sessions start the drill and lock in through one `streamlit run` on PostgreSQL; a lock-in counts only when
the page says it is locked and the store holds the row. The page model is checked on its own first.
"""
from __future__ import annotations

import re

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load_ws import Page, ProtocolError, StoreAnswers, drive, run_blocking, submit_form
from bench.stack import Stack
from drills.backends import open_store
from drills.loader import load_catalogue
from drills.schema import section_title


def _element(page: Page, path: list[int], kind: str, **fields) -> None:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    getattr(msg.delta.new_element, kind).MergeFrom(type(getattr(msg.delta.new_element, kind))(**fields))
    page.apply(msg)


def _block(page: Page, path: list[int]) -> None:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    msg.delta.add_block.SetInParent()
    page.apply(msg)


def test_the_page_reads_widgets_in_page_order_and_a_redrawn_block_starts_empty():
    page = Page()
    _block(page, [0, 1])
    _element(page, [0, 1, 0], "text_input", id="late", label="Best guess (s)", form_id="lock::late")
    _element(page, [0, 0, 2], "text_input", id="early", label="Best guess (s)", form_id="lock::early")
    _element(page, [0, 0, 3], "button", id="go", label="Lock in", form_id="lock::early", is_form_submitter=True)
    _element(page, [1, 0], "button", id="side", label="Lock in")   # the sidebar is not the page body
    assert page.widget("text_input", "Best guess (s)").id == "early"
    assert [w.id for w in submit_form(page, "lock::early", {"early": "12"})] == ["early", "go"]
    assert submit_form(page, "lock::early", {"early": "12"})[0].string_value == "12"

    _block(page, [0, 1])
    assert [w.id for w in page.of_kind("text_input")] == ["early"]
    with pytest.raises(ProtocolError, match="no button labelled 'Next →'.*Lock in"):
        page.widget("button", "Next →")


@pytest.mark.timeout(180)
def test_a_rerun_reports_every_text_box_and_select_box_on_the_page_as_a_browser_does():
    """A browser's rerun carries each text box it holds (typed into or not) and each select box's shown option, so
    the server does that work per run; the driver sends the same, with what it typed kept for later runs."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from bench.load_ws import StreamlitSession, text

    session = StreamlitSession(None, "http://127.0.0.1:1")
    page = session.page
    _element(page, [0, 0], "selectbox", id="part", label="Part", options=["1. Intro", "2. Board"], default=1)
    _element(page, [0, 1], "text_input", id="a", label="Best guess (s)", form_id="lock::a")
    _element(page, [0, 2], "button", id="a-go", label="Lock in", form_id="lock::a", is_form_submitter=True)
    _element(page, [0, 3], "text_input", id="b", label="Best guess (s)", form_id="lock::b", default="7")
    _element(page, [1, 0], "text_input", id="side", label="Resume code", value="XY", set_value=True)

    def sent(widgets) -> dict[str, object]:
        msg = BackMsg()
        msg.ParseFromString(session._rerun_message(widgets))
        return {w.id: getattr(w, w.WhichOneof("value")) for w in msg.rerun_script.widget_states.widgets}

    assert sent(submit_form(page, "lock::a", {"a": "12"})) == {"a": "12", "a-go": True, "part": "2. Board", "b": "7",
                                                               "side": "XY"}
    assert sent([text(page.widget("text_input", "Best guess (s)"), "")])["a"] == ""
    assert sent([])["a"] == "", "what was typed last is what the frontend still shows"
    assert "a-go" not in sent([]), "a button is a trigger: sent only when pressed"
    # A run redraws the picker with its declared default (the first part): the frontend still shows the part the
    # candidate is on, and reports that; only a value the server sets replaces it.
    _element(page, [0, 0], "selectbox", id="part", label="Part", options=["1. Intro", "2. Board"], default=0)
    session._hold(page.elements[(0, 0)])
    assert sent([])["part"] == "2. Board"
    _element(page, [0, 0], "selectbox", id="part", label="Part", options=["1. Intro", "2. Board"], default=0,
             raw_value="1. Intro", set_value=True)
    session._hold(page.elements[(0, 0)])
    assert sent([])["part"] == "1. Intro"


def test_two_websocket_sessions_start_and_lock_in_confirmed_on_the_page_and_stored(pg_url):
    with Stack(1, database=pg_url, proxy=False) as stack, StoreAnswers(pg_url) as stored:
        results = run_blocking(drive(stack.url, 2, 90, 0.2, stored, lockins=1))

    assert [r.error for r in results] == ["", ""]
    assert [(r.started, r.acknowledged, r.stored, len(r.latencies_s)) for r in results] == [(True, 1, 1, 1)] * 2
    store = open_store(pg_url)
    try:
        for n, result in enumerate(results):
            attempt = store.attempt_by_token(result.token)
            assert attempt.handle == f"load-{n}"
            assert [a.value for a in store.answers(attempt.id).values()] == [10.0]
    finally:
        store.close()


@pytest.mark.timeout(240)
def test_a_lock_in_is_one_run_of_its_question_and_the_skip_count_and_the_last_one_opens_the_reveal(pg_url):
    """Pressed in its fragment (as a browser sends it), a Lock in reruns that question and the skip button only,
    in one script run (one new-session message, not a second run started from the callback): the rest of the
    page stays as drawn, the count of open questions follows, and the part's last lock-in runs the whole page
    so its reveal button opens."""
    from bench.load_ws import StreamlitSession, click, lock_in, start_attempt

    def skip_count(page) -> list[str]:
        return [b.label for b in page.of_kind("button") if b.label.startswith("Skip ")]

    async def walk(url: str) -> list[tuple]:
        session = await StreamlitSession.open(url)
        try:
            await start_attempt(session, "fragments-1", timeout=60)
            catalogue, pressed, drill = session.run_deltas
            # The Start press starts the attempt before the catalogue draws: that run sends next to nothing.
            assert pressed <= 2 < drill < catalogue, f"elements per run: {session.run_deltas}"
            await session.rerun([click(session.page.widget("button", "Next →"))], timeout=60)
            seen = [(session.run_fragments, skip_count(session.page),
                     session.page.widget("button", re.compile("^Reveal:")).disabled, 1)]
            while session.page.of_kind("text_input"):
                if not any(w.label.startswith("Best guess") for w in session.page.of_kind("text_input")):
                    break
                runs = session.runs
                await lock_in(session, "12", timeout=60)
                session.page.widget("selectbox", "Part")   # drawn by the page's run, kept by the fragment's
                seen.append((session.run_fragments, skip_count(session.page),
                             session.page.widget("button", re.compile("^Reveal:")).disabled, session.runs - runs))
            runs = session.runs
            await session.rerun([click(session.page.widget("button", re.compile("^Reveal:")))], timeout=60)
            headings = [m.body for m in session.page.of_kind("markdown") if m.body.startswith("### ")]
            reveals = [b.label for b in session.page.of_kind("button") if b.label.startswith("Reveal:")]
            return seen, (session.runs - runs, headings, reveals)
        finally:
            await session.close()

    with Stack(1, database=pg_url, proxy=False) as stack:
        seen, (reveal_runs, headings, reveals) = run_blocking(walk(stack.url))

    board = load_catalogue().drills["one_tenant"].drill.part("board")
    count = len(board.questions)
    assert len(seen) == count + 1
    assert seen[0] == ((), [f"Skip {count} questions"], True, 1)
    for locked, (fragments, skip, shut, runs) in enumerate(seen[1:-1], start=1):
        left = count - locked
        assert len(fragments) == 1 and runs == 1, \
            f"lock-in {locked} took {runs} run(s), the last of {fragments or 'the whole page'}: not one fragment run"
        assert skip == [f"Skip {left} question{'s' if left > 1 else ''}"] and shut
    # The last lock-in's fragment run sees the gate open and reruns the whole page: the reveal opens, no skip left.
    assert seen[-1][:3] == ((), [], False)
    # One Reveal press is one run (recorded in the button's callback, not by a second run started from the first),
    # and that run draws the section and offers the next one, if any.
    assert reveal_runs == 1, f"one Reveal press took {reveal_runs} runs"
    assert f"### {section_title(board.reveal[0])}" in headings
    assert reveals == [f"Reveal: {section_title(section)}" for section in board.reveal[1:2]]
