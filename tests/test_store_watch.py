"""The process's watch on the store (ui/store_watch.py): a store that stops answering is told to every open page.

Unit tests drive StoreWatch with an injected store, clock and push; the probe's own test hangs a real PostgreSQL
(SIGSTOP); the AppTest ones show a page run that finds the store known down drawing the outage page without
asking the store, a press refused at once, and the drill back once a probe answers.
"""
from __future__ import annotations

import psycopg
import pytest

from tests.test_faults import hung_pg  # noqa: F401 - fixture: a PostgreSQL of the test's own, to SIGSTOP
from ui.faults import OutageSpan
from ui.runtime.fragment_push import FragmentPage
from ui.store_watch import StoreWatch

LOCK = "Lock in"
OUTAGE_TITLE = "Saving is paused: the attempt store is unreachable"   # ui/faults.py's words, as a reader sees them


class FakeStore:
    path = "postgresql://watch-test/db"

    def __init__(self):
        self.answering = True
        self.closed = False
        self.given_back: list[tuple[float, float]] = []

    def probe(self) -> None:
        if self.closed:
            raise RuntimeError("the store was closed")
        if not self.answering:
            raise psycopg.OperationalError("no answer within the deadline")

    def give_back_outage(self, down_at: float, up_at: float) -> int:
        self.given_back.append((down_at, up_at))
        return 1


class Clock:
    def __init__(self, at: float = 1000.0):
        self.at = at

    def __call__(self) -> float:
        return self.at


def _page(n: int) -> FragmentPage:
    return FragmentPage(f"session-{n}", f"clock-{n}", "drill-hash", "attempt=t")


@pytest.fixture
def watched():
    store, clock, pushed = FakeStore(), Clock(), []
    alive = {"session-0", "session-1", "session-2"}

    def push(page: FragmentPage) -> bool:
        pushed.append(page.session_id)
        return page.session_id in alive

    watch = StoreWatch(store, push=push, clock=clock, outage=OutageSpan())
    for n in range(3):
        watch.watch(_page(n))
    return watch, store, clock, pushed, alive


def test_a_probe_that_fails_pushes_every_page_watching_and_marks_the_store_down(watched):
    watch, store, clock, pushed, _ = watched
    assert watch.check() and watch.down is None and pushed == [], "an answering store pushes nothing"
    clock.at += 1.0
    store.answering = False
    assert watch.check()
    assert isinstance(watch.down, psycopg.OperationalError)
    assert sorted(pushed) == ["session-0", "session-1", "session-2"], "every page, once"
    assert watch.down.call_began == 1000.0, "the outage counts from the last probe the store answered"


def test_each_page_is_pushed_three_times_a_probe_apart_then_left_alone(watched):
    watch, store, clock, pushed, _ = watched
    store.answering = False
    for _ in range(5):
        watch.check()
        clock.at += 1.0
    assert sorted(pushed) == sorted(["session-0", "session-1", "session-2"] * 3)


def test_a_page_whose_session_is_gone_is_forgotten(watched):
    watch, store, clock, pushed, alive = watched
    alive.discard("session-1")
    store.answering = False
    watch.check()
    pushed.clear()
    watch.check()
    assert sorted(pushed) == ["session-0", "session-2"]


def test_the_store_answering_again_gives_the_outage_back_once_and_the_next_outage_pushes_afresh(watched):
    watch, store, clock, pushed, _ = watched
    watch.check()            # answered at 1000
    store.answering = False
    clock.at = 1001.0
    watch.check()
    clock.at = 1002.0
    watch.check()
    store.answering = True
    clock.at = 1003.0
    watch.check()
    assert watch.down is None
    assert store.given_back == [(1000.0, 1003.0)], "from the last answer before it to the first after"
    clock.at = 1004.0
    watch.check()
    assert store.given_back == [(1000.0, 1003.0)], "given back once"
    pushed.clear()
    store.answering = False
    watch.check()
    assert sorted(pushed) == ["session-0", "session-1", "session-2"], "a new outage is told again"


