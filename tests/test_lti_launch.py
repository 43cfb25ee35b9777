"""An LTI 1.3 launch from a stand-in LMS (tests/lti_platform.py) into the tool's side app, over HTTP on
127.0.0.1, and each refusal the launch promises: a replayed nonce, a missing or wrong state, a wrong
audience, an expired token, an unknown deployment and a bad signature. Plus the one-time code's rules."""
from __future__ import annotations

import json
import re
import threading
from html import unescape
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from werkzeug.serving import make_server

from deploy.lti.app import create_app
from deploy.lti.keys import add_key, key_set
from deploy.lti.settings import SettingsError, load_settings
from drills.backends import open_store
from tests.lti_lms import Clock, tool_key  # noqa: F401 - the shared fixture
from tests.lti_platform import CLAIM, Platform, new_key

INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"



@pytest.fixture(scope="module")
def lms():
    with Platform() as platform:
        yield platform


@pytest.fixture(scope="module")
def stranger_key():
    return new_key()


@pytest.fixture
def tool(tmp_path, lms, tool_key):
    """The side app on a free loopback port, its store on a clock the test moves."""
    clock = Clock()
    store = open_store(tmp_path / "lti.duckdb", clock=clock)
    settings_file = tmp_path / "lti.json"
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / tool_key.name).write_bytes(tool_key.read_bytes())
    server = make_server("127.0.0.1", 0, lambda environ, start: [], threaded=True)   # the app comes once its URL is known
    url = f"http://127.0.0.1:{server.server_port}/lti"
    settings_file.write_text(json.dumps({"app_url": "http://127.0.0.1:8501/", "tool_url": url,
                                         "key_dir": "keys", "platforms": [lms.registration()]}))
    server.app = create_app(load_settings(settings_file), store)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url, store, clock, tmp_path / "keys"
    finally:
        server.shutdown()
        thread.join(timeout=5)
        store.close()


def login(lms, url) -> tuple[httpx.Client, str]:
    client = httpx.Client(timeout=10)
    reply = client.get(url + "/login", params=lms.login_params(url))
    assert reply.status_code == 302, reply.text
    assert reply.headers["location"].startswith(lms.url + "/lms/auth")
    return client, reply.headers["location"]


def launch(client, url, token, state):
    return client.post(url + "/launch", data={"id_token": token, "state": state})


def code_of(reply) -> str:
    link = unescape(re.search(r"id=continue href='([^']+)'", reply.text).group(1))
    return parse_qs(urlparse(link).query)["lti"][0]


def test_a_launch_hands_the_app_a_code_it_redeems_once(lms, tool):
    url, store, clock, _ = tool
    client, redirect = login(lms, url)
    query = parse_qs(urlparse(redirect).query)
    assert query["redirect_uri"] == [url + "/launch"] and query["client_id"] == [lms.client_id]
    token, state = lms.id_token(redirect, **{CLAIM + "roles": [INSTRUCTOR]})
    reply = launch(client, url, token, state)
    assert reply.status_code == 200, reply.text
    assert "target=_blank" in reply.text   # "open in a new tab" is offered
    code = code_of(reply)
    record = store.redeem_launch_code(code)
    assert record["subject"] == "user-7" and record["issuer"] == lms.issuer
    assert record["client_id"] == lms.client_id and record["deployment_id"] == lms.deployment_id
    assert record["context_id"] == "course-42" and record["context_title"] == "Systems 101"
    assert record["instructor"] is True and record["custom"] == {"drill": "one-tenant"}
    assert store.redeem_launch_code(code) is None   # single use


def test_a_learner_is_not_an_instructor(lms, tool):
    url, store, _, _ = tool
    client, redirect = login(lms, url)
    reply = launch(client, url, *lms.id_token(redirect))
    assert store.redeem_launch_code(code_of(reply))["instructor"] is False


