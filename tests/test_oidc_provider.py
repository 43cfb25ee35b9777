"""The sign-in tests' OpenID provider without a browser: its start-up, its client, and its loud failures."""
from __future__ import annotations

import http.client
import json
import tomllib
import urllib.parse
import urllib.request

import pytest

from tests import oidc_provider as harness
from tests.oidc_provider import OidcProvider, OidcProviderError, auth_secrets


def _authorize(provider: OidcProvider, redirect_uri: str, **extra) -> http.client.HTTPResponse:
    """The authorization request st.login's Authlib client makes, answered without following redirects."""
    query = urllib.parse.urlencode({"client_id": provider.client_id, "response_type": "code",
                                    "scope": "openid email profile", "redirect_uri": redirect_uri,
                                    "state": "s", "nonce": "n", "prompt": "select_account",
                                    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
                                    "code_challenge_method": "S256", **extra})
    host = urllib.parse.urlsplit(provider.issuer)
    connection = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    connection.request("GET", f"/auth?{query}")
    return connection.getresponse()


def test_the_provider_serves_its_metadata_and_takes_st_login_requests_from_any_loopback_port(oidc_provider):
    with urllib.request.urlopen(oidc_provider.metadata_url, timeout=10) as response:
        metadata = json.load(response)
    assert metadata["issuer"] == oidc_provider.issuer
    assert oidc_provider.issuer.startswith("http://127.0.0.1:")
    assert "S256" in metadata["code_challenge_methods_supported"]   # Streamlit then sends PKCE
    assert {"roles", "groups", "email", "name"} <= set(metadata["claims_supported"])
    for redirect in ("http://localhost:8501/oauth2callback", "http://127.0.0.1:41234/oauth2callback"):
        response = _authorize(oidc_provider, redirect)
        assert response.status == 303 and "/interaction/" in response.getheader("Location"), redirect


@pytest.mark.parametrize("redirect", ["http://evil.test:8501/oauth2callback", "http://localhost:8501/elsewhere",
                                      "https://localhost:8501/oauth2callback"])
def test_the_provider_refuses_a_redirect_its_client_does_not_name(oidc_provider, redirect):
    response = _authorize(oidc_provider, redirect)
    assert response.status == 400
    assert "redirect_uri" in response.read().decode()


def test_a_named_redirect_list_replaces_the_loopback_default(tmp_path):
    only = "http://127.0.0.1:9999/oauth2callback"
    with OidcProvider(redirect_uris=[only], log_path=tmp_path / "provider.log") as provider:
        assert _authorize(provider, only).status == 303
        assert _authorize(provider, "http://127.0.0.1:9998/oauth2callback").status == 400
        proc = provider.proc
    assert proc.returncode == 0, "SIGTERM ends it cleanly"


def test_auth_secrets_is_the_auth_block_streamlit_reads(oidc_provider):
    text = auth_secrets(oidc_provider, "http://127.0.0.1:{port}/oauth2callback", 'a "quoted" secret')
    assert tomllib.loads(text) == {"auth": {
        "redirect_uri": "http://127.0.0.1:{port}/oauth2callback", "cookie_secret": 'a "quoted" secret',
        "client_id": oidc_provider.client_id, "client_secret": oidc_provider.client_secret,
        "server_metadata_url": f"{oidc_provider.issuer}/.well-known/openid-configuration"}}
    with pytest.raises(ValueError, match="oauth2callback"):
        auth_secrets(oidc_provider, "http://127.0.0.1:8501/", "secret")


def test_an_unreleasable_claim_is_refused_before_any_sign_in(oidc_provider):
    with pytest.raises(ValueError, match="would not reach the app"):
        oidc_provider.set_claims("zoe@school.test", {"department": "physics"})


def test_missing_node_or_node_modules_fails_saying_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(harness.shutil, "which", lambda name: None)
    with pytest.raises(OidcProviderError, match="node is missing.*apt-get install nodejs npm"):
        OidcProvider().start()
    monkeypatch.undo()
    monkeypatch.setattr(harness, "PACKAGE", tmp_path / "node_modules" / "oidc-provider" / "package.json")
    with pytest.raises(OidcProviderError, match="npm ci"):
        OidcProvider().start()
