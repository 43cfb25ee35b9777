"""After a move, each candidate page redraws the room's part alone, and on PostgreSQL the server starts that
redraw itself; after a Close every page shares one room and one strip per process, with its own guess marked.

The server test runs `streamlit run app.py` on PostgreSQL (DuckDB lets one process write, so the test could not
move the room beside a server) and a bench.bench_live_ws seat speaking the browser's websocket protocol; the
instructor's moves go through the store as the console's buttons do.
"""
from __future__ import annotations

import asyncio

import pytest

from bench.load_ws import run_blocking
from drills import live
from drills.store.live import CLOSE, NEXT
from drills.loader import load_catalogue
from drills.scope import ScopedDrills
from drills.store import AttemptStore
from tests.test_live import ANSWERS, SEATS, _graders
from tests.test_live_pages import DRILL

QUESTION = "jobs_in_flight"
BUDGET_S = 60.0   # what one page may take to show one move on a loaded machine: a bound, not a figure


@pytest.fixture(scope="module")
def loaded():
    return ScopedDrills(load_catalogue().drills)[DRILL]


# -- the room's pages in one process (ui.live.push) -------------------------------------------------------------
def test_a_move_reruns_each_page_still_drawing_an_older_step_once_and_forgets_a_page_gone():
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    asked, gone = [], {"s3"}
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or page.session_id not in gone)
    for session_id, step in (("s1", 5), ("s2", 5), ("s3", 5), ("s4", 6)):
        pages.drew(7, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), step)
    pages.drew(7, None, 5)   # a run outside a server's fragment (AppTest): nothing to push to
    pages.moved(8, (6, 3, 0))   # another room
    assert asked == []
    pages.moved(7, (6, 3, 0))
    assert asked == ["s1", "s2"], "two at a time"
    for session_id in ("s1", "s2"):   # each pushed run draws the move, and the next page is pushed
        _ran(pages, 7, session_id, 6)
    assert asked == ["s1", "s2", "s3"], "s4 drew step 6 already"
    assert pages.pages(7) == {"s1": 6, "s2": 6, "s4": 6}, "s3's browser left: forgotten"
    pages.moved(7, (6, 4, 1))   # a lock-in's notification at the same step asks nobody again
    assert asked == ["s1", "s2", "s3"]


def _ran(pages, room: int, session_id: str, step: int) -> None:
    """What a run of a page's room part tells RoomPages: it drew `step` (at its start), then it ended."""
    from ui.runtime.fragment_push import FragmentPage

    page = FragmentPage(session_id, f"fragment-{session_id}", "hash", "")
    pages.drew(room, page, step)
    pages.finished(room, page)


def test_a_move_is_pushed_to_two_pages_at_a_time_each_next_one_as_a_pushed_run_ends():
    """A few hundred pages pushed at once draw together and each shows the move only when nearly all have: the
    process pushes two, and the next as each pushed run ends. A page waiting for its turn counts as on its way
    (its tick leaves it alone), one that draws the move by itself meanwhile is not pushed, and a pushed run
    that never ends holds its turn for a second at most."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, asked = FakeClock(0.0), []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True, clock=clock)
    for n in range(1, 7):
        pages.drew(7, FragmentPage(f"s{n}", f"fragment-s{n}", "hash", ""), 5)
    pages.moved(7, (6, 6, 0))
    assert asked == ["s1", "s2"]
    assert all(pages.in_flight(7, f"s{n}") for n in range(1, 7)) and not pages.settled(7)
    _ran(pages, 7, "s1", 6)
    assert asked == ["s1", "s2", "s3"]
    _ran(pages, 7, "s4", 6)   # s4's own tick drew the move before its turn: never pushed
    assert not pages.in_flight(7, "s4")
    clock.t = 0.5
    _ran(pages, 7, "s3", 6)
    assert asked == ["s1", "s2", "s3", "s5"]
    clock.t = 1.0   # s2's run never came: its turn is free after a second, and s2 itself is pushed again
    pages.retry()
    assert asked == ["s1", "s2", "s3", "s5", "s2", "s6"]
    for session_id in ("s2", "s5", "s6"):
        _ran(pages, 7, session_id, 6)
    assert pages.settled(7) and pages.pages(7) == {f"s{n}": 6 for n in range(1, 7)}


def test_a_move_heard_while_a_page_registers_is_drawn_or_pushed_never_lost():
    """The listener hears a Close between a page's read of the room's step and its registration: it pushes
    nothing to that page (not registered yet), and the page's shared row for the step it read is the open
    question's. The page must draw the close, else it shows the open question until a timer finds out."""
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    asked = []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True)
    page = FragmentPage("s1", "fragment-s1", "hash", "")
    heard = [(5, 2, 0)]   # what the process's listener last read of room 7

    def read_then_close_lands() -> tuple:
        seen = heard[-1]
        if len(heard) == 1:   # the Close, heard right after this page read step 5
            heard.append((6, 2, 1))
            pages.moved(7, heard[-1])
        return seen

    assert pages.drawing(7, page, read_then_close_lands) == (6, 2, 1), "the page draws the move it missed"
    assert pages.pages(7) == {"s1": 6} and asked == []

    pages.moved(7, (8, 2, 1))   # a later move finds the page registered at the step it drew, and pushes it
    assert asked == ["s1"]
    assert pages.drawing(7, page, lambda: (8, 2, 1)) == (8, 2, 1) and pages.pages(7) == {"s1": 8}


