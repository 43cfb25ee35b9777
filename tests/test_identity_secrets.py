"""With no secrets file, ui.identity looks for one once a second, not on every read of st.secrets."""
from __future__ import annotations

import pytest
import streamlit as st
from streamlit import config
from streamlit.errors import StreamlitSecretNotFoundError
from streamlit.runtime.secrets import Secrets

from ui import identity


def test_streamlit_raises_secret_not_found_without_a_file(tmp_path, monkeypatch):
    # The Streamlit behaviour the kept absence leans on: with no file, every read looks again and raises this.
    # Were it to return nothing instead, the absence would simply never be kept (each read as before).
    monkeypatch.setattr(config, "get_option",
                        lambda name, get=config.get_option: [str(tmp_path / "none.toml")] if name == "secrets.files"
                        else get(name))
    with pytest.raises(StreamlitSecretNotFoundError):
        Secrets().get("auth")


class _CountedSecrets:
    """An st.secrets with no file: every read raises, and is counted."""

    def __init__(self) -> None:
        self.reads = 0

    def get(self, name):
        self.reads += 1
        raise StreamlitSecretNotFoundError("no-secrets-found")


def test_no_secrets_file_is_looked_for_once_a_second(monkeypatch):
    monkeypatch.delenv("FAULTLINES_PLAIN_STREAMLIT", raising=False)   # the optimisation itself, in either pass
    clock = [100.0]
    monkeypatch.setattr(identity, "monotonic", lambda: clock[0])
    monkeypatch.setattr(identity, "_no_secrets", (None, float("-inf")))
    missing = _CountedSecrets()
    monkeypatch.setattr(st, "secrets", missing)
    assert not identity.sign_in_configured() and identity._secret("instructors") is None
    assert missing.reads == 1
    clock[0] += identity.NO_SECRETS_KEPT_S
    assert not identity.sign_in_configured()
    assert missing.reads == 2, "a second later it looks again, so a file added while serving is found"

    other = {"auth": {"client_id": "x"}}   # another st.secrets (AppTest's) is read at once
    monkeypatch.setattr(st, "secrets", other)
    assert identity.sign_in_configured()


def test_in_plain_mode_every_read_asks_streamlit(monkeypatch):
    monkeypatch.setenv("FAULTLINES_PLAIN_STREAMLIT", "1")
    monkeypatch.setattr(identity, "monotonic", lambda: 100.0)
    monkeypatch.setattr(identity, "_no_secrets", (None, float("-inf")))
    missing = _CountedSecrets()
    monkeypatch.setattr(st, "secrets", missing)
    assert not identity.sign_in_configured() and identity._secret("instructors") is None
    assert missing.reads == 2, "nothing is kept: each read looks for the file as stock Streamlit does"
