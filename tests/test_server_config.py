"""The server settings that `streamlit run app.py` picks up from the project's .streamlit/config.toml."""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit import config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def project_config(monkeypatch):
    """Streamlit's options as a server started in the repository reads them (config.toml from the working dir)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("STREAMLIT_RUNNER_POST_SCRIPT_GC", raising=False)
    config.get_config_options(force_reparse=True)
    yield config
    config.get_config_options(force_reparse=True)


def test_a_script_run_ends_without_a_full_garbage_collection(project_config):
    # Streamlit runs gc.collect(2) after every script run unless told not to. On this app's heap that full
    # collection was 44% of the server's CPU under bench.bench_load (1.07 CPU-s per session with it, 0.36
    # without), which held a process to about ten candidates pressing Lock in. Python's own generational
    # collector still runs, so memory stays bounded (RSS 242 MB with, 256 MB without, after 90 sessions).
    assert project_config.get_option("runner.postScriptGC") is False


def test_the_project_config_is_the_one_read(project_config):
    # The check above would pass vacuously if the file were not found: its other settings must show too.
    assert project_config.get_option("client.toolbarMode") == "minimal"
    assert project_config.get_option("server.runOnSave") is False