def test_a_page_pushed_for_one_move_that_hears_the_next_before_drawing_is_pushed_for_that_one_too():
    """A second move lands while a page's push for the first is on its way: the page is pushed again for the
    second (never left asked for with no push coming, which its tick would wait on for good)."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, asked = FakeClock(0.0), []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True, clock=clock)
    pages.drew(7, FragmentPage("s1", "fragment-s1", "hash", ""), 5)
    pages.moved(7, (6, 1, 0))
    assert asked == ["s1"]
    pages.moved(7, (7, 1, 0))   # its run for step 6 has not started
    assert asked == ["s1", "s1"], "pushed for step 7 as well"
    _ran(pages, 7, "s1", 6)   # the run drew step 6 only
    assert pages.in_flight(7, "s1")
    clock.t = 1.0
    assert pages.retry() == 1 and asked == ["s1", "s1", "s1"], "and pushed again a second later"
    _ran(pages, 7, "s1", 7)
    assert pages.settled(7)


def test_a_push_not_drawn_within_a_second_is_pushed_each_second_and_then_left_to_the_pages_tick():
    """A pushed run the server drops (or one that drew a row older than the move) leaves a page on the old step:
    the listener's once-a-second check pushes it again each second, five pushes in all, then leaves it to the
    page's own tick (a CI run saw a seat whose two pushes were both lost under load)."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, asked = FakeClock(0.0), []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True, clock=clock)
    for session_id in ("s1", "s2"):
        pages.drew(7, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), 5)
    pages.moved(7, (6, 2, 0))
    assert sorted(asked) == ["s1", "s2"] and pages.in_flight(7, "s1")
    pages.drew(7, FragmentPage("s2", "fragment-s2", "hash", ""), 6)   # s2's run drew the move; s1's never came
    assert not pages.in_flight(7, "s2")
    clock.t = 0.9
    assert pages.retry() == 0, "under a second: still on its way"
    for second in (1.0, 2.0, 3.0, 4.0):
        clock.t = second
        assert pages.retry() == 1 and asked[-1] == "s1", f"pushed again at {second:g} s"
        clock.t = second + 0.5
        assert pages.retry() == 0, "the next try is a second later"
    assert asked.count("s1") == 5
    clock.t = 5.0
    assert pages.retry() == 0 and not pages.in_flight(7, "s1"), "five pushes: its own tick finds it and polls"
    assert not pages.lost("s1"), "a slow run is not a failed push"


