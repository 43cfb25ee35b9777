"""Signing in through a real OpenID provider: the tests' harness proved on the smallest st.login app.

tests/oidc/provider.mjs (oidc-provider's development login form) on loopback, Streamlit's own
st.login / st.user / st.logout in tests/apps/login_probe.py, and Debian's Chromium between them.
Several app processes accept one sign-in when they share the `[auth]` settings and are reached at the
one origin those settings name, as the class stack serves them behind nginx.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import urllib.request
from pathlib import Path

import pytest

from bench.stack import NGINX, free_port, start_nginx, stop_process
from tests.browser import (
    LOOPBACK_REDIRECT_URI,
    AppServer,
    sign_in_through_provider,
    sign_out_through_provider,
    wait_for_app,
)
from tests.oidc_provider import auth_secrets

pytestmark = pytest.mark.browser
PROBE = "tests/apps/login_probe.py"
COOKIE_SECRET = "the-probe-cookie-secret-shared-by-every-process"
USER_COOKIE = "_streamlit_user"   # Streamlit's signed cookie holding the signed-in account


@pytest.fixture(scope="module")
def probe(tmp_path_factory, oidc_provider):
    server = AppServer(tmp_path_factory.mktemp("probe") / "probe.duckdb", script=PROBE,
                       secrets=auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, COOKIE_SECRET))
    server.start()
    yield server
    server.stop()


def _open(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)


def _claims(page) -> dict:
    text = page.get_by_text(re.compile(r"^Claims: ")).inner_text()
    return json.loads(text.removeprefix("Claims: "))


def test_sign_in_through_the_real_form_lasts_a_reload_and_signing_out_ends_it(page, probe, oidc_provider):
    _open(page, probe.url)
    page.get_by_text("Signed out").wait_for()
    assert not [c for c in page.context.cookies() if c["name"] == USER_COOKIE]

    sign_in_through_provider(page, "ada@school.test")
    page.get_by_text("Signed in as ada@school.test").wait_for()
    claims = _claims(page)
    assert (claims["is_logged_in"], claims["sub"], claims["email_verified"], claims["name"]) == (
        True, "ada@school.test", True, "ada")
    assert claims["iss"] == oidc_provider.issuer   # the ID token of the provider the browser signed in at
    assert [c["httpOnly"] for c in page.context.cookies(probe.url) if c["name"] == USER_COOKIE] == [True]

    page.reload()
    wait_for_app(page)
    page.get_by_text("Signed in as ada@school.test").wait_for()

    sign_out_through_provider(page)
    page.get_by_text("Signed out").wait_for()
    assert not [c for c in page.context.cookies(probe.url) if c["name"] == USER_COOKIE]
    page.reload()
    wait_for_app(page)
    page.get_by_text("Signed out").wait_for()

    # Streamlit asks the provider to let the user pick an account (prompt=select_account): the login
    # form comes back, and a plain login becomes login@example.test.
    sign_in_through_provider(page, "bea")
    page.get_by_text("Signed in as bea@example.test").wait_for()


def test_a_claim_given_to_one_login_reaches_st_user(page, probe, oidc_provider):
    oidc_provider.set_claims("ines@school.test", {"roles": ["instructor"], "groups": ["cohort-7"]})
    _open(page, probe.url)
    sign_in_through_provider(page, "ines@school.test")
    claims = _claims(page)
    assert (claims["roles"], claims["groups"]) == (["instructor"], ["cohort-7"])
    assert claims["iss"] == oidc_provider.issuer


def test_a_sign_in_cookie_reaches_another_port_but_is_refused_there(page, probe, oidc_provider, tmp_path):
    """Cookies are kept per host, not per port: the browser sends process A's cookie to process B on
    another port of 127.0.0.1, and B (same cookie_secret) can check its signature, but Streamlit only
    accepts it from the origin of the redirect_uri it was issued for, so B shows nobody signed in."""
    other = AppServer(tmp_path / "other.duckdb", script=PROBE,
                      secrets=auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, COOKIE_SECRET))
    other.start()
    try:
        _open(page, probe.url)
        sign_in_through_provider(page, "cy@school.test")
        page.get_by_text("Signed in as cy@school.test").wait_for()
        assert [c["name"] for c in page.context.cookies(other.url) if c["name"] == USER_COOKIE] == [USER_COOKIE]
        _open(page, other.url)
        page.get_by_text("Signed out").wait_for()
        assert "Origin mismatch" in other.log_path.read_text(), "B refuses it for its origin, not its signature"
        _open(page, probe.url)
        page.get_by_text("Signed in as cy@school.test").wait_for()
    finally:
        other.stop()


BACKEND_HEADER = "x-faultlines-backend"


def _sticky_cookie_for(url: str, backend_port: int) -> str:
    """A fl_backend value nginx hashes to the app process on `backend_port`."""
    for n in range(200):
        request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"fl_backend=pin-{n}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            if response.headers[BACKEND_HEADER] == f"127.0.0.1:{backend_port}":
                return f"pin-{n}"
    raise AssertionError(f"no fl_backend value reaches 127.0.0.1:{backend_port}")


def test_behind_one_origin_every_process_sharing_the_cookie_secret_accepts_one_sign_in(chromium, oidc_provider,
                                                                                      tmp_path):
    """The class stack: processes behind nginx, with one `[auth]` block naming nginx's origin. A sign-in
    made through process A is accepted by process B (same cookie_secret) and refused by process C,
    whose cookie_secret differs."""
    if shutil.which(NGINX) is None:
        pytest.fail(f"{NGINX} is missing: install Debian's nginx (apt-get install nginx)")
    nginx_port = free_port()
    front = f"http://127.0.0.1:{nginx_port}"
    shared = auth_secrets(oidc_provider, f"{front}/oauth2callback", COOKIE_SECRET)
    other_secret = auth_secrets(oidc_provider, f"{front}/oauth2callback", "a-different-cookie-secret-entirely")
    servers = [AppServer(tmp_path / f"{name}.duckdb", script=PROBE, secrets=secrets)
               for name, secrets in (("a", shared), ("b", shared), ("c", other_secret))]
    run_dir = Path(tempfile.mkdtemp(prefix="faultlines-oidc-nginx-"))
    nginx = None
    try:
        for server in servers:
            server.start()
        nginx = start_nginx(nginx_port, [s.port for s in servers], run_dir)
        url = front
        a, b, c = (_sticky_cookie_for(url, server.port) for server in servers)
        context = chromium.new_context(viewport={"width": 1300, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(30000)
        context.add_cookies([{"name": "fl_backend", "value": a, "url": url}])
        response = page.goto(url)
        assert response.headers[BACKEND_HEADER] == f"127.0.0.1:{servers[0].port}"
        wait_for_app(page)
        sign_in_through_provider(page, "dee@school.test")
        page.get_by_text("Signed in as dee@school.test").wait_for()

        for pin, server, shown in ((b, servers[1], "Signed in as dee@school.test"), (c, servers[2], "Signed out")):
            context.add_cookies([{"name": "fl_backend", "value": pin, "url": url}])
            response = page.goto(url)
            assert response.headers[BACKEND_HEADER] == f"127.0.0.1:{server.port}"
            wait_for_app(page)
            page.get_by_text(shown).wait_for()
        context.close()
    finally:
        stop_process(nginx)
        for server in servers:
            server.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
