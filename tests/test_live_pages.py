"""The live room's pages in AppTest: an instructor runs one_tenant's break 2 for two signed-in candidates.

Each AppTest is one browser session; a rerun stands in for the fragment noticing a move (tests/test_live.py
covers the store and the notifications, the browser test the fragment itself).
"""
from __future__ import annotations

import pytest

from drills import live
from drills.loader import load_catalogue
from drills.scope import ScopedDrills

from drills.store import AttemptStore
from ui.drill.browser_clock import rendered_time_left
from tests.test_accounts import AUTH, ISSUER

DRILL = "one_tenant~break2"


def _as(app_test, email: str):
    at = app_test("app.py")
    at.secrets = dict(AUTH)
    at.user = {"is_logged_in": True, "iss": ISSUER, "sub": f"sub-{email}", "email": email,
               "name": email.split("@")[0]}
    at.run()
    at.switch_page("pages/live.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def klass(db_path, monkeypatch):
    monkeypatch.setenv("FAULTLINES_INSTRUCTORS", "prof@school.edu")
    store = AttemptStore(db_path)
    try:
        info, _ = store.create_class("SRE 7", "prof@school.edu")
        for email, name in (("ana@school.edu", "Ana"), ("bo@school.edu", "Bo")):
            store.account_candidate(store.account_for(ISSUER, f"sub-{email}", email), info.cohort, name)
    finally:
        store.close()
    return info.cohort


def _started(app_test):
    """The instructor's console, with a live session of DRILL just started."""
    prof = _as(app_test, "prof@school.edu")
    prof.selectbox(key="live::drill").select(DRILL)
    _button(prof, "Start the live session").click().run()
    assert not prof.exception, prof.exception
    return prof


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def _texts(at) -> str:
    return " ".join(e.value for kind in ("markdown", "caption", "info", "success", "warning", "error")
                    for e in getattr(at, kind))


def _room_clock(at) -> str | None:
    """The time left on the room's clock as the server drew it, if the page has one."""
    return next(filter(None, (rendered_time_left(h.value) for h in at.get("html"))), None)


def _lock(at, value, low="", high=""):
    at.text_input(key="lock::jobs_in_flight::value").input(value)
    at.text_input(key="lock::jobs_in_flight::low").input(low)
    at.text_input(key="lock::jobs_in_flight::high").input(high)
    at.button(key="lock::jobs_in_flight::submit").click().run()
    assert not at.exception, at.exception


def test_an_instructor_runs_a_break_for_the_room_and_it_is_recorded_as_live_attempts(app_test, db_path, klass):
    prof = _started(app_test)

    ana, bo = _as(app_test, "ana@school.edu"), _as(app_test, "bo@school.edu")
    assert "waiting room" in _texts(ana)
    assert not [t for t in ana.text_input if t.key.startswith("lock::")], "no question before the instructor opens one"

    prof.run()
    assert [m.value for m in prof.metric][0] == "2"
    assert "The room's clock: The room's clock starts when the first question opens." in _texts(prof)
    assert not _room_clock(prof)
    _button(prof, "Open the first question").click().run()
    assert _room_clock(prof) in ("45:00", "44:59"), "the instructor's clock starts with the first question"
    assert "The room's clock: On pace." in _texts(prof), "the first question's part is where the pace starts"
    assert not _room_clock(ana), "a seat keeps the instructor's clock, none of its own"
    ana.run()
    bo.run()
    _lock(ana, "150", "140", "170")
    assert "guesses of" not in _texts(ana), "nothing of the room while the question is open"
    prof.run()
    assert "1 of 2 present locked in" in _texts(prof)

    _lock(bo, "200")   # the last seat: the question closes itself
    assert not bo.get("plotly_chart") == [], "the room's strip"
    assert "2 guesses of 2 in the room · 1 of 1 ranges held the truth" in _texts(bo)
    ana.run()
    assert "2 guesses of 2" in _texts(ana) and "Truth" not in _texts(ana)
    card = [m.value for m in ana.markdown if "Your guess" in m.value]
    assert len(card) == 1 and "150" in card[0] and "2 guesses of 2 in the room" in card[0], \
        f"a closed seat's guess and the room's answers are one element, not two: {card}"
    prof.run()
    assert "closed (all locked in)" in [m.value for m in prof.metric]
    assert "Bo" not in _texts(ana), "no other name on a candidate's page"

    _button(prof, "Reveal the answer").click().run()
    ana.run()
    assert "Truth: 160 jobs" in _texts(ana) and "full marks" in _texts(ana)
    prof.run()
    table = prof.dataframe[-1].value
    # Ana's 140-170 held 160: 30/160 of the widest 10 off 1 point; Bo gave no range, which scores the widest
    assert list(table["name"]) == ["Ana", "Bo"] and list(table["points"]) == ["0.98 of 1", "0.00 of 1"]
    assert "10 times any miss of the truth" in _texts(prof), "the scoreboard says what its score is"

    prof.selectbox(key="live::scenario").select("break2")
    _button(prof, "Inject for the room").click().run()
    ana.run()
    assert "injected a break into the platform simulation" in _texts(ana)
    assert any("simulation run" in e.proto.label for e in ana.get("page_link")), "a link to the same run"
    _button(prof, "End the session").click().run()
    ana.run()
    assert "The session has ended" in _texts(ana)
    store = AttemptStore(db_path)
    try:
        attempts = store.attempts(cohort=klass)
        assert [(a.handle, a.drill_id, a.finished_at is not None) for a in attempts] == [
            ("Ana", DRILL, True), ("Bo", DRILL, True)]
        assert all(any(e.kind == "live" for e in store.events(a.id)) for a in attempts)
        assert store.answers(attempts[0].id)["jobs_in_flight"].value == 150
    finally:
        store.close()


def test_a_candidate_outside_the_class_sees_no_room_and_a_stale_press_is_refused(app_test, db_path, klass):
    prof = _started(app_test)
    other_tab = _as(app_test, "prof@school.edu")
    _button(prof, "Open the first question").click().run()
    _button(other_tab, "Open the first question").click().run()   # drawn before the first tab's press
    assert "moved on meanwhile" in _texts(other_tab)
    stranger = _as(app_test, "cy@school.edu")
    assert "not joined a class" in _texts(stranger)


def test_without_a_provider_a_handle_in_the_cohort_joins_with_its_resume_code(app_test, db_path):
    store = AttemptStore(db_path)
    try:
        session = store.start_live_session("night", DRILL, "prof")
    finally:
        store.close()
    at = app_test("app.py").run()
    at.switch_page("pages/live.py").run()
    at.text_input(key="live::handle").input("grace")
    at.text_input(key="live::cohort").input("night")
    _button(at, "Join the room").click().run()
    assert not at.exception, at.exception
    assert "waiting room" in _texts(at) and "Your resume code" in _texts(at)
    assert not [b for b in at.button if b.label == "Join the room"], "joined: the join form is gone from the page"
    again = app_test("app.py").run()   # another browser typing the same handle without its code
    again.switch_page("pages/live.py").run()
    again.text_input(key="live::handle").input("grace")
    again.text_input(key="live::cohort").input("night")
    _button(again, "Join the room").click().run()
    assert "is in use" in _texts(again) and "waiting room" not in _texts(again)
    assert [b for b in again.button if b.label == "Join the room"], "refused: the form stays to try again"
    store = AttemptStore(db_path)
    try:
        assert [s.handle for s in store.live_seats(session.id)] == ["grace"]
    finally:
        store.close()


def test_on_postgresql_a_candidate_joins_and_the_page_draws_the_question_another_process_opened(app_test, pg_url, monkeypatch):
    from drills.backends import open_store

    monkeypatch.setenv("FAULTLINES_DB", pg_url)
    store = open_store(pg_url)
    try:
        session = store.start_live_session("night", DRILL, "prof")
        at = app_test("app.py").run()
        at.switch_page("pages/live.py").run()
        at.text_input(key="live::handle").input("grace")
        at.text_input(key="live::cohort").input("night")
        _button(at, "Join the room").click().run()
        assert not at.exception, at.exception
        assert "waiting room" in _texts(at)
        loaded = ScopedDrills(load_catalogue().drills)[DRILL]
        store.live_move(session.id, "next", seen_version=store.live_session(session.id).version,
                        questions=live.questions_in_order(loaded), actor="prof")   # another process's store
        at.run()
        assert at.text_input(key="lock::jobs_in_flight::value") is not None
    finally:
        store.close()


def test_a_seat_gone_quiet_is_away_and_a_late_lock_in_on_a_closed_form_is_refused(app_test, db_path, klass):
    import time

    from drills.store.live import PRESENT_S

    prof = _started(app_test)
    ana, bo = _as(app_test, "ana@school.edu"), _as(app_test, "bo@school.edu")
    prof.run()
    _button(prof, "Open the first question").click().run()
    ana.run()
    bo.run()
    store = AttemptStore(db_path, clock=lambda: time.time() - PRESENT_S - 30)   # bo's last beat, long ago
    try:
        session = store.live_sessions(klass)[0]
        bo_seat = next(s for s in store.live_seats(session.id) if s.handle == "Bo")
        store.live_heartbeat(session.id, bo_seat.candidate_id)
    finally:
        store.close()
    prof.run()
    assert [m.value for m in prof.metric][0] == "1", "only Ana is present"
    who = next(d.value for d in prof.dataframe if "present" in d.value)
    assert list(who["present"]) == ["here", "away"]
    _lock(ana, "150", "140", "170")   # everyone present has locked in: the question closes itself
    assert "1 guess of 2 in the room" in _texts(ana)
    _lock(bo, "160")   # bo's form was drawn while the question was open
    assert "came after the question closed, so it was not counted" in _texts(bo)
    card = [m.value for m in bo.markdown if "closed before you locked in" in m.value]
    assert len(card) == 1 and "At the peak, how many jobs are running" in card[0] and "1 guess of 2" in card[0], \
        f"a seat with no answer counted sees which question closed, with the room's answers: {card}"
    store = AttemptStore(db_path)
    try:
        assert "jobs_in_flight" not in store.answers(bo_seat.attempt_id)
    finally:
        store.close()


def test_a_candidates_open_platform_sim_page_switches_to_the_break_the_instructor_injects(app_test, db_path, klass):
    prof = _started(app_test)
    ana = _as(app_test, "ana@school.edu")
    ana.switch_page("pages/sim_platform.py").run()   # the sim page, open before any injection
    assert not ana.exception, ana.exception
    assert ana.selectbox(key="platform_scenario").value == "baseline"
    prof.run()
    prof.selectbox(key="live::scenario").select("break2")
    _button(prof, "Inject for the room").click().run()
    ana.run()   # stands in for the page's fragment hearing the move
    assert ana.selectbox(key="platform_scenario").value == "break2"
    assert "Following your live room" in _texts(ana)
    ana.selectbox(key="platform_scenario").select("baseline").run()   # the candidate may look elsewhere...
    assert ana.selectbox(key="platform_scenario").value == "baseline"
    prof.run()
    prof.selectbox(key="live::scenario").select("break1_fifo")
    _button(prof, "Inject for the room").click().run()
    ana.run()   # ...until the next injection
    assert ana.selectbox(key="platform_scenario").value == "break1_fifo"


def _new_tab_on_the_rooms_sim_link(app_test, email: str, room: int):
    """A new tab (a fresh browser session) opened on the room's sim link: ?live=<session>."""
    at = app_test("app.py")
    at.secrets = dict(AUTH)
    at.user = {"is_logged_in": True, "iss": ISSUER, "sub": f"sub-{email}", "email": email, "name": email}
    at.run()
    at.query_params["live"] = str(room)
    at.switch_page("pages/sim_platform.py").run()
    assert not at.exception, at.exception
    return at


def test_the_rooms_sim_link_is_followed_only_by_a_seat_of_that_room(app_test, db_path, klass):
    prof = _started(app_test)
    _as(app_test, "ana@school.edu")   # ana takes her seat
    prof.selectbox(key="live::scenario").select("break2")
    _button(prof, "Inject for the room").click().run()
    store = AttemptStore(db_path)
    try:
        [room] = store.live_sessions(klass)
        store.account_for(ISSUER, "sub-eve@else.where", "eve@else.where")
    finally:
        store.close()
    ana = _new_tab_on_the_rooms_sim_link(app_test, "ana@school.edu", room.id)
    assert ana.selectbox(key="platform_scenario").value == "break2", "a seat's new tab follows the room"
    eve = _new_tab_on_the_rooms_sim_link(app_test, "eve@else.where", room.id)
    assert eve.selectbox(key="platform_scenario").value == "baseline", "a typed id shows nothing of another room"
    assert "Following your live room" not in _texts(eve)
    assert "This link follows a live room" in _texts(eve)


def _closed_after_ana_locked_in(app_test):
    """Ana locks in the first question and the instructor closes it (bo, present and not locking in, keeps it
    open until then); Ana's page has not run since. Her page, and the step her room part drew while it was open."""
    import ui.live.seat as ui_live

    prof = _started(app_test)
    ana = _as(app_test, "ana@school.edu")
    _as(app_test, "bo@school.edu")
    _button(prof, "Open the first question").click().run()
    ana.run()
    opened = ana.session_state[ui_live.LIVE_DREW][1]
    _lock(ana, "150")
    _button(prof, "Close the question").click().run()
    return ana, opened


def test_a_room_part_cut_short_is_not_taken_for_drawn_so_the_pages_tick_redraws_it(app_test, db_path, klass,
                                                                                   monkeypatch):
    """The page's tick redraws the room's part when the step it last drew is not the room's: a run that stops
    half way (an error, a store that went away) must leave the step it was drawing unseen, or the tick takes
    the half-drawn room for the current one and the page never shows the move."""
    import ui.live.seat as ui_live

    ana, opened = _closed_after_ana_locked_in(app_test)

    def cut_short(*args, **kwargs):
        raise RuntimeError("the run stopped half way")

    whole = ui_live._closed_seat
    monkeypatch.setattr(ui_live, "_closed_seat", cut_short)
    ana.run()
    assert ana.exception and "guesses of" not in _texts(ana)
    assert ana.session_state[ui_live.LIVE_DREW][1] == opened, "the closed step was not drawn: still unseen"
    monkeypatch.setattr(ui_live, "_closed_seat", whole)
    ana.run()
    assert not ana.exception, ana.exception
    assert "1 guess of 2 in the room" in _texts(ana)
    assert ana.session_state[ui_live.LIVE_DREW][1] != opened


def test_a_store_too_busy_for_the_room_part_shows_a_note_not_an_error_and_the_part_is_drawn_again(
        app_test, db_path, klass, monkeypatch):
    """A whole room drawing at once can exhaust the store's pool (a PoolTimeout in the 200-seat bench): the
    candidate sees that the room is busy and their answers safe, never an error box, and nothing counts as
    drawn, so the next run draws the room."""
    import duckdb

    import ui.live.seat as ui_live

    ana, opened = _closed_after_ana_locked_in(app_test)

    def busy(*args, **kwargs):
        raise duckdb.IOException("could not get a connection in time")

    whole = ui_live.session_at
    monkeypatch.setattr(ui_live, "session_at", busy)
    ana.run()
    assert not ana.exception, ana.exception
    assert "The room is busy: your locked answers are safe" in _texts(ana)
    assert ana.session_state[ui_live.LIVE_DREW][1] == opened, "nothing drawn: still the open step"
    monkeypatch.setattr(ui_live, "session_at", whole)
    ana.run()
    assert "1 guess of 2 in the room" in _texts(ana) and "The room is busy" not in _texts(ana)
