"""The one seam to Streamlit's internals (ui/runtime/seam.py): each need's fallback, taken in plain mode, and the two
silent failures made visible (a skip count extended on a copy, a push that fails). The skip count and the live
room are walked on a real server in both modes."""
from __future__ import annotations

import re
import types

import pytest

from bench.load_ws import StreamlitSession, click, lock_in, run_blocking, start_attempt
from drills.loader import load_catalogue
from tests.browser import AppServer
from ui.runtime import fragment_push, seam
from ui.runtime.fragment_push import FragmentPage

MODES = {"optimised": {}, "plain": {seam.PLAIN_ENV: "1"}}


@pytest.fixture
def plain(monkeypatch):
    monkeypatch.setenv(seam.PLAIN_ENV, "1")


def test_plain_mode_is_read_from_the_environment_on_every_call(monkeypatch):
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    assert not seam.plain()
    monkeypatch.setenv(seam.PLAIN_ENV, "1")
    assert seam.plain()
    monkeypatch.setenv(seam.PLAIN_ENV, "0")
    assert not seam.plain()


def _fake_ctx(queue: list[str] | None, ids: dict[str, list[str]]):
    storage = types.SimpleNamespace(resolve_target=lambda names: [f for n in names for f in ids[n]])
    return types.SimpleNamespace(fragment_ids_this_run=queue, fragment_storage=storage, cursors={})


def test_every_seam_takes_its_documented_fallback_in_plain_mode(plain, monkeypatch):
    import streamlit as st
    from streamlit.runtime.pages_manager import PagesManager

    ctx = _fake_ctx(["question"], {"q": ["question"], "skip": ["skip-count"]})
    monkeypatch.setattr(seam, "_ctx", lambda: ctx)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", True)
    assert seam.run_key() is None and seam.fragment_run_key() is None   # nothing shared: every read is fresh
    # the skip count is owed to a page run, Streamlit's queue left alone; a fragment's own run then pays it once
    assert seam.run_fragments_alongside(("q", "skip")) and ctx.fragment_ids_this_run == ["question"]
    assert seam.page_run_owed() and not seam.page_run_owed()
    seam.run_fragments_alongside(("q", "skip"))
    with seam.page_in_frame():   # a page's run draws everything anyway: nothing owed
        assert not seam.page_run_owed()
    assert seam.PAGE_RUN_OWED not in st.session_state
    assert not seam.pages_copy_cleanly([])   # app.py's pages built every run
    assert not seam.leave_pages_directory_layout() and PagesManager.uses_pages_directory is True
    assert not seam.no_secrets_file(Exception("no secrets"))
    from streamlit.errors import StreamlitSecretNotFoundError

    assert not seam.no_secrets_file(StreamlitSecretNotFoundError("none"))   # every read of st.secrets asks again
    assert not seam.replace_theme_builder(lambda built: built, lambda: None)
    assert not seam.replace_loop_wakeups(lambda s, c: None, lambda r: None)
    assert seam.running_fragment() is None and not seam.on_session_loop("any", lambda session: None)
    assert seam.session_on_page("any", "hash") is None, "in plain mode nobody can tell: pages beat for themselves"
    assert not fragment_push.pushes_work()


def test_a_fragment_run_is_told_by_streamlit_or_else_by_the_frame(monkeypatch):
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    monkeypatch.setattr(seam, "_ctx", lambda: _fake_ctx(["question"], {}))
    assert seam.fragment_run()
    monkeypatch.setattr(seam, "_ctx", lambda: _fake_ctx(None, {}))
    assert not seam.fragment_run()
    # plain: a page's code outside app.py's frame is a fragment's own run (Streamlit runs the fragment alone)
    monkeypatch.setenv(seam.PLAIN_ENV, "1")
    monkeypatch.setattr(seam, "_ctx", lambda: _fake_ctx(["question"], {}))
    assert seam.fragment_run()
    with seam.page_in_frame():
        assert not seam.fragment_run()
    assert seam.fragment_run()
    monkeypatch.setattr(seam, "_ctx", lambda: None)   # bare Python: no script run, so no fragment's run, in either mode
    assert not seam.fragment_run()
    monkeypatch.delenv(seam.PLAIN_ENV)
    assert not seam.fragment_run()


