"""The instructor's console of the live room: start a session, move the room, inject a break, watch who is here.

The console's page reruns whenever the room moves past what it drew (the listener's count on PostgreSQL, the
store's version on DuckDB), counts and presence included; the room's answers and ranking are ui.live.report's.
"""
from __future__ import annotations

from typing import NamedTuple

import streamlit as st

from drills import live
from drills.store.live import (
    CLOSE,
    CLOSED,
    END,
    ENDED,
    HEARTBEAT_S,
    INJECT,
    NEXT,
    OPEN,
    PRESENT_S,
    REVEAL,
    REVEALED,
    WAITING,
    LiveRefused,
    LiveSession,
)
from sims.platform import SCENARIO_TITLES
from ui.context import get_catalogue, get_store
from ui.instructor.access import sign_in
from ui.live import registry
from ui.live.clock import room_clock
from ui.live.common import POLL_S, K, drill_of, question_of, scenario_link
from ui.live.push import REDRAW_AFTER_S
from ui.live.report import render_scoreboard, room_distribution
from ui.safe import escape_markdown

LIVE_SEEN = K("seen")   # a _Seen: the room's version the console's last full run drew; a change reruns the page
LIVE_CONSOLE_CLASS = K("console_class")   # the instructor's class picker
LIVE_DRILL = K("drill")   # the drill or single break a new live session runs
LIVE_SCENARIO = K("scenario")   # the platform-sim break the instructor may inject
LIVE_NOTE = K("note")   # why the instructor's last press was refused (shown once)


def _move_key(action: str) -> str:
    """The instructor console's button for one move of the room (next, close, reveal, end, inject)."""
    return K.item("move", action)


class _Seen(NamedTuple):
    """What the console's last full run drew, and what its tick has looked at since (store clock for times)."""
    session_id: int
    drawn: tuple   # the room's version the run drew
    heard: tuple   # the listener's count for the room when last looked
    beat_at: float   # when presence was last looked at
    drawn_at: float   # when the run drew
    redrawn: tuple | None   # the version last drawn a second time (the lost-draw safety net)


def _follow(session_id: int, drawn: tuple, heard: tuple) -> None:
    """The console: rerun the page when the room moves past what this run drew, counts and presence too.

    It also looks at presence every HEARTBEAT_S even when nothing was notified, since beats (and seats going
    quiet) are not notified. And it draws each new state of the room once more REDRAW_AFTER_S after its first draw:
    a draw the server finished but the browser never received (the seats' safety net, ui.live.seat) left the
    console on the question before its own press, every button but the one just pressed greyed out, for good."""
    store = get_store()
    watch = registry.watch(store.path)
    before = st.session_state.get(LIVE_SEEN)
    redrawn = before.redrawn if before is not None and before.session_id == session_id else None
    now_s = store.clock()
    st.session_state[LIVE_SEEN] = _Seen(session_id, drawn, heard, now_s, now_s, redrawn)

    @st.fragment(run_every=POLL_S)
    def tick() -> None:
        seen = st.session_state.get(LIVE_SEEN)
        if seen is None or seen.session_id != session_id:
            return
        now_s = store.clock()
        if seen.redrawn != seen.drawn and now_s - seen.drawn_at >= REDRAW_AFTER_S:
            st.session_state[LIVE_SEEN] = seen._replace(redrawn=seen.drawn)   # drawn a second time now, once
            st.rerun(scope="app")
        heard = watch.version(session_id)
        due = now_s - seen.beat_at >= HEARTBEAT_S
        if heard == seen.heard and not due:
            return   # PostgreSQL: nothing was notified, so no query at all
        now = store.live_version(session_id)
        st.session_state[LIVE_SEEN] = seen._replace(heard=heard, beat_at=now_s if due else seen.beat_at)
        if now != seen.drawn:
            st.rerun(scope="app")

    tick()


def _drill_title(drill_id: str) -> str:
    drills = get_catalogue().drills
    return drills[drill_id].drill.title if drill_id in drills else drill_id


def _drill_choices() -> dict[str, str]:
    """Every whole drill and each of its single breaks: id -> label."""
    drills = get_catalogue().drills
    out = {}
    for drill_id in drills:
        title = drills[drill_id].drill.title
        out[drill_id] = f"{title} (whole drill)"
        for scope in drills.offers(drill_id)[0]:
            if scope.id != "essentials":
                out[f"{drill_id}~{scope.id}"] = f"{title} — {scope.label}"
    return out