def test_a_room_is_settled_once_every_page_pushed_its_move_drew_it_or_was_given_up_on():
    """The seat's tick draws a move once more only once the room is settled here: a second draw while pages of
    the room are still drawing the move competes with theirs."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock = FakeClock(0.0)
    pages = RoomPages(rerun=lambda page: True, clock=clock)
    for session_id in ("s1", "s2"):
        pages.drew(7, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), 5)
    pages.drew(8, FragmentPage("s9", "fragment-s9", "hash", ""), 1)
    assert pages.settled(7) and pages.settled(8), "nothing pushed yet"
    pages.moved(7, (6, 2, 0))
    assert not pages.settled(7) and pages.settled(8), "room 7's pages are drawing the move; room 8 has none"
    _ran(pages, 7, "s1", 6)
    assert not pages.settled(7), "s2 has yet to draw it"
    _ran(pages, 7, "s2", 6)
    assert pages.settled(7)
    pages.moved(7, (7, 2, 0))
    for second in range(1, 6):   # s1 and s2 never draw step 7: five pushes each, then left to their ticks
        clock.t = float(second)
        pages.retry()
    assert pages.settled(7), "pages given up on no longer hold the room unsettled"


def test_the_process_beats_each_room_once_every_5_s_for_the_seats_whose_browsers_are_on_its_page():
    """The process keeps its seats present (the store's heartbeat, one statement a room) while their browsers are
    connected and on the room's page, so the pages need not tick to be present; a page gone or moved elsewhere is
    forgotten, and one nobody can tell about (no server) is left to beat for itself."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, beats = FakeClock(100.0), []
    where = {"s1": True, "s2": True, "s3": False, "s4": None}   # s3 left the page, s4 without a server
    pages = RoomPages(rerun=lambda page: True, clock=clock, on_page=lambda page: where[page.session_id])
    for n, (room, session_id) in enumerate([(7, "s1"), (7, "s2"), (7, "s3"), (8, "s4")], 1):
        pages.seated(room, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), 100 + n)
    pages.beat(lambda room, candidates: beats.append((room, sorted(candidates))))
    assert beats == [(7, [101, 102])], "one beat for room 7's two seats on its page; none for s3 or s4"
    assert pages.beating(7, "s1") and not pages.beating(7, "s3") and not pages.beating(8, "s4")
    clock.t = 104.9
    pages.beat(lambda room, candidates: beats.append((room, sorted(candidates))))
    assert len(beats) == 1, "the next beat is 5 s after the last"
    where["s2"] = False   # its browser closed
    clock.t = 105.0
    pages.beat(lambda room, candidates: beats.append((room, sorted(candidates))))
    assert beats[-1] == (7, [101]) and not pages.beating(7, "s2")
    clock.t = 111.6   # no beat since 105 (the listener stalled): s1's own tick beats from now on
    assert not pages.beating(7, "s1")


def test_a_beat_the_store_refused_is_tried_again_the_next_second():
    """The seats count as present for 15 s after their last beat, and the pages tick only every 30 s: a beat
    that fails (a pool timeout while a whole room draws) is sent again on the listener's next second, not 5 s
    later, so a failure of a few seconds leaves no seat without a beat for 15 s."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, beats, failing = FakeClock(100.0), [], {105.0, 106.0, 107.0}

    def heartbeats(room, candidates):
        if clock.t in failing:
            raise TimeoutError("couldn't get a connection after 4.00 sec")
        beats.append(clock.t)

    pages = RoomPages(rerun=lambda page: True, clock=clock, on_page=lambda page: True)
    pages.seated(7, FragmentPage("s1", "fragment-s1", "hash", ""), 101)
    for second in range(100, 121):
        clock.t = float(second)
        try:
            pages.beat(heartbeats)
        except TimeoutError:
            pass   # the listener logs it and goes on
    assert beats == [100.0, 108.0, 113.0, 118.0]
    assert max(b - a for a, b in zip(beats, beats[1:])) < 15.0


def test_a_listener_that_drops_pushes_every_page_once_so_each_polls_and_beats_for_itself():
    """While the listener is away no move is heard and nobody beats for the seats, and a page's own tick is 30 s
    off: every page is pushed once (two at a time, as a move), never again, and the beats stop counting."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, asked = FakeClock(0.0), []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True, clock=clock,
                      on_page=lambda page: True)
    for room, session_id, step in ((7, "s1", 5), (7, "s2", 5), (7, "s3", 5), (8, "s4", 2)):
        page = FragmentPage(session_id, f"fragment-{session_id}", "hash", "")
        pages.drew(room, page, step)
        pages.seated(room, page, 100)
    pages.beat(lambda room, candidates: None)
    assert pages.beating(7, "s1")
    pages.dropped()
    assert asked == ["s1", "s2"] and not pages.beating(7, "s1") and not pages.beating(8, "s4")
    for session_id, room, step in (("s1", 7, 5), ("s2", 7, 5), ("s3", 7, 5)):
        _ran(pages, room, session_id, step)
    assert asked == ["s1", "s2", "s3", "s4"]
    for second in range(1, 6):   # s4's run never came: it is not pushed again
        clock.t = float(second)
        pages.retry()
    assert asked == ["s1", "s2", "s3", "s4"] and pages.settled(7) and pages.settled(8)