# ---- the skip count: an extension that would not take effect is not made ------------------------------------

# The loop Streamlit's script runner runs after a fragment run's callbacks, in two versions: over the list its run
# context holds (as 1.67 does), and over a copy of it (as an upgrade might). Compiled as if in Streamlit's files.
_RUNNER = '''
def code_to_exec(ctx, callback, copy):
    fragment_ids_this_run = list(ctx.fragment_ids_this_run) if copy else ctx.fragment_ids_this_run
    extended = callback()
    return extended, list(fragment_ids_this_run or ())
'''


def _runner():
    namespace: dict = {}
    exec(compile(_RUNNER, "/site-packages/streamlit/runtime/scriptrunner/script_runner.py", "exec"), namespace)
    return namespace["code_to_exec"]


@pytest.mark.parametrize("copy", [False, True], ids=["its-own-list", "a-copy"])
def test_the_skip_count_joins_the_run_only_when_streamlit_iterates_the_list_it_extends(monkeypatch, copy):
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    ctx = _fake_ctx(["question"], {"q": ["question"], "skip": ["skip-count"]})
    monkeypatch.setattr(seam, "_ctx", lambda: ctx)
    extended, ran = _runner()(ctx, lambda: seam.run_fragments_alongside(("q", "skip")), copy)
    if copy:   # it would have reported True and left the count stale: now it says False, and the caller reruns
        assert (extended, ran) == (False, ["question"])
    else:
        assert (extended, ran) == (True, ["question", "skip-count"])


def test_the_skip_count_is_not_added_outside_a_fragment_run_of_those_fragments(monkeypatch):
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    for queue in (None, [], ["another"]):
        ctx = _fake_ctx(queue, {"q": ["question"], "skip": ["skip-count"]})
        monkeypatch.setattr(seam, "_ctx", lambda ctx=ctx: ctx)
        assert not _runner()(ctx, lambda: seam.run_fragments_alongside(("q", "skip")), False)[0]


async def _lock_ins(url: str) -> list[tuple]:
    """(fragments of the last run, the skip button's label, runs) after each Lock in of the board part."""
    session = await StreamlitSession.open(url)
    try:
        await start_attempt(session, "seam-1", timeout=60)
        await session.rerun([click(session.page.widget("button", "Next →"))], timeout=60)
        seen = []
        while any(w.label.startswith("Best guess") for w in session.page.of_kind("text_input")):
            runs = session.runs
            await lock_in(session, "12", timeout=60)
            session.page.widget("selectbox", "Part")   # drawn by the page's run, kept by the fragment's
            seen.append((session.run_fragments, [b.label for b in session.page.of_kind("button")
                                                 if b.label.startswith("Skip ")], session.runs - runs))
        return seen
    finally:
        await session.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", list(MODES))
def test_each_lock_in_redraws_the_skip_count_in_both_modes(tmp_path, mode):
    server = AppServer(tmp_path / "seam.duckdb", env=MODES[mode], secrets="")
    server.start()
    try:
        seen = run_blocking(_lock_ins(server.url))
    finally:
        server.stop()
    count = len(load_catalogue().drills["one_tenant"].drill.part("board").questions)
    assert len(seen) == count
    for locked, (fragments, skip, runs) in enumerate(seen[:-1], start=1):
        left = count - locked
        assert skip == [f"Skip {left} question{'s' if left > 1 else ''}"], (mode, locked, seen)
        if mode == "optimised":   # the count's fragment joins the Lock in's own run: one run of two fragments
            assert len(fragments) == 1 and runs == 1, (locked, seen)
        else:   # the question's run owes the count a redraw, and the page's run that follows draws it
            assert fragments == () and runs == 2, (locked, seen)
    assert seen[-1][1] == [], "the part's last lock-in opens its reveal: no skip left"


# ---- a failed push is reported ---------------------------------------------------------------------------------

PAGE = FragmentPage("session", "room-part", "live-page", "")


@pytest.fixture
def no_failure_yet(monkeypatch):
    monkeypatch.delenv(seam.PLAIN_ENV, raising=False)
    monkeypatch.setattr(fragment_push, "_failure", None)


