"""The instructor's classes: make one (with its join link), list those they own or are named on, and report the
wrong guesses at secrets since their previous sign-in.
"""
from __future__ import annotations

import streamlit as st

from drills.store.accounts import AccessRefused, ClassInfo, Instructor, email_list
from drills.store.throttle import TryKind
from drills.timebox import format_utc
from ui import keys
from ui.identity import sign_in_configured
from ui.safe import escape_markdown

K = keys.register("classes", __name__)   # this module's keys (ui.keys holds only shared ones)
TITLE = K("title")                       # instructor board: a new class's name
SIGN_IN = K("sign_in")                   # instructor board: whether the new class requires sign-in
INSTRUCTORS = K("instructors")           # instructor board: other instructors' e-mails for the new class
NEW_JOIN_LINK = K("new_link")            # instructor board: the join link just made (shown once)


def renew_button(cohort: str) -> str:
    """Instructor board: a class's "New join link" button."""
    return f"classes::renew::{cohort}"


_KIND_WORDS = {TryKind.INSTRUCTOR: "wrong instructor passphrases", TryKind.RESUME: "wrong resume codes",
               TryKind.JOIN: "join links that matched no class"}


def join_link(code: str) -> str:
    """The catalogue's address with ?join=, on the host the instructor is using (behind nginx: its host)."""
    try:
        base = st.context.url.split("?", 1)[0].rsplit("/", 1)[0]
    except Exception:
        base = ""
    return f"{base}/?{keys.JOIN_PARAM}={code}"


def failed_tries_note(store, instructor: Instructor) -> None:
    """One line: wrong guesses at every secret since this instructor's previous sign-in."""
    since = store.previous_success(TryKind.INSTRUCTOR, instructor.target)
    counts = store.failed_tries_since(since)
    when = f"your previous sign-in ({format_utc(since, seconds=False)} UTC)" if since else "the store began"
    parts = [f"{counts.get(kind, 0)} {words}" for kind, words in _KIND_WORDS.items()
             if kind != TryKind.INSTRUCTOR or not sign_in_configured()]
    st.caption(f"Failed tries since {when}: " + ", ".join(parts) + ". Each target allows a few per 10 minutes, "
               "then waits.")


def visible_cohorts(store, instructor: Instructor) -> list[str] | None:
    """The cohorts the board may show: an account instructor's classes; None (every cohort) for the passphrase."""
    if instructor.email is None:
        return None
    return [c.cohort for c in store.classes_for(instructor.email)]


def render_classes(store, instructor: Instructor) -> None:
    classes = store.classes_for(instructor.email)
    made = st.session_state.pop(NEW_JOIN_LINK, None)
    if made:   # above the classes, which fold away once there are some: this link is shown only once
        st.success(f"The join link of “{escape_markdown(made[0])}” (shown once; copy it and share it with your "
                   "candidates):", icon=":material/link:")
        st.code(made[1], language=None)
    # Folded in passphrase mode: classes need sign-in, and an open form would push the board below the fold.
    with st.expander(f"Your classes ({len(classes)})", expanded=not classes and sign_in_configured(), icon=":material/school:"):
        if not sign_in_configured():
            st.caption("Classes need a sign-in provider (see the README): a join link enrols signed-in accounts. "
                       "Without one, candidates type a cohort code on the catalogue.")
        for info in classes:
            _class_line(store, info)
        if not classes:
            st.info("No classes yet. Make one below: you get a join link, and the board then shows that class.")
        with st.form("new_class", enter_to_submit=True, clear_on_submit=True):
            st.markdown("**Make a class**")
            title = st.text_input("Class name", max_chars=80, key=TITLE, placeholder="e.g. SRE cohort 7")
            others = st.text_input("Other instructors (e-mails, optional)", key=INSTRUCTORS,
                                   placeholder="ana@school.edu, li@school.edu")
            required = st.checkbox("Require sign-in to take part", value=True, key=SIGN_IN,
                                   help="Off: anonymous handles may also use the class's cohort code.")
            go = st.form_submit_button("Make the class", type="primary")
        if go:
            try:
                info, code = store.create_class(title, instructor.email or instructor.name,
                                                requires_sign_in=required, instructors=email_list(others))
            except AccessRefused as problem:
                st.error(str(problem), icon=":material/warning:")
                return
            st.session_state[NEW_JOIN_LINK] = (info.title, join_link(code))
            st.rerun()


def _class_line(store, info: ClassInfo) -> None:
    others = f" · with {', '.join(info.instructors)}" if info.instructors else ""
    cols = st.columns([5, 1], vertical_alignment="center")
    cols[0].markdown(f"**{escape_markdown(info.title)}** · cohort `{info.cohort}` · owner "
                     f"{escape_markdown(info.owner_email)}{escape_markdown(others)} · "
                     + ("sign-in required" if info.requires_sign_in else "anonymous handles allowed"))
    if cols[1].button("New join link", key=renew_button(info.cohort),
                      help="Makes a new link to share; the old one stops working (only a fingerprint is kept)."):
        st.session_state[NEW_JOIN_LINK] = (info.title, join_link(store.renew_join_code(info.cohort)))
        st.rerun()
