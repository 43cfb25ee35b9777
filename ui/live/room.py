"""The live room's two doors: the live page (take part, or run the room) and the sim page that follows the room.

A class answers the question its instructor opened, then sees the room's answers against the truth. The seat is
ui.live.seat, the console ui.live.console; the room's state is in the store (drills.store.live).
"""
from __future__ import annotations

import streamlit as st

from drills.store.live import ENDED, LiveSession
from sims.platform import SCENARIO_TITLES
from ui import keys
from ui.context import get_store
from ui.identity import sign_in_configured, signed_in_account, signed_in_instructor
from ui.live import registry
from ui.live.common import LIVE_ROOM, POLL_S, ROOM_PARAM, K
from ui.live.console import render_console
from ui.live.seat import render_candidate

TAKE_PART, RUN_ROOM = "Take part", "Run the room (instructors)"
LIVE_ROLE = K("role")   # the live page: taking part, or running the room (instructors)
LIVE_SIM_FOLLOWED = K("sim_followed")   # (session, scenario) the platform sim page last switched to


def render_live_page() -> None:
    store = get_store()
    instructor = sign_in_configured() and signed_in_instructor(store) is not None
    role = st.segmented_control("You are here to", [TAKE_PART, RUN_ROOM], key=LIVE_ROLE,
                                default=RUN_ROOM if instructor else TAKE_PART)
    if role == RUN_ROOM:
        render_console(store)
    else:
        render_candidate(store)


def _may_follow(store, session: LiveSession) -> bool:
    """A room's link (a new tab) is followed only for a signed-in seat of it, or an instructor of its class: an
    id typed into the URL shows nothing of another class's room."""
    account = signed_in_account(store)
    if account is None:
        return False
    if store.live_account_seated(session.id, account.id):
        return True
    instructor = signed_in_instructor(store)
    return instructor is not None and session.cohort in {c.cohort for c in store.classes_for(instructor.email)}


def follow_the_room() -> None:
    """On the platform sim page: if this browser sits in a live room (or came by the room's link), switch the
    page to the break its instructor injects, by itself. Call before the scenario picker is drawn.

    Each injection is followed once, so a candidate may still pick another scenario until the next one."""
    store = get_store()
    room = st.session_state.get(LIVE_ROOM)
    if room is None and str(st.query_params.get(ROOM_PARAM, "")).isdigit():
        linked = store.live_session(int(st.query_params[ROOM_PARAM]))
        if linked is None or not _may_follow(store, linked):
            st.caption("This link follows a live room. Open it from the room's page, or sign in with the account "
                       "that holds a seat there, and the simulation will follow the room.")
            return
        room = st.session_state[LIVE_ROOM] = linked.id
    if room is None:
        return
    session = store.live_session(room)
    if session is None or session.state == ENDED:
        return
    if session.scenario in SCENARIO_TITLES and st.session_state.get(LIVE_SIM_FOLLOWED) != (room, session.scenario):
        st.session_state[LIVE_SIM_FOLLOWED] = (room, session.scenario)
        st.session_state[keys.PLATFORM_SCENARIO] = session.scenario
    if session.scenario in SCENARIO_TITLES:
        st.info(f"Following your live room: your instructor injected {SCENARIO_TITLES[session.scenario]}.", icon=":material/bolt:")
    watch = registry.watch(store.path)
    heard = watch.version(room)

    @st.fragment(run_every=POLL_S)
    def tick() -> None:
        nonlocal heard
        now = watch.version(room)
        if now == heard:
            return
        heard = now
        latest = store.live_session(room)
        if latest is not None and latest.scenario != session.scenario:
            st.rerun(scope="app")

    tick()
