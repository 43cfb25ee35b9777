"""Build the theme part of Streamlit's new_session message once per config, not once per script run.

Streamlit starts every script run, a fragment's own run included, with a new_session message that carries the
theme. It builds that theme six times over (the theme, its light and dark variants and their sidebars), and
each time scans every config option: about a fifth of the server's CPU per lock-in under bench.bench_load
(py-spy, `_populate_theme_msg`). The theme only changes when the config files are parsed again, so this keeps
each section's built message and hands out a copy; a new parse drops what was kept. Streamlit's builder is
replaced through ui.runtime.seam; in plain mode the replacement builds every time, as Streamlit does.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from ui.runtime import seam

_lock = threading.Lock()
_built: dict[str, bytes] = {}   # section ("theme", "theme.light", ...) -> its CustomThemeConfig, serialised
_installed = False


def _forget() -> None:
    with _lock:
        _built.clear()


def cached(populate: Callable) -> Callable:
    """`populate(msg, section)` that builds each section once and merges a copy into `msg` after that."""
    def populate_once(msg, section: str = "theme") -> None:
        if seam.plain():
            populate(msg, section)
            return
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
    global _installed
    if _installed:
        return
    with _lock:
        if not _installed and not seam.plain():   # in plain mode Streamlit keeps its own builder
            seam.replace_theme_builder(cached, _forget)
            _installed = True
