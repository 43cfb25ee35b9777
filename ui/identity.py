"""Who is using this browser session: the one place identity comes from.

A signed-in OpenID Connect account (st.login / st.user) when `.streamlit/secrets.toml` has an `[auth]`
section; otherwise nobody is signed in and the drill pages fall back to an anonymous handle and its code.
Instructors are accounts named in the settings (FAULTLINES_INSTRUCTORS e-mails or a FAULTLINES_INSTRUCTOR_CLAIM
such as roles=instructor, or the secrets `instructors` / `instructor_claim`).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from time import monotonic

import streamlit as st
from itsdangerous import BadSignature, URLSafeTimedSerializer

from drills.store.accounts import Account, AccessRefused, email_list, is_instructor_account
from drills.store.lti import LtiVisit
from ui import keys
from ui.runtime import seam
from ui.safe import escape_markdown

K = keys.register("identity", __name__)   # this module's keys (ui.keys holds only shared ones)
ACCOUNT = K.kept("account")              # the signed-in account (drills.store.accounts.Account) this session resolved
SIDEBAR_SIGN_IN = K.kept("sidebar::sign_in")  # the sidebar's Sign in button (a provider is configured)
SIDEBAR_SIGN_OUT = K.kept("sidebar::sign_out")
ACCOUNT_ROW = K("account_row")           # the page's own account row (a phone starts with the sidebar shut)
ROW_SIGN_OUT = K("row_sign_out")
RETURNED = K("returned")                 # the way-back cookie this session has already followed
LTI_VISIT = K.kept("lti_visit")          # the LMS launch this session came in by (drills.store.lti.LtiVisit)
LTI_PARAM = "lti"                        # the one-time code the LTI side app (deploy.lti) hands the page

INSTRUCTORS_ENV = "FAULTLINES_INSTRUCTORS"
INSTRUCTOR_CLAIM_ENV = "FAULTLINES_INSTRUCTOR_CLAIM"


# With no secrets file at all (the normal embedded case) Streamlit looks for every configured file again on each
# read of st.secrets and raises (~40 us, about 0.2 ms a run in all). The absence is kept for a
# second, for the st.secrets it was seen on, so a secrets file added while serving is still found. Which error says
# so is the seam's to know (ui.runtime.seam.no_secrets_file); in plain mode nothing is kept.
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
    except Exception as error:   # no file, or an unreadable one: as before, no secret
        if seam.no_secrets_file(error):
            _no_secrets = (secrets, monotonic())   # one tuple, replaced whole: threads read it without a lock
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


def lti_visit(store) -> LtiVisit | None:
    """The LMS launch this session came in by: its ?lti= code is redeemed once, then leaves the address."""
    code = st.query_params.get(LTI_PARAM)
    if code:
        del st.query_params[LTI_PARAM]
        launch = store.redeem_launch_code(code)
        if launch is None:
            st.warning("That LMS link has been used or is over a minute old: launch again from your course.")
        else:
            st.session_state[LTI_VISIT] = store.lti_visit(launch)
    visit = st.session_state.get(LTI_VISIT)
    return visit if isinstance(visit, LtiVisit) else None


def signed_in_account(store) -> Account | None:
    """The account of the signed-in person, made in `store` at their first visit; None when signed out.

    A session launched from an LMS is signed in as its LTI account."""
    visit = lti_visit(store)
    if visit is not None:
        return visit.account
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
    visit = lti_visit(store)
    if visit is not None:   # the LMS says who teaches: its Instructor and TA roles
        return account if visit.instructor else None
    emails, claim = instructor_settings()
    return account if is_instructor_account(account.email, _claims(), emails, claim) else None


@dataclass(frozen=True)
class WayBack:
    """Where a sign-in started, to go back to once the provider's round trip is over: a page (its URL path,
    "" for the catalogue) and the join code its link carried."""

    page: str = ""
    join: str = ""


# Streamlit's st.login always ends on the app's home page, in a new session with nothing of the old one.
# The page a sign-in starts from is carried across in a cookie the page sets as its Sign in is pressed: signed
# with the auth block's cookie_secret (the cookie is set by script, so it cannot be HttpOnly) and good for ten
# minutes, so a stale or made-up cookie is ignored.
WAY_BACK_COOKIE = "fl_way_back"
WAY_BACK_MAX_AGE_S = 600
_PAGE_PATH = re.compile(r"[a-z0-9_]*")

# Set on the press itself (capture phase, before Streamlit sends it), and only while the browser is still on
# the page that drew the button: the sidebar's Sign in is the same element on every page. No "<" before a
# letter or "/" in it: Streamlit's sanitiser would drop the script.
_WAY_BACK_SCRIPT = """<span data-fl-aids hidden></span><script>
(function () {
  const marks = window.__flWayBack = window.__flWayBack || {};
  for (const cls of %(classes)s) marks[cls] = {page: %(page)s, value: %(value)s};
  if (window.__flWayBackListens) return;
  window.__flWayBackListens = true;
  document.addEventListener("click", (event) => {
    const here = location.pathname.split("/").pop();
    for (const [cls, mark] of Object.entries(window.__flWayBack)) {
      if (mark.page === here && event.target.closest && event.target.closest("." + cls)) {
        document.cookie = %(name)s + "=" + mark.value + "; Max-Age=%(age)d; Path=/; SameSite=Lax";
      }
    }
  }, true);
})();
</script>"""
_FORGET_SCRIPT = (f'<span data-fl-aids hidden></span><script>document.cookie = "{WAY_BACK_COOKIE}=; Max-Age=0; '
                  'Path=/; SameSite=Lax";</script>')


def _way_back_signer() -> URLSafeTimedSerializer | None:
    auth = _secret("auth")
    try:
        secret = auth.get("cookie_secret") if auth else None
    except Exception:
        secret = None
    return URLSafeTimedSerializer(str(secret), salt="faultlines-way-back") if secret else None


def _key_class(key: str) -> str:
    """The CSS class Streamlit gives a keyed element's container (st-key-<key>, other characters as "-")."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def _mark_way_back(way_back: WayBack, key: str) -> None:
    signer = _way_back_signer()
    if signer is None or not _PAGE_PATH.fullmatch(way_back.page):
        return
    value = signer.dumps({"page": way_back.page, "join": way_back.join})
    st.html(_WAY_BACK_SCRIPT % {"classes": json.dumps([_key_class(key), _key_class(SIDEBAR_SIGN_IN)]),
                                "page": json.dumps(way_back.page), "value": json.dumps(value),
                                "name": json.dumps(WAY_BACK_COOKIE), "age": WAY_BACK_MAX_AGE_S},
            unsafe_allow_javascript=True)