def test_a_code_lives_60_seconds(lms, tool):
    _, store, clock, _ = tool
    fresh = store.issue_launch_code({"subject": "a"})
    clock.now += 59
    assert store.redeem_launch_code(fresh) == {"subject": "a"}
    stale = store.issue_launch_code({"subject": "b"})
    clock.now += 61
    assert store.redeem_launch_code(stale) is None
    assert store.redeem_launch_code("not-a-code-at-all") is None


def test_a_replayed_launch_is_refused(lms, tool):
    url, _, _, _ = tool
    client, redirect = login(lms, url)
    token, state = lms.id_token(redirect)
    assert launch(client, url, token, state).status_code == 200
    again = launch(client, url, token, state)
    assert again.status_code == 400 and "lti=" not in again.text


def test_the_nonce_is_one_use_across_processes(lms, tool):
    """A second process of the class shares the store, so the nonce a first one accepted stays spent."""
    _, store, _, _ = tool
    assert store.use_lti_nonce("iss", "n-1", 4_102_444_800) is True
    assert store.use_lti_nonce("iss", "n-1", 4_102_444_800) is False
    assert store.use_lti_nonce("iss", "", 4_102_444_800) is False


@pytest.mark.parametrize("state", ["", "state-the-tool-never-made"])
def test_a_missing_or_wrong_state_is_refused(lms, tool, state):
    url, _, _, _ = tool
    client, redirect = login(lms, url)
    token, _ = lms.id_token(redirect)
    reply = launch(client, url, token, state)
    assert reply.status_code == 400 and "lti=" not in reply.text


def test_a_launch_without_the_login_cookie_is_refused(lms, tool):
    url, _, _, _ = tool
    _, redirect = login(lms, url)
    reply = launch(httpx.Client(timeout=10), url, *lms.id_token(redirect))
    assert reply.status_code == 400 and "new window" in reply.text


@pytest.mark.parametrize("claims", [
    {"aud": "some-other-tool"},                                   # wrong audience
    {"exp": 1_000_000_600},                                       # expired (2001)
    {CLAIM + "deployment_id": "dep-unknown"},                     # unknown deployment
    {"nonce": "a-nonce-the-tool-never-issued"},                   # nonce not from this login
], ids=["audience", "expired", "deployment", "foreign-nonce"])
def test_a_bent_claim_is_refused(lms, tool, claims):
    url, store, _, _ = tool
    client, redirect = login(lms, url)
    reply = launch(client, url, *lms.id_token(redirect, **claims))
    assert reply.status_code == 400 and "lti=" not in reply.text


@pytest.mark.parametrize("kid", [None, "a-key-the-lms-never-published"], ids=["wrong-key", "unknown-kid"])
def test_a_bad_signature_is_refused(lms, tool, kid, stranger_key):
    url, _, _, _ = tool
    client, redirect = login(lms, url)
    reply = launch(client, url, *lms.id_token(redirect, key=stranger_key, kid=kid))
    assert reply.status_code == 400 and "lti=" not in reply.text


def test_the_key_set_publishes_every_key_and_rotation_adds_one(lms, tool):
    url, _, _, keys = tool
    first = httpx.get(url + "/jwks", timeout=10).json()["keys"]
    assert len(first) == 1 and first[0]["kty"] == "RSA" and first[0]["kid"] and "d" not in first[0]
    add_key(keys, now=4_000_000_000)
    second = key_set(keys)["keys"]
    assert len(second) == 2 and first[0]["kid"] in {k["kid"] for k in second}


def test_settings_name_what_is_missing(tmp_path, monkeypatch):
    path = tmp_path / "lti.json"
    path.write_text(json.dumps({"app_url": "x", "tool_url": "y", "key_dir": "k",
                                "platforms": [{"issuer": "https://lms"}]}))
    with pytest.raises(SettingsError, match="client_id"):
        load_settings(path)
    with pytest.raises(SettingsError, match="FAULTLINES_LTI_SETTINGS"):
        monkeypatch.delenv("FAULTLINES_LTI_SETTINGS", raising=False)
        load_settings(None)
