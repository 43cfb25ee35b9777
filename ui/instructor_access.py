"""The instructor sign-in gate: reads the configured hash, asks for the passphrase, remembers the session.

Wrong passphrases wait longer each time (counted per process, not per session); nothing below the gate runs until it opens.
"""
from __future__ import annotations

import streamlit as st

from drills import access
from drills.answers import InputError
from drills.instructor_actions import instructor_name_entry
from ui import keys


def _secret_hash() -> object:
    try:
        return st.secrets.get(access.SECRET_KEY)
    except Exception:  # no secrets file at all is the normal case, not an error
        return None


def _explain_setup() -> None:
    st.warning("The instructor pages are locked because no instructor passphrase is configured. "
               "No data is shown until one is.", icon="🔒")
    st.markdown("Make a hash of a passphrase (at least "
                f"{access.MIN_PASSPHRASE} characters) and configure it in one of two ways:")
    st.code("python -m drills.access            # asks for the passphrase, prints the hash\n"
            f"export {access.HASH_ENV}='pbkdf2_sha256$...'   # then restart the app", language="bash")
    st.markdown(f"or put `{access.SECRET_KEY} = \"pbkdf2_sha256$...\"` in `.streamlit/secrets.toml`. "
                "Only the hash is stored; the passphrase itself is never written down by the app.")


def sign_in() -> str | None:
    """The signed-in instructor's name, or None after drawing whatever the visitor needs to see."""
    encoded = access.configured_hash(_secret_hash())
    unusable = None
    if encoded is not None:
        try:
            access.parse_hash(encoded)
        except access.AccessError as error:
            unusable, encoded = error, None
    # A sign-in made under another hash (or while none was usable) is forgotten now, so rolling the hash
    # back later does not quietly reopen it.
    if keys.INSTRUCTOR_OK in st.session_state and not access.session_still_valid(
            st.session_state[keys.INSTRUCTOR_OK], encoded):
        _forget_sign_in()
    if unusable is not None:
        st.error(f"The configured instructor hash cannot be used: {unusable}", icon="🔒")
        return None
    if encoded is None:
        _explain_setup()
        return None
    if keys.INSTRUCTOR_OK in st.session_state and st.session_state.get(keys.INSTRUCTOR_NAME):
        return st.session_state[keys.INSTRUCTOR_NAME]

    st.info("This page is for instructors. Sign in with the instructor passphrase.", icon="🔒")
    with st.form("instructor_sign_in", enter_to_submit=True):
        name = st.text_input("Your name (recorded with every override and time grant)", max_chars=200)
        passphrase = st.text_input("Instructor passphrase", type="password", max_chars=access.MAX_PASSPHRASE)
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        return None
    try:
        clean_name = instructor_name_entry(name)
    except InputError as problem:
        st.error(str(problem), icon="⚠️")
        return None
    if access.verify(passphrase or "", encoded):
        st.session_state[keys.INSTRUCTOR_OK] = access.fingerprint(encoded)
        st.session_state[keys.INSTRUCTOR_NAME] = clean_name
        st.session_state[keys.INSTRUCTOR_FAILURES] = 0
        access.FAILURES.succeed()
        st.rerun()
    failures = st.session_state.get(keys.INSTRUCTOR_FAILURES, 0)
    # The wait comes from the process-wide count, so a reload or a new browser session does not reset it.
    access.wait_after_failure()
    st.session_state[keys.INSTRUCTOR_FAILURES] = failures + 1
    st.error(f"That passphrase is not right (wrong try {failures + 1} in this session; each one waits longer).",
             icon="⛔")
    return None


def _forget_sign_in() -> None:
    st.session_state.pop(keys.INSTRUCTOR_OK, None)
    st.session_state.pop(keys.INSTRUCTOR_NAME, None)


def sign_out_button() -> None:
    if st.button("Sign out", key=keys.INSTRUCTOR_SIGN_OUT):
        _forget_sign_in()
        st.rerun()