def test_a_pushed_move_is_drawn_once_more_2_s_after_the_rooms_pages_here_have_drawn_it():
    """A run the server finished can still fail to reach its browser: each page that drew a pushed move is pushed
    once more 2 s after its draw, once no page of its room here is still drawing the move (a second draw then
    would slow theirs), and only once. A page that drew the move in its own run is not, and a recheck waiting
    when the next move comes is that move's push."""
    from tests.clock import FakeClock
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    clock, asked = FakeClock(0.0), []
    pages = RoomPages(rerun=lambda page: asked.append(page.session_id) or True, clock=clock)
    for session_id in ("s1", "s2", "s3"):
        pages.drew(7, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), 5)
    pages.moved(7, (6, 3, 0))
    assert asked == ["s1", "s2"]
    _ran(pages, 7, "s3", 6)   # s3's own tick drew it before its turn
    _ran(pages, 7, "s1", 6)   # at 0 s
    clock.t = 2.0
    pages.retry()   # s2's push never drew: pushed again; the room is not settled, so s1 waits
    assert asked == ["s1", "s2", "s2"]
    clock.t = 2.5
    _ran(pages, 7, "s2", 6)
    pages.retry()
    assert asked == ["s1", "s2", "s2", "s1"], "settled: s1's draw is 2.5 s old; s2's only now"
    _ran(pages, 7, "s1", 6)
    clock.t = 4.5
    pages.retry()
    assert asked == ["s1", "s2", "s2", "s1", "s2"]
    _ran(pages, 7, "s2", 6)
    for second in (6.0, 8.0, 10.0):
        clock.t = second
        pages.retry()
    assert asked == ["s1", "s2", "s2", "s1", "s2"], "once each, and never for s3"
    clock.t = 20.0
    pages.moved(7, (7, 3, 0))
    for session_id in ("s1", "s2", "s3"):   # each pushed, and drawn, in turn
        _ran(pages, 7, session_id, 7)
    clock.t = 21.0
    pages.moved(7, (8, 3, 0))   # the step-7 rechecks were due at 22 s: the step-8 pushes draw afresh instead
    for session_id in ("s1", "s2", "s3"):
        _ran(pages, 7, session_id, 8)
    before = len(asked)
    clock.t = 22.9
    pages.retry()
    assert len(asked) == before, "nothing due yet: step 7's rechecks went with its draws"
    clock.t = 23.0
    pages.retry()
    assert sorted(asked[before:]) == ["s1", "s2"], "step 8's, two at a time"


def test_a_push_that_fails_outright_marks_its_page_lost_and_the_others_are_still_pushed():
    from ui.runtime.fragment_push import FragmentPage
    from ui.live.push import RoomPages

    asked = []

    def rerun(page):
        asked.append(page.session_id)
        if page.session_id == "s1":
            raise AttributeError("Streamlit moved what the push uses")
        return True

    pages = RoomPages(rerun=rerun)
    for session_id in ("s1", "s2", "s3"):
        pages.drew(7, FragmentPage(session_id, f"fragment-{session_id}", "hash", ""), 5)
    pages.moved(7, (6, 3, 0))
    assert sorted(asked) == ["s1", "s2", "s3"], "one broken push stops no other page's"
    assert pages.lost("s1") and not pages.lost("s2")
    pages.lose("s3")
    assert pages.lost("s3")


# -- one room for every viewer ------------------------------------------------------------------------------------
def test_a_room_made_for_nobody_marks_each_viewers_own_guess_and_option_as_numeric_room_would(loaded):
    question, choice = loaded.drill.question(QUESTION), loaded.drill.question("b2_breaker_at_30s")
    nobody = live.numeric_room(question, "board", SEATS, _graders(loaded), ANSWERS, own_attempt=None, until=20.0)
    for viewer in (101, 102, 103):
        mine = live.for_viewer(nobody, ANSWERS, viewer, until=20.0)
        theirs = live.numeric_room(question, "board", SEATS, _graders(loaded), ANSWERS, own_attempt=viewer, until=20.0)
        assert mine == theirs
    assert live.for_viewer(nobody, ANSWERS, 104, until=20.0) == nobody, "di's late guess is not counted"
    shares = live.choice_room(choice, SEATS, ANSWERS, own_attempt=None, until=None)
    assert live.for_viewer(shares, ANSWERS, 103, until=None) == live.choice_room(choice, SEATS, ANSWERS, own_attempt=103,
                                                                               until=None)