def sign_in_button(label: str = "Sign in", *, key: str, way_back: WayBack | None = None) -> None:
    """Sign in with the provider; with `way_back`, the browser comes back there (this page's Sign in and the
    sidebar's alike) instead of the catalogue Streamlit returns to."""
    st.button(label, key=key, type="primary", icon=":material/key:", on_click=st.login)
    if way_back is not None:
        _mark_way_back(way_back, key)


def _way_back_cookie() -> str:
    try:
        return st.context.cookies.get(WAY_BACK_COOKIE) or ""
    except Exception:   # no browser request behind this run (AppTest)
        return ""


def go_back_after_sign_in(store) -> None:
    """On the catalogue, just back from the provider: go to the page the sign-in started from, with its join
    link. Once per session and cookie; a cookie that is stale, forged or names no page is ignored."""
    raw = _way_back_cookie()
    if not raw or st.session_state.get(RETURNED) == raw or signed_in_account(store) is None:
        return
    st.session_state[RETURNED] = raw
    signer = _way_back_signer()
    try:
        mark = signer.loads(raw, max_age=WAY_BACK_MAX_AGE_S) if signer else None
    except BadSignature:   # also a cookie older than its ten minutes (SignatureExpired)
        mark = None
    if not isinstance(mark, dict):
        return
    page, join = str(mark.get("page") or ""), str(mark.get("join") or "")
    if join:
        st.query_params[keys.JOIN_PARAM] = join
    if page and _PAGE_PATH.fullmatch(page):
        try:
            st.switch_page(f"pages/{page}.py", query_params={keys.JOIN_PARAM: join} if join else None)
        except Exception:   # noqa: BLE001 (Streamlit's API error for a page this app no longer has: stay on the
            # catalogue; the switch itself is a BaseException and goes through)
            pass


def account_or_sign_in(store, why: str, *, key: str, icon: str = ":material/key:",
                       way_back: WayBack | None = None) -> Account | None:
    """The signed-in account, or a line saying why to sign in beside the Sign in button (None)."""
    account = signed_in_account(store)
    if account is None:
        st.info(why, icon=icon)
        sign_in_button("Sign in with your account", key=key, way_back=way_back)
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
    if _way_back_cookie():   # followed (or not needed) once signed in: a later visit starts afresh
        st.html(_FORGET_SCRIPT, unsafe_allow_javascript=True)
    st.button("Sign out", key=SIDEBAR_SIGN_OUT, on_click=_sign_out)


def account_row(store) -> None:
    """A row at the top of every page naming the signed-in account, with My history and Sign out: on a phone the
    sidebar, where the account box is, starts collapsed. The page aids (ui/a11y.py) show it only there, so a
    desktop keeps one Sign out. A row, not a popover: a popover's content sits at the end of the page, out of
    the Tab order after its button. Nothing when nobody is signed in."""
    account = signed_in_account(store) if sign_in_configured() else None
    if account is None:
        return
    with st.container(horizontal=True, horizontal_alignment="right", vertical_alignment="center", gap="small",
                      key=ACCOUNT_ROW):
        st.caption(f":material/account_circle: {escape_markdown(account.email or account.name)}", width="content")
        st.page_link("pages/history.py", label="My history", icon=":material/folder_open:")
        st.button("Sign out", key=ROW_SIGN_OUT, on_click=_sign_out, icon=":material/logout:", type="tertiary")


def _sign_out() -> None:
    for key in (ACCOUNT, keys.ATTEMPT_TOKEN, keys.MY_ATTEMPTS, keys.HISTORY_HANDLE, keys.INSTRUCTOR_OK,
                keys.INSTRUCTOR_NAME):
        st.session_state.pop(key, None)
    st.logout()
