"""The theme Streamlit sends at the start of every run is built once per config (ui/runtime/theme_cache.py)."""
from __future__ import annotations

from streamlit import config
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from ui.runtime import theme_cache

SECTIONS = ("theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar", "theme.dark.sidebar")


def _built(populate, section: str) -> bytes:
    msg = CustomThemeConfig()
    populate(msg, section)
    return msg.SerializeToString()


def test_the_kept_theme_is_the_one_streamlit_builds_and_is_built_once(monkeypatch):
    config.get_config_options(force_reparse=True)   # the repository's .streamlit/config.toml: a custom theme
    monkeypatch.setattr(theme_cache, "_built", {})
    original = getattr(app_session._populate_theme_msg, "__wrapped__", app_session._populate_theme_msg)
    scans = []
    monkeypatch.setattr(config, "get_options_for_section",
                        lambda section, scan=config.get_options_for_section: scans.append(section) or scan(section))
    once = theme_cache.cached(original)
    for section in SECTIONS:
        assert _built(once, section) == _built(original, section)
    assert _built(original, "theme"), "the repository's config sets a theme, so there is something to keep"
    expected = {section: _built(original, section) for section in SECTIONS}
    scans.clear()
    for section in SECTIONS:
        assert _built(once, section) == _built(once, section) == expected[section]
    assert scans == [], "a kept section is not built again"

    theme_cache._forget()   # what a new parse of the config files does
    assert _built(once, "theme") == expected["theme"]
    assert "theme" in scans


def test_install_wraps_streamlit_once(monkeypatch):
    original = getattr(app_session._populate_theme_msg, "__wrapped__", app_session._populate_theme_msg)
    monkeypatch.setattr(app_session, "_populate_theme_msg", original)
    monkeypatch.setattr(config, "on_config_parsed", lambda func, force_connect=False, lock=False: None)
    monkeypatch.setattr(theme_cache, "_installed", False)   # an AppTest before this one installed it for real
    monkeypatch.delenv("FAULTLINES_PLAIN_STREAMLIT", raising=False)
    theme_cache.install()
    installed = app_session._populate_theme_msg
    theme_cache.install()
    assert installed.__wrapped__ is original and app_session._populate_theme_msg is installed


def test_in_plain_mode_the_theme_is_built_every_time(monkeypatch):
    monkeypatch.setenv("FAULTLINES_PLAIN_STREAMLIT", "1")
    monkeypatch.setattr(theme_cache, "_built", {})
    calls = []
    once = theme_cache.cached(lambda msg, section: calls.append(section))
    once(CustomThemeConfig(), "theme")
    once(CustomThemeConfig(), "theme")
    assert calls == ["theme", "theme"] and theme_cache._built == {}
    original = getattr(app_session._populate_theme_msg, "__wrapped__", app_session._populate_theme_msg)
    monkeypatch.setattr(app_session, "_populate_theme_msg", original)
    monkeypatch.setattr(theme_cache, "_installed", False)
    theme_cache.install()
    assert app_session._populate_theme_msg is original, "plain mode leaves Streamlit's builder in place"
