"""The live room's join form: who takes a seat, a signed-in account's class or a handle proven in its cohort.

Without a provider a handle is claimed or proven with its resume code as on the catalogue (ui.drill.start); a
code just issued is shown once, beside the room.
"""
from __future__ import annotations

import streamlit as st

from drills.answers import InputError
from drills.records import Candidate
from drills.store.accounts import AccessRefused
from drills.store.throttle import Throttled
from ui import keys
from ui.drill.start import Visitor, anonymous_candidate
from ui.identity import account_or_sign_in, sign_in_configured
from ui.live.common import K
from ui.safe import escape_markdown

LIVE_CLASS = K("class")   # a signed-in candidate's pick among their classes
LIVE_HANDLE = K("handle")   # without a provider: the handle, cohort and resume code typed to join
LIVE_COHORT = K("cohort")
LIVE_CODE = K("code")
LIVE_CANDIDATE = K("candidate")   # the anonymous candidate row this session proved (drills.records.Candidate)
LIVE_NEW_CODE = K("new_code")   # a resume code just issued to that handle, shown once


def seat_candidate(store) -> Candidate | None:
    """The candidate this browser session seats in its class's room, None while the form or sign-in waits."""
    candidate = _account_seat_candidate(store) if sign_in_configured() else _anonymous_seat_candidate(store)
    if candidate is None:
        return None
    issued = st.session_state.get(LIVE_NEW_CODE)
    if issued and issued[0] == candidate.handle:
        st.success(f"Your resume code for “{escape_markdown(issued[0])}” is **{issued[1]}**. Note it: it is the only "
                   "way to use this handle again.", icon=":material/key:")
    return candidate


def _anonymous_seat_candidate(store) -> Candidate | None:
    """Without a provider: a handle in the class's cohort, proven with its resume code as on the catalogue."""
    proven = st.session_state.get(LIVE_CANDIDATE)
    if isinstance(proven, Candidate):
        return proven
    slot = st.empty()   # the form goes once joined: the room's runs that follow redraw only the room's part
    with slot.container():
        st.markdown("Type your handle and your class's cohort code to join its live session.")
        with st.form("live_join", enter_to_submit=True):
            cols = st.columns([2, 1, 1])
            handle = cols[0].text_input("Your handle", max_chars=40, key=LIVE_HANDLE)
            cohort = cols[1].text_input("Cohort code", max_chars=40, key=LIVE_COHORT)
            code = cols[2].text_input("Resume code (handle used before)", type="password", max_chars=20,
                                      key=LIVE_CODE)
            go = st.form_submit_button("Join the room", type="primary")
    if not go:
        return None
    if not (cohort or "").strip():
        st.error("Type your class's cohort code: a live session belongs to a class.", icon=":material/warning:")
        return None
    try:
        candidate, new_code = anonymous_candidate(store, Visitor(None, cohort, handle, code))
    except (InputError, AccessRefused, Throttled) as problem:
        st.error(str(problem), icon=":material/warning:")
        return None
    st.session_state[LIVE_CANDIDATE] = candidate
    slot.empty()
    if new_code:
        st.session_state[LIVE_NEW_CODE] = (candidate.handle, new_code)
    return candidate


def _account_seat_candidate(store) -> Candidate | None:
    account = account_or_sign_in(store, "Sign in to join your class's live session.", key=keys.JOIN_SIGN_IN)
    if account is None:
        return None
    classes = dict(store.account_cohorts(account.id))
    if not classes:
        st.info("You have not joined a class yet. Open your instructor's join link first.", icon=":material/school:")
        return None
    cohort = st.selectbox("Class", list(classes), key=LIVE_CLASS,
                          format_func=lambda c: f"{(store.class_info(c).title if store.class_info(c) else c)} "
                                                f"— as {classes[c]}")
    return store.account_candidate(account, cohort)
