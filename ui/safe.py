"""Showing user text safely: never as HTML, and with markdown syntax neutralised.

Content written by the project is trusted markdown; anything a user typed goes through here.
"""
from __future__ import annotations

import re

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
WORD_JOINER = "\u2060"   # invisible, and no letter of a link's or an icon's name
# Streamlit's markdown finds icons (":material/lock:") and GFM's bare links ("www.x.org", "http://x.org") in the
# text after backslash escapes are undone, so escaping cannot stop them: a word joiner after each colon and
# inside each "www." breaks the pattern and shows the same text. E-mail addresses are left as they are (a mail
# link at most), so an account's address reads and copies as itself.
_LINK_OR_ICON = re.compile(r"\\:|www(?=\\\.)", re.IGNORECASE)   # in the escaped text: "\:" and "www\."


def escape_markdown(text: str) -> str:
    """Backslash-escape every character markdown (or Streamlit's extensions) would interpret, and break the
    patterns of links and icons markdown would draw from the text anyway."""
    escaped = _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))
    return _LINK_OR_ICON.sub(lambda found: found.group(0) + WORD_JOINER, escaped)