def test_a_push_that_cannot_be_made_is_reported_and_pages_are_told_to_poll(no_failure_yet, monkeypatch):
    def changed(session_id, call):
        raise AttributeError("'Runtime' object has no attribute '_get_async_objs'")   # as an upgrade might

    monkeypatch.setattr(seam, "on_session_loop", changed)
    assert fragment_push.pushes_work()
    failures = []
    assert fragment_push.rerun(PAGE, on_failure=lambda page, error: failures.append((page, type(error)))) is False
    assert failures == [(PAGE, AttributeError)]
    assert not fragment_push.pushes_work() and isinstance(fragment_push.last_failure(), AttributeError)
    assert fragment_push.rerun(PAGE) is False   # no callback: still reported, never raised


def test_a_push_that_fails_on_the_event_loop_is_reported_there(no_failure_yet, monkeypatch):
    scheduled = []
    monkeypatch.setattr(seam, "on_session_loop", lambda session_id, call: scheduled.append(call) or True)

    class Session:
        page_script_hash = "live-page"

        def request_rerun(self, state):
            raise TypeError("request_rerun() got an unexpected keyword")

    failures = []
    assert fragment_push.rerun(PAGE, on_failure=lambda page, error: failures.append(page))
    assert fragment_push.pushes_work(), "nothing has failed until the loop runs the request"
    scheduled[0](Session())   # what the event loop does with it
    assert failures == [PAGE] and not fragment_push.pushes_work()


def test_a_push_that_goes_through_keeps_pushes_working(no_failure_yet, monkeypatch):
    scheduled = []
    monkeypatch.setattr(seam, "on_session_loop", lambda session_id, call: scheduled.append(call) or True)

    class Session:
        page_script_hash = "live-page"
        asked: list = []

        def request_rerun(self, state):
            self.asked.append((state.fragment_id, state.page_script_hash, state.is_auto_rerun))

    assert fragment_push.rerun(PAGE, on_failure=lambda page, error: pytest.fail(str(error)))
    session = Session()
    scheduled[0](session)
    assert session.asked == [("room-part", "live-page", True)] and fragment_push.pushes_work()


# ---- the live room in both modes, on a real server ---------------------------------------------------------

@pytest.mark.timeout(300)
@pytest.mark.parametrize("mode", list(MODES))
def test_a_close_reaches_a_seat_in_both_modes(tmp_path, pg_url, mode):
    """On PostgreSQL the process's listener pushes a Close to the seat's room part, which redraws alone; in plain
    mode nothing is pushed, and the seat's own tick finds the Close and reruns the page (no fragment to name)."""
    from tests.test_live_push import _close_seen

    server = AppServer(tmp_path / "server.duckdb", env={"FAULTLINES_DB": pg_url, **MODES[mode]}, secrets="")
    server.start()
    try:
        fragments, asked, shown = run_blocking(_close_seen(server.url, pg_url, timers=True))
    finally:
        server.stop()
    assert fragments != ("never shown",), f"the Close never reached the seat ({mode}): {shown}"
    if mode == "optimised":
        assert len(fragments) == 1, f"one fragment's run, not the page's: {fragments} ({shown})"
        assert asked == 0, "the seat never polled: the process's listener reran its room part"
    else:
        assert asked >= 1, "in plain mode nothing is pushed: the seat's tick asked for the redraw"


# ---- the suite's plain pass ---------------------------------------------------------------------------------

def _uses_apptest_directly():
    from streamlit.testing.v1 import AppTest

    return AppTest


def test_the_plain_pass_keeps_the_apptest_tests_and_leaves_the_walks():
    from tests.plain_mode import drives_apptest

    def item(fixtures, function=lambda: None):
        return types.SimpleNamespace(fixturenames=fixtures, function=function)

    assert drives_apptest(item(["app_test", "db_path"]))
    assert drives_apptest(item(["tmp_path"], _uses_apptest_directly))
    assert not drives_apptest(item(["tmp_path"]))
    assert not drives_apptest(item(["app_test", "page"])), "a browser walk is not run twice"
    assert not drives_apptest(item(["app_server"], _uses_apptest_directly))
