"""Showing user text safely: never as HTML, and with markdown syntax neutralised.

Content written by the project is trusted markdown; anything a user typed goes through here.
"""
from __future__ import annotations

import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character markdown (or Streamlit's extensions) would interpret."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))
