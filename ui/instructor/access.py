"""The instructor sign-in gate: an account the settings name an instructor, or the embedded default's passphrase.

With a provider configured, instructors sign in with it (ui.identity) and the passphrase is not offered. Without
one, the passphrase opens the board; wrong passphrases are throttled in the store, across every process.
"""
from __future__ import annotations

import streamlit as st

from drills import access
from drills.store.accounts import Instructor
from drills.store.throttle import Throttled, TryKind
from drills.answers import InputError
from drills.instructor_actions import instructor_name_entry
from ui import keys
from ui.clients import current_client
from ui.safe import escape_markdown
from ui.identity import WayBack, account_or_sign_in, instructor_settings, sign_in_configured, signed_in_instructor

K = keys.register("instructor_access", __name__)   # this module's keys (ui.keys holds only shared ones)
SIGN_OUT = K.kept("instructor_sign_out")  # the instructor's "Sign out" button
ACCOUNT_SIGN_IN = K.kept("instructor::account_sign_in")  # the board: Sign in with the provider

BOARD = WayBack("instructor")   # a sign-in started here comes back to the board, not the catalogue
PASSPHRASE = "passphrase"   # the throttle's target for the one embedded-default passphrase


def _secret_hash() -> object:
    try:
        return st.secrets.get(access.SECRET_KEY)
    except Exception:  # no secrets file at all is the normal case, not an error
        return None


def _explain_setup() -> None:
    st.warning("The instructor pages are locked because no instructor passphrase is configured. "
               "No data is shown until one is.", icon=":material/lock:")
    st.markdown("Make a hash of a passphrase (at least "
                f"{access.MIN_PASSPHRASE} characters) and configure it in one of two ways:")
    st.code("python -m drills.access            # asks for the passphrase, prints the hash\n"
            f"export {access.HASH_ENV}='pbkdf2_sha256$...'   # then restart the app", language="bash")
    st.markdown(f"or put `{access.SECRET_KEY} = \"pbkdf2_sha256$...\"` in `.streamlit/secrets.toml`. "
                "Only the hash is stored; the passphrase itself is never written down by the app. With an OpenID "
                "Connect provider configured, instructors sign in with their accounts instead (see the README).")


def _account_gate(store) -> Instructor | None:
    account = account_or_sign_in(store, "This page is for instructors. Sign in with your account.",
                                 key=ACCOUNT_SIGN_IN, icon=":material/lock:", way_back=BOARD)
    if account is None:
        return None
    if signed_in_instructor(store) is None:
        emails, claim = instructor_settings()
        st.warning(f"You are signed in as {escape_markdown(account.email or account.name)}, which is not an instructor account "
                   "here. Instructors are the accounts the server's settings name"
                   + (" (by e-mail or by a claim)." if claim else " by e-mail.")
                   + (" None are named yet." if not emails and not claim else ""), icon=":material/lock:")
        return None
    instructor = Instructor(account.email or account.name, account.email or account.name)
    if st.session_state.get(keys.INSTRUCTOR_OK) != instructor.target:   # once per browser session: a sign-in
        store.record_access(TryKind.INSTRUCTOR, instructor.target, True, instructor.name, current_client(store))
        st.session_state[keys.INSTRUCTOR_OK] = instructor.target
    return instructor


def _passphrase_gate(store) -> Instructor | None:
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
        st.error(f"The configured instructor hash cannot be used: {unusable}", icon=":material/lock:")
        return None
    if encoded is None:
        _explain_setup()
        return None
    if keys.INSTRUCTOR_OK in st.session_state and st.session_state.get(keys.INSTRUCTOR_NAME):
        return Instructor(st.session_state[keys.INSTRUCTOR_NAME], None)

    st.info("This page is for instructors. Sign in with the instructor passphrase.", icon=":material/lock:")
    with st.form("instructor_sign_in", enter_to_submit=True):
        name = st.text_input("Your name (recorded with every override and time grant)", max_chars=200)
        passphrase = st.text_input("Instructor passphrase", type="password", max_chars=access.MAX_PASSPHRASE)
        submitted = st.form_submit_button("Sign in", type="primary")
    if not submitted:
        return None
    try:
        clean_name = instructor_name_entry(name)
        right = store.attempt_secret(TryKind.INSTRUCTOR, PASSPHRASE,
                                     lambda: access.verify(passphrase or "", encoded), client=current_client(store),
                                     who=clean_name)
    except InputError as problem:
        st.error(str(problem), icon=":material/warning:")
        return None
    except Throttled as wait:
        st.error(f"{wait} Wrong passphrases slow down the browser and network that typed them, counted across "
                 "every server process; a browser that has signed in here before is not held up by others.", icon=":material/block:")
        return None
    if right:
        st.session_state[keys.INSTRUCTOR_OK] = access.fingerprint(encoded)
        st.session_state[keys.INSTRUCTOR_NAME] = clean_name
        st.rerun()
    st.error("That passphrase is not right. Wrong tries are counted, and after a few the sign-in waits.", icon=":material/block:")
    return None


def sign_in(store) -> Instructor | None:
    """The signed-in instructor, or None after drawing whatever the visitor needs to see."""
    return _account_gate(store) if sign_in_configured() else _passphrase_gate(store)


def _forget_sign_in() -> None:
    st.session_state.pop(keys.INSTRUCTOR_OK, None)
    st.session_state.pop(keys.INSTRUCTOR_NAME, None)


def sign_out_button() -> None:
    """The passphrase's sign-out (an account signs out in the sidebar, which ends the whole session's sign-in)."""
    if sign_in_configured():
        return
    if st.button("Sign out", key=SIGN_OUT):
        _forget_sign_in()
        st.rerun()