def test_after_a_close_two_seats_share_one_report_and_strip_and_each_sees_its_own_guess(db_path, loaded):
    from ui.live import report
    from ui.live.figures import numeric_figure

    store = AttemptStore(db_path)
    try:
        session = store.start_live_session("night", DRILL, "prof")
        questions = live.questions_in_order(loaded)
        session = store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="p")
        seats = [store.live_join(session.id, store.ensure_candidate(h, "night"), 600) for h in ("ana", "bo", "cy")]
        for seat, value in zip(seats, (150, 200, 150)):
            store.lock_answer(seat.attempt_id, QUESTION, "board", "numeric", value=value, low=value - 10,
                              high=value + 10)
        closed = store.live_move(session.id, CLOSE, seen_version=session.version, questions=questions, actor="p")
        question = loaded.drill.question(QUESTION)
        first = report.closed_report(store, closed, 3, question, loaded)
        assert report.closed_report(store, closed, 3, question, loaded) is first, "built once per process"
        figures = {}
        for seat in seats:
            room = live.for_viewer(first.room, first.answers, seat.attempt_id, until=first.until)
            figures[seat.handle] = numeric_figure(room, show_truth=True, strip=first.strip).to_dict()
    finally:
        store.close()
    own = {h: [t for t in f["data"] if t["name"] == "your guess"] for h, f in figures.items()}
    assert {h: (t[0]["x"], t[0]["y"]) for h, t in own.items()} == {"ana": ([150], [1]), "bo": ([200], [3]),
                                                                    "cy": ([150], [1])}, \
        "equal guesses look alike: the first of them is cy's too"
    assert all(f["layout"] == figures["ana"]["layout"] for f in figures.values()), "one strip: the same layout"
    assert figures["ana"]["layout"]["annotations"][0]["text"] == "truth 160 jobs"
    assert all(sorted(x for t in f["data"] for x in t["x"]) == [150, 150, 200] for f in figures.values())


def test_the_strip_splits_the_rooms_rows_into_the_viewers_own_and_the_rest_keeping_their_order():
    """numeric_figure picks each page's own rows out of the shared strip in slices: checked against a plain
    row-by-row split over rooms of every shape, none, one or several own rows, at the ends too."""
    import random
    from types import SimpleNamespace

    from ui.live.figures import Strip, numeric_figure

    rng = random.Random(38)
    for n in [1, 2, 3, *(rng.randint(1, 60) for _ in range(200))]:
        own = [rng.random() < 0.15 for _ in range(n)]
        strip = Strip(x=tuple(rng.random() for _ in range(n)), y=tuple(range(1, n + 1)),
                      plus=tuple(rng.random() for _ in range(n)), minus=tuple(rng.random() for _ in range(n)),
                      hover=tuple(f"row {i}" for i in range(n)), layout={"height": 220})
        room = SimpleNamespace(guesses=[SimpleNamespace(own=o) for o in own])
        data = numeric_figure(room, show_truth=True, strip=strip).to_dict()["data"]
        expected = [[[column[i] for i in range(n) if own[i] == mine] for column in
                     (strip.x, strip.y, strip.plus, strip.minus, strip.hover)]
                    for mine in (False, True) if any(o == mine for o in own)]
        assert [[t["x"], t["y"], t["error_x"]["array"], t["error_x"]["arrayminus"], t["hovertext"]]
                for t in data] == expected, own
        assert [t["name"] for t in data] == [name for mine, name in ((False, "the room's guesses"),
                                                                     (True, "your guess")) if mine in own]


# -- a real server: the room's part redraws alone -----------------------------------------------------------------
async def _listening(database: str) -> None:
    """Until the server's LISTEN connection is up: a move made before it would reach no page that never ticks."""
    import psycopg

    for _ in range(int(BUDGET_S / 0.1)):   # a bound on the wait, not a figure
        with psycopg.connect(database, autocommit=True) as conn:
            if conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            "AND query ILIKE 'LISTEN %'").fetchone()[0]:
                return
        await asyncio.sleep(0.1)
    raise AssertionError("the server never listened")


async def _locked_in_an_open_question(store, seat, questions, *, listens: bool = True):
    """A session in class night with `seat` joined, its first question open and locked in by the seat, and a
    second seat present and not locking in, so only the instructor's Close ends the question. The open step.
    `listens`: the server pushes moves, so the question is opened once its listener is up."""
    session = store.start_live_session("night", DRILL, "prof")
    await seat.join("night")
    if listens:
        await _listening(store.path)
    opened = store.live_move(session.id, NEXT, seen_version=store.live_session(session.id).version,
                             questions=questions, actor="prof")
    found = await asyncio.wait_for(seat.follow_until(lambda x: any(
        w.label.startswith("Best guess") for w in x.page.of_kind("text_input")), asyncio.Event()), BUDGET_S)
    assert found is not None
    store.live_join(session.id, store.ensure_candidate("bo", "night"), 600)
    await seat.lock_in("150")
    return opened