def test_outage_pages_waiting_are_pushed_once_when_the_store_answers_again(watched):
    watch, store, clock, pushed, _ = watched
    store.answering = False
    watch.check()
    waiting = FragmentPage("session-0", "outage-check-0", "drill-hash", "attempt=t")
    watch.watch(waiting, until_back=True)
    seen = []
    watch._push = lambda page: seen.append(page) or True
    watch.check()
    assert waiting not in seen, "not while the store is still down"
    store.answering = True
    watch.check()
    assert seen.count(waiting) == 1, "its check runs at once when the store answers"
    watch.check()
    assert seen.count(waiting) == 1, "and only once"


def test_a_page_that_registers_again_is_pushed_its_newest_fragment(watched):
    watch, store, clock, pushed, _ = watched
    newer = FragmentPage("session-0", "clock-0-redrawn", "drill-hash", "attempt=t")
    seen = []
    watch._push = lambda page: seen.append(page) or True
    watch.watch(newer)
    store.answering = False
    watch.check()
    assert newer in seen and _page(0) not in seen


def test_the_watch_ends_when_its_store_is_closed(watched):
    watch, store, *_ = watched
    store.closed = True
    assert watch.check() is False
    watch.run(every_s=0.0)   # returns at once: the loop ends with the closed store


# -- the probe against a real server that hangs ----------------------------------------------------------------
def test_the_probe_of_a_hung_postgresql_fails_on_its_own_deadline_and_answers_again_after(hung_pg):
    from concurrent.futures import ThreadPoolExecutor

    from drills.store.pg_pool import DEADLINES, StoreProbe, bounded_conninfo

    probe = StoreProbe(bounded_conninfo(hung_pg.url))
    try:
        probe()
        cuts = DEADLINES.cuts
        hung_pg.freeze()
        with ThreadPoolExecutor(1) as pool:   # the bound only keeps a broken build from hanging the suite
            failed = pool.submit(probe).exception(timeout=120)
        assert isinstance(failed, psycopg.OperationalError), failed
        assert "did not answer within 2.5 s" in str(failed), "the page's detail says what happened"
        assert DEADLINES.cuts > cuts, "the probe's connection was cut by the client: the server never answered"
        with ThreadPoolExecutor(1) as pool:
            again = pool.submit(probe).exception(timeout=120)
        assert isinstance(again, psycopg.OperationalError), "a fresh connection to a hung server fails too"
        hung_pg.thaw()
        probe()   # a fresh connection, at once
    finally:
        hung_pg.thaw()
        probe.close()
    with pytest.raises(RuntimeError):
        probe()


# -- the pages --------------------------------------------------------------------------------------------------
def test_a_page_run_while_the_store_is_known_down_is_the_outage_page_and_a_press_is_refused_at_once(
        app_test, monkeypatch, pg_url):
    from ui.context import get_store

    monkeypatch.setenv("FAULTLINES_DB", pg_url)
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("grace")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    at.text_input(key="lock::job_duration::value").input("32")
    from ui import store_watch

    store = get_store()
    assert store_watch.watching(store) is not None, "a PostgreSQL store opened by the app is watched"
    # A watch of the test's own in its place, with no thread: what it knows is what the test sets.
    watch = StoreWatch(store, push=lambda page: True, outage=OutageSpan())
    monkeypatch.setitem(store_watch._WATCHES, id(store), watch)
    asks = []
    for name in ("check_writes", "lock_in"):
        real = getattr(type(store), name)
        monkeypatch.setattr(type(store), name, lambda self, *a, _real=real, _name=name, **k: (asks.append(_name),
                                                                                              _real(self, *a, **k))[1])
    watch.down = psycopg.OperationalError("the probe went unanswered")
    next(b for b in at.button if b.label == LOCK).click().run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == [OUTAGE_TITLE]
    assert "was not confirmed" in at.error[0].value
    assert asks == [], "the press and the page asked the store nothing: the watch had found it not answering"
    at.run()
    assert [t.value for t in at.title] == [OUTAGE_TITLE] and asks == [], "still down: still not asked"
    watch.down = None   # a probe answered
    at.run()
    assert [t.value for t in at.title] != [OUTAGE_TITLE], "the drill is back"
    assert asks == ["check_writes"], "the page checked a write itself once the watch found the store answering"
    assert at.text_input(key="lock::job_duration::value").value == "32"
    attempt = store.attempt_by_token(at.query_params["attempt"])
    assert store.answers(attempt.id) == {}, "the refused press stored nothing"
