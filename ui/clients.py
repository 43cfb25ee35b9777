"""Which browser and network address a guess at a secret comes from, as the store's throttles count them.

The browser is the signed-in account when there is one, else the browser's own cookie (nginx's sticky
fl_backend, else Streamlit's XSRF cookie), hashed so the store never holds a cookie's value; the address
is the one nginx forwards (deploy/nginx.conf.template sets X-Forwarded-For to its peer), trusted only when
the connection comes from the proxy on this host.
"""
from __future__ import annotations

import hashlib
import secrets

import streamlit as st

from drills.store.throttle import Client
from ui import keys
from ui.identity import signed_in_account

K = keys.register("clients", __name__)   # this module's keys (ui.keys holds only shared ones)
SESSION_BROWSER = K.kept("browser")       # a browser with no cookie at all: this session stands for it

BROWSER_COOKIES = ("fl_backend", "_streamlit_xsrf")   # nginx's sticky cookie first: one per browser, HttpOnly
_ADDRESS_LEN = 64


def _context(name: str) -> object:
    try:
        return getattr(st.context, name)
    except Exception:   # no browser connection (a bare script run): nothing to read
        return None


def _browser() -> str:
    cookies = _context("cookies") or {}
    for name in BROWSER_COOKIES:
        value = cookies.get(name)
        if value:
            return "cookie:" + hashlib.sha256(f"{name}={value}".encode()).hexdigest()[:32]
    return "session:" + st.session_state.setdefault(SESSION_BROWSER, secrets.token_hex(16))


def _address() -> str:
    peer = _context("ip_address")
    if peer:   # a client connected straight to this process: its own address, whatever headers it sends
        return str(peer)[:_ADDRESS_LEN]
    # None is a loopback peer: the proxy in front (or a developer's own browser, which sends no header).
    headers = _context("headers") or {}
    forwarded = str(headers.get("X-Forwarded-For") or "").split(",")[-1].strip()
    return forwarded[:_ADDRESS_LEN] or "loopback"


def current_client(store) -> Client:
    """The browser (signed-in account, else cookie) and the address this session's tries are counted by."""
    account = signed_in_account(store)
    return Client(f"account:{account.id}" if account is not None else _browser(), _address())