async def _close_seen(url: str, database: str, *, timers: bool) -> tuple[tuple[str, ...], int, str]:
    """A seat joins, the question opens, it locks in, the instructor closes: (the fragments the run that drew
    the room's answers ran alone, the run_every reruns the seat asked for after the Close, what it showed)."""
    from bench.bench_live_ws import Seat, _shows
    from drills.backends import open_store

    store = open_store(database)
    loaded = ScopedDrills(load_catalogue().drills)[DRILL]
    questions = live.questions_in_order(loaded)
    seat = Seat(url, 1, timers=timers)
    try:
        opened = await _locked_in_an_open_question(store, seat, questions)
        stop = asyncio.Event()
        seat.asked = 0
        store.live_move(opened.id, CLOSE, seen_version=opened.version, questions=questions, actor="prof")
        found = await asyncio.wait_for(seat.follow_until(lambda x: _shows(x, "1 guess of 2"), stop), BUDGET_S)
        shown = " | ".join(m.body[:50] for m in seat.session.page.of_kind("markdown"))
        return (seat.run_fragments if found else ("never shown",)), seat.asked, shown
    finally:
        if seat.session is not None:
            await seat.session.close()
        store.close()


async def _close_after_a_lost_draw(url: str, database: str) -> tuple[list[tuple[str, ...]], int, bool]:
    """A seat that never ticks, whose browser loses every element of the first run after the Close, as a pushed
    run the server finished but never delivered would: (the runs after the Close up to the one that drew the
    room's answers, the tick runs it asked for, whether one did)."""
    import time

    from bench.bench_live_ws import Seat, _shows
    from drills.backends import open_store

    class LosesOneDraw(Seat):
        armed = False

        def _read(self, raw: bytes) -> bool:
            if self.armed:
                from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

                forward = ForwardMsg()
                forward.ParseFromString(raw)
                if forward.WhichOneof("type") == "delta":
                    return False   # lost on the way
                if forward.WhichOneof("type") == "script_finished":
                    self.armed = False
            return super()._read(raw)

    store = open_store(database)
    questions = live.questions_in_order(ScopedDrills(load_catalogue().drills)[DRILL])
    seat = LosesOneDraw(url, 1, timers=False)
    try:
        opened = await _locked_in_an_open_question(store, seat, questions)
        seat.armed, seat.asked = True, 0
        closed = time.monotonic()
        store.live_move(opened.id, CLOSE, seen_version=opened.version, questions=questions, actor="prof")
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(BUDGET_S, stop.set)
        found = await seat.follow_until(lambda x: _shows(x, "1 guess of 2"), stop)
        return [fragments for at, fragments, _ in seat.runs if at >= closed], seat.asked, found is not None
    finally:
        if seat.session is not None:
            await seat.session.close()
        store.close()


def test_on_postgresql_a_pushed_close_lost_on_the_way_is_drawn_again_by_the_server(tmp_path, pg_url):
    """The server pushed the Close and drew it, but the browser never got the elements. Nothing on the server can
    see that, so the process pushes each pushed move once more 2 s after it was drawn: the page shows the Close
    though it never asks for a run of its own."""
    server = _serve(tmp_path, pg_url)
    try:
        runs, asked, shown = run_blocking(_close_after_a_lost_draw(server.url, pg_url))
    finally:
        server.stop()
    assert shown, f"the page never drew the Close after losing its pushed draw: runs {runs}"
    assert asked == 0 and len(runs) == 2 and all(len(r) == 1 for r in runs), \
        f"the lost pushed run, then the server's one more: {runs}"


async def _listener_dropped(url: str, database: str) -> tuple[list[float], list[float], list[float], int]:
    """A seat that does not tick sits in a room; then the process's LISTEN connection is cut: (its timers before,
    its timers once a run it did not ask for changed them, its timers once its ticks found the listener back,
    how many listener connections were cut)."""
    import psycopg

    from bench.bench_live_ws import Seat
    from drills.backends import open_store

    store = open_store(database)
    questions = live.questions_in_order(ScopedDrills(load_catalogue().drills)[DRILL])
    seat = Seat(url, 1, timers=False)
    try:
        await _locked_in_an_open_question(store, seat, questions)
        seat.session.auto_reruns = {}   # as the frontend does on a whole run: the timers it sets are the ones
        await seat.session.rerun()   # the page run again whole (a reload), well after the listener connected
        before = sorted(seat.session.auto_reruns.values())
        with psycopg.connect(database, autocommit=True) as conn:
            cut = conn.execute("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND query ILIKE 'LISTEN %' "
                               "AND pid <> pg_backend_pid()").fetchone()[0]
        stop = asyncio.Event()
        asyncio.get_running_loop().call_later(BUDGET_S, stop.set)
        await seat.follow_until(lambda x: any(every <= 0.5 for every in x.auto_reruns.values()), stop)
        polled = sorted(seat.session.auto_reruns.values())
        seat.timers = True   # the polling page's ticks, as its browser sends them: the listener is back in 1 s
        seat._time_fragments()
        await seat.follow_until(lambda x: not any(every <= 0.5 for every in x.auto_reruns.values()), stop)
        return before, polled, sorted(seat.session.auto_reruns.values()), cut
    finally:
        if seat.session is not None:
            await seat.session.close()
        store.close()


