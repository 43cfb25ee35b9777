"""Build the theme part of Streamlit's new_session message once per config, not once per script run.

Streamlit starts every script run, a fragment's own run included, with a new_session message that carries the
theme. It builds that theme six times over (the theme, its light and dark variants and their sidebars), and
each time scans every config option: about a fifth of the server's CPU per lock-in under bench.bench_load
(py-spy, `_populate_theme_msg`). The theme only changes when the config files are parsed again, so this keeps
each section's built message and hands out a copy; a new parse drops what was kept.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from streamlit import config
from streamlit.runtime import app_session

_lock = threading.Lock()
_built: dict[str, bytes] = {}   # section ("theme", "theme.light", ...) -> its CustomThemeConfig, serialised


def _forget() -> None:
    with _lock:
        _built.clear()


def cached(populate: Callable) -> Callable:
    """`populate(msg, section)` that builds each section once and merges a copy into `msg` after that."""
    def populate_once(msg, section: str = "theme") -> None:
        with _lock:
            found = _built.get(section)
        if found is None:
            fresh = type(msg)()
            populate(fresh, section)
            found = fresh.SerializeToString()
            with _lock:
                _built[section] = found
        msg.MergeFromString(found)

    populate_once.__wrapped__ = populate
    return populate_once


def install() -> None:
    """Once per process (app.py calls it on every run): later calls find it installed."""
    current = getattr(app_session, "_populate_theme_msg", None)
    if current is None or hasattr(current, "__wrapped__"):   # a Streamlit without it, or done already
        return
    with _lock:
        if hasattr(app_session._populate_theme_msg, "__wrapped__"):
            return
        config.on_config_parsed(_forget, force_connect=True)   # a config edited while serving builds afresh
        app_session._populate_theme_msg = cached(current)
