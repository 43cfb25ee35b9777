"""Who is using this browser session: the one place identity comes from.

A signed-in OpenID Connect account (st.login / st.user) when `.streamlit/secrets.toml` has an `[auth]`
section; otherwise nobody is signed in and the drill pages fall back to an anonymous handle and its code.
Instructors are accounts named in the settings (FAULTLINES_INSTRUCTORS e-mails or a FAULTLINES_INSTRUCTOR_CLAIM
such as roles=instructor, or the secrets `instructors` / `instructor_claim`).
"""
from __future__ import annotations

import os
from time import monotonic

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from drills.store.accounts import Account, AccessRefused, email_list, is_instructor_account
from ui import keys
from ui.safe import escape_markdown

K = keys.register("identity", __name__)   # this module's keys (ui.keys holds only shared ones)
ACCOUNT = K.kept("account")              # the signed-in account (drills.store.accounts.Account) this session resolved
SIDEBAR_SIGN_IN = K.kept("sidebar::sign_in")  # the sidebar's Sign in button (a provider is configured)
SIDEBAR_SIGN_OUT = K.kept("sidebar::sign_out")

INSTRUCTORS_ENV = "FAULTLINES_INSTRUCTORS"
INSTRUCTOR_CLAIM_ENV = "FAULTLINES_INSTRUCTOR_CLAIM"


# With no secrets file at all (the normal embedded case) Streamlit looks for every configured file again on each
# read of st.secrets and raises (~40 us, about 0.2 ms a run in all). The absence is kept for a
# second, for the st.secrets it was seen on, so a secrets file added while serving is still found.
NO_SECRETS_KEPT_S = 1.0
_no_secrets: tuple[object, float] = (None, float("-inf"))   # (st.secrets object, when it had no file)


def _secret(name: str) -> object:
    global _no_secrets
    secrets = st.secrets
    seen_on, seen_at = _no_secrets
    if seen_on is secrets and monotonic() - seen_at < NO_SECRETS_KEPT_S:
        return None
    try:
        return secrets.get(name)
    except StreamlitSecretNotFoundError:
        _no_secrets = (secrets, monotonic())   # one tuple, replaced whole: threads read it without a lock
        return None
    except Exception:   # an unreadable file: as before, no secret
        return None


def sign_in_configured() -> bool:
    """Whether an OpenID Connect provider is configured (an [auth] section with a client)."""
    auth = _secret("auth")
    try:
        return bool(auth) and ("client_id" in auth or any(isinstance(v, dict) or hasattr(v, "keys")
                                                          for v in auth.values()))
    except Exception:
        return False


def _claims() -> dict:
    try:
        return dict(st.user.to_dict()) if st.user.is_logged_in else {}
    except Exception:   # st.user without [auth] has no is_logged_in
        return {}


def signed_in_account(store) -> Account | None:
    """The account of the signed-in person, made in `store` at their first visit; None when signed out."""
    if not sign_in_configured():
        return None
    claims = _claims()
    subject = claims.get("sub")
    if not subject:
        return None
    issuer = str(claims.get("iss") or "")
    cached = st.session_state.get(ACCOUNT)
    if isinstance(cached, Account) and (cached.issuer, cached.subject) == (issuer, str(subject)):
        return cached
    account = store.account_for(issuer, str(subject), str(claims.get("email") or ""),
                                      str(claims.get("name") or ""))
    st.session_state[ACCOUNT] = account
    return account


def instructor_settings() -> tuple[tuple[str, ...], str | None]:
    """The instructor allow-list (e-mails) and claim rule in force; the environment wins over the secrets."""
    try:
        emails = email_list(os.environ.get(INSTRUCTORS_ENV) or _secret("instructors") or "")
    except AccessRefused:
        emails = ()
    claim = os.environ.get(INSTRUCTOR_CLAIM_ENV) or _secret("instructor_claim")
    return emails, (str(claim) if claim else None)


def signed_in_instructor(store) -> Account | None:
    """The signed-in account when the settings name it an instructor."""
    account = signed_in_account(store)
    if account is None:
        return None
    emails, claim = instructor_settings()
    return account if is_instructor_account(account.email, _claims(), emails, claim) else None


def sign_in_button(label: str = "Sign in", *, key: str) -> None:
    st.button(label, key=key, type="primary", icon="🔑", on_click=st.login)


def account_or_sign_in(store, why: str, *, key: str, icon: str = "🔑") -> Account | None:
    """The signed-in account, or a line saying why to sign in beside the Sign in button (None)."""
    account = signed_in_account(store)
    if account is None:
        st.info(why, icon=icon)
        sign_in_button("Sign in with your account", key=key)
    return account


def account_box(store) -> None:
    """The sidebar's line naming who is signed in, with Sign in / Sign out (nothing without a provider)."""
    if not sign_in_configured():
        return
    account = signed_in_account(store)
    if account is None:
        sign_in_button(key=SIDEBAR_SIGN_IN)
        return
    st.caption(f"Signed in as {escape_markdown(account.email or account.name)}")
    st.button("Sign out", key=SIDEBAR_SIGN_OUT, on_click=_sign_out)


def _sign_out() -> None:
    for key in (ACCOUNT, keys.ATTEMPT_TOKEN, keys.MY_ATTEMPTS, keys.HISTORY_HANDLE, keys.INSTRUCTOR_OK,
                keys.INSTRUCTOR_NAME):
        st.session_state.pop(key, None)
    st.logout()