def test_on_postgresql_a_listener_that_drops_has_its_pages_poll_at_once(tmp_path, pg_url):
    """With the listener up, a page ticks every 30 s: the process pushes its moves and beats for it. When the
    listener's connection drops, nobody does either until it is back, so the process pushes every page once and
    each runs whole, ticking every 0.5 s (and beating for itself) without waiting for its slow tick. Once the
    listener is back, the first of those ticks runs the page whole again, ticking slowly: a room of 500 polling
    twice a second after a blip would be 1,000 runs a second."""
    server = _serve(tmp_path, pg_url)
    try:
        before, polled, back, cut = run_blocking(_listener_dropped(server.url, pg_url))
    finally:
        server.stop()
    assert cut == 1, "the server's one listener"
    assert 30.0 in before and not any(every <= 0.5 for every in before), f"pushed, the page ticks slowly: {before}"
    assert 0.5 in polled and 30.0 not in polled, f"after the drop the page polls: {polled}"
    assert 30.0 in back and 0.5 not in back, f"with the listener back, the page ticks slowly again: {back}"


def _serve(tmp_path, database: str):
    from tests.browser import AppServer

    server = AppServer(tmp_path / "server.duckdb", env={"FAULTLINES_DB": database}, secrets="")
    server.start()
    return server


def test_on_postgresql_the_server_redraws_the_room_part_by_itself_after_a_close(tmp_path, pg_url):
    server = _serve(tmp_path, pg_url)
    try:
        fragments, asked, shown = run_blocking(_close_seen(server.url, pg_url, timers=False))
    finally:
        server.stop()
    assert len(fragments) == 1, f"one fragment's run, not the page's: {fragments} ({shown})"
    assert asked == 0, "the seat never polled: the process's listener reran its room part"


async def _beaten_without_a_tick(url: str, database: str) -> tuple[bool, int]:
    """A seat that never asks for a tick run joins and locks in: (whether its seat was seen again after that,
    which only the process's own beat can do, and how many tick runs it asked for)."""
    from bench.bench_live_ws import Seat
    from drills.backends import open_store

    store = open_store(database)
    questions = live.questions_in_order(ScopedDrills(load_catalogue().drills)[DRILL])
    seat = Seat(url, 1, timers=False)
    try:
        opened = await _locked_in_an_open_question(store, seat, questions)
        mine = lambda: next(s for s in store.live_seats(opened.id) if s.handle == "seat-1").seen_at  # noqa: E731
        first, seen = mine(), False
        for _ in range(int(BUDGET_S / 0.5)):   # a bound on the wait, not a figure: beats come every 5 s
            await asyncio.sleep(0.5)
            if mine() > first:
                seen = True
                break
        return seen, seat.asked
    finally:
        if seat.session is not None:
            await seat.session.close()
        store.close()


def test_on_postgresql_the_process_keeps_a_seat_present_though_its_page_never_ticks(tmp_path, pg_url):
    server = _serve(tmp_path, pg_url)
    try:
        seen, asked = run_blocking(_beaten_without_a_tick(server.url, pg_url))
    finally:
        server.stop()
    assert asked == 0, "the seat asked for no tick run"
    assert seen, "nobody beat for the seat: it would count as away 15 s after it joined"


async def _close_polled(url: str, database: str) -> tuple[float, int, bool]:
    """A seat whose page nobody pushes to: (the tick interval the server gave it, the tick runs that started after
    the Close up to the run that drew the room's answers, whether it drew them)."""
    import time

    from bench.bench_live_ws import MAX_TIMER_S, Seat, _shows
    from drills.backends import open_store

    store = open_store(database)
    questions = live.questions_in_order(ScopedDrills(load_catalogue().drills)[DRILL])
    seat = Seat(url, 1, timers=True)
    try:
        opened = await _locked_in_an_open_question(store, seat, questions, listens=False)
        stop = asyncio.Event()
        every = min(v for v in seat.session.auto_reruns.values() if v <= MAX_TIMER_S)
        closed = time.monotonic()
        store.live_move(opened.id, CLOSE, seen_version=opened.version, questions=questions, actor="prof")
        found = await asyncio.wait_for(seat.follow_until(lambda x: _shows(x, "1 guess of 2"), stop), BUDGET_S)
        ticks = sum(1 for at, fragments, _ in seat.runs if at >= closed and fragments)
        return every, ticks, found is not None
    finally:
        if seat.session is not None:
            await seat.session.close()
        store.close()