def render_console(store) -> None:
    instructor = sign_in(store)
    if instructor is None:
        return
    classes = store.classes_for(instructor.email)
    if not classes:
        st.info("You have no classes yet. Make one on the Scoreboard page; its members can then join a live "
                "session here.", icon=":material/school:")
        return
    titles = {c.cohort: c.title for c in classes}
    cohort = st.selectbox("Class", list(titles), format_func=lambda c: f"{titles[c]} ({c})",
                          key=LIVE_CONSOLE_CLASS)
    running = store.live_sessions(cohort)
    if not running:
        choices = _drill_choices()
        with st.form("live_start"):
            drill_id = st.selectbox("Run live", list(choices), format_func=choices.get, key=LIVE_DRILL)
            go = st.form_submit_button("Start the live session", type="primary")
        if go:
            store.start_live_session(cohort, drill_id, instructor.name)
            st.rerun()
        return
    _console(store, running[0], instructor.name)


def _press(store, session: LiveSession, action: str, actor: str) -> None:
    # The picked scenario as of the press (read here, not bound at drawing time: a pick and a press can
    # reach the server in one run).
    scenario = st.session_state.get(LIVE_SCENARIO) if action == INJECT else None
    try:
        store.live_move(session.id, action, seen_version=session.version,
                        questions=live.questions_in_order(drill_of(session)), actor=actor, scenario=scenario)
    except LiveRefused as problem:
        st.session_state[LIVE_NOTE] = str(problem)


def _console(store, session: LiveSession, actor: str) -> None:
    heard = registry.heard(session.id)
    drawn = store.live_version(session.id)
    session = store.live_session(session.id)
    loaded = drill_of(session)
    order = live.questions_in_order(loaded)
    seats = store.live_seats(session.id)
    now = store.clock()
    here = [s for s in seats if s.present(now)]
    st.subheader(f"Live: {_drill_title(session.drill_id)}")
    _follow(session.id, drawn, heard)
    if session.state == OPEN and drawn[1] and drawn[1] == drawn[2] and store.live_locked(session.id, notify=False):
        st.rerun()   # the last seat still missing left the room: everyone present has locked in
    note = st.session_state.pop(LIVE_NOTE, None)
    if note:
        st.warning(escape_markdown(note), icon=":material/warning:")
    steps = store.live_steps(session.id)
    cols = st.columns([1, 1, 1, 1.3])
    with cols[3]:
        room_clock(store, loaded, steps)   # the instructor's clock: the room keeps it, seats have none
    cols[0].metric("In the room", len(here), help=f"{len(seats)} joined; present means their page was seen in "
                                                    f"the last {PRESENT_S:.0f} s")
    # A quarter of the console's width: "question 8 of 8" was cut to "question 8 …" beside the clock.
    cols[1].metric("Question", "not yet" if session.state == WAITING else f"{session.step_no + 1} of {len(order)}")
    state_words = {WAITING: "waiting", OPEN: "open", CLOSED: "closed" + (" (all locked in)" if session.reason else ""),
                   REVEALED: "answer revealed", ENDED: "ended"}
    cols[2].metric("Question is", state_words[session.state])
    with st.expander(f"Who is here ({len(here)})"):
        st.dataframe({"name": [s.handle for s in seats],   # user text: a table, never HTML
                      "present": ["here" if s.present(now) else "away" for s in seats]}, hide_index=True)
    with st.container(horizontal=True):
        last = session.step_no + 1 >= len(order)
        st.button("Open the first question" if session.state == WAITING else "Next question", key=_move_key(NEXT),
                  type="primary", disabled=session.state in (OPEN, ENDED) or last,
                  on_click=_press, args=(store, session, NEXT, actor))
        st.button("Close the question", key=_move_key(CLOSE), disabled=session.state != OPEN,
                  on_click=_press, args=(store, session, CLOSE, actor))
        st.button("Reveal the answer", key=_move_key(REVEAL), disabled=session.state != CLOSED,
                  on_click=_press, args=(store, session, REVEAL, actor))
        st.button("End the session", key=_move_key(END), disabled=session.state == ENDED,
                  on_click=_press, args=(store, session, END, actor))
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.selectbox("Inject a break into the platform simulation", list(SCENARIO_TITLES),
                                format_func=SCENARIO_TITLES.get, key=LIVE_SCENARIO)
        st.button("Inject for the room", key=_move_key(INJECT), disabled=session.state == ENDED,
                  on_click=_press, args=(store, session, INJECT, actor))
    scenario_link(session)
    question = question_of(loaded, session)
    if question is not None and session.state != ENDED:
        st.markdown(f"**{loaded.text(question.prompt)}**")
        if session.state == OPEN:
            st.caption(f"{drawn[2]} of {drawn[1]} present locked in")
        room_distribution(store, session, loaded, question, own_attempt=None, present=drawn[1])
    render_scoreboard(store, session, loaded, steps, seats)
