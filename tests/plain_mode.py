"""The suite's second pass: the AppTest tests again, with every Streamlit-internals optimisation off.

`python -m tests` loads this plugin (`-p tests.plain_mode`) for a second pytest run with FAULTLINES_PLAIN_STREAMLIT=1
(ui.runtime.seam.plain), so every promise the AppTest tests hold is shown on stock Streamlit too. Only tests that
drive an AppTest are kept: the browser walks and the servers are not run twice (their time is most of the suite's).
"""
from __future__ import annotations

import inspect

import pytest

PLAIN_ENV = "FAULTLINES_PLAIN_STREAMLIT"
# Fixtures that start a real server or a browser: a test asking for one is a walk, not an AppTest run.
SERVER_FIXTURES = {"page", "chromium", "app_server", "module_app_server", "oidc_provider"}


def drives_apptest(item: pytest.Item) -> bool:
    """Whether `item` runs pages through AppTest (the app_test fixture, or AppTest named in its own code) and
    starts no server or browser."""
    names = set(getattr(item, "fixturenames", ()))
    if names & SERVER_FIXTURES:
        return False
    if "app_test" in names:
        return True
    function = getattr(item, "function", None)
    try:
        return function is not None and "AppTest" in inspect.getsource(function)
    except (OSError, TypeError):
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = [item for item in items if drives_apptest(item)]
    config.hook.pytest_deselected(items=[item for item in items if not drives_apptest(item)])
    items[:] = kept


def pytest_report_header(config: pytest.Config) -> str:
    return f"plain mode ({PLAIN_ENV}=1): the AppTest tests with Streamlit's internals left alone"