def test_with_the_push_off_a_seat_still_sees_a_close_within_the_rooms_1_s(tmp_path, pg_url):
    """The plain mode turns the server's push off (as a failed push does for one page): the page must then poll
    every 0.5 s and draw the Close from the first or second tick after it, inside the room's 1 s. Counted in
    ticks of the interval the server set, not timed."""
    from tests.browser import AppServer

    server = AppServer(tmp_path / "server.duckdb", env={"FAULTLINES_DB": pg_url, "FAULTLINES_PLAIN_STREAMLIT": "1"},
                       secrets="")
    server.start()
    try:
        every, ticks, shown = run_blocking(_close_polled(server.url, pg_url))
    finally:
        server.stop()
    assert shown, "the page never drew the Close"
    assert every <= 0.5, f"a page nobody pushes to ticks every {every} s: a Close could take {2 * every} s"
    assert 1 <= ticks <= 2, f"{ticks} ticks of {every} s before the page drew the Close"


def test_the_listener_reads_a_moved_room_once_for_the_process_and_tells_its_callbacks(pg_url, loaded):
    import threading

    from drills.backends import open_store
    from drills.live_watch import watch_for

    store, other = open_store(pg_url), open_store(pg_url)   # the instructor's process and a page's process
    watch = watch_for(other)
    heard, moved = [], threading.Event()
    watch.on_move(lambda session_id, version: (heard.append((session_id, version)), moved.set()))
    try:
        assert watch.listening.wait(BUDGET_S) and watch.pushes
        session = store.start_live_session("c1", DRILL, "prof")
        assert watch.room(session.id) is None or watch.room(session.id)[0] <= session.version
        opened = store.live_move(session.id, NEXT, seen_version=session.version,
                                 questions=live.questions_in_order(loaded), actor="prof")
        for _ in range(400):   # an event budget: each wait ends as soon as the thread has read the room
            room = watch.room(session.id)
            if room is not None and room[0] == opened.version:
                break
            moved.wait(0.05)
            moved.clear()
        assert watch.room(session.id) == store.live_version(session.id)
        assert heard[-1] == (session.id, store.live_version(session.id))
    finally:
        watch.close()
        store.close()
        other.close()


def test_a_listener_whose_read_fails_forgets_the_old_version_and_reads_again(pg_url, loaded):
    """After a notification the listener reads the room once for the process; a read that fails (the pool
    timing out under load) must not leave the version from before the move standing, or every page of the
    room takes it for the room's and never redraws: room() says unknown, and the next second reads again."""
    import threading

    from drills.backends import open_store
    from drills.live_watch import NotifyWatch

    store = open_store(pg_url)
    fail, reads, heard = threading.Event(), [], threading.Event()

    def read(session_id):
        reads.append(session_id)
        if fail.is_set():
            fail.clear()
            raise TimeoutError("couldn't get a connection after 4.00 sec")
        return store.live_version(session_id)

    watch = NotifyWatch(pg_url, read)
    watch.on_move(lambda session_id, version: heard.set())
    try:
        assert watch.listening.wait(BUDGET_S)
        session = store.start_live_session("c1", DRILL, "prof")
        questions = live.questions_in_order(loaded)
        for _ in range(400):   # an event budget: each wait ends as soon as the thread has read the room
            if watch.room(session.id) is not None:
                break
            heard.wait(0.05)
        before = watch.room(session.id)
        assert before is not None
        fail.set()
        heard.clear()
        store.live_move(session.id, NEXT, seen_version=session.version, questions=questions, actor="prof")
        for _ in range(400):   # until the failing read has been handled
            if not fail.is_set() and watch.room(session.id) != before:
                break
            heard.wait(0.05)
        assert watch.room(session.id) != before, "the version from before the move is not kept"
        assert heard.wait(BUDGET_S), "read again within a second, and the pages told"
        assert watch.room(session.id) == store.live_version(session.id)
    finally:
        watch.close()
        store.close()
