"""HTML for st.html kept in the form Streamlit sends it, so a page run does not clean the same kilobytes again.

st.html dedents and strips a string on every call (streamlit.string_util.clean_text): about 80 us for the page
aids' 5 KB and 90-130 us for the clock's 5.6 KB, on every full run; 2 % of the script threads' on-CPU samples under
bench.bench_load. An object with `_repr_html_` is sent as that method returns it, uncleaned, so HTML cleaned once
(or built clean) goes through as it is: the browser receives the same bytes.
"""
from __future__ import annotations

import textwrap


def clean(html: str) -> str:
    """What st.html makes of a string before sending it: dedented, then stripped."""
    return textwrap.dedent(html).strip()


class CleanHtml:
    """HTML already in the form `clean` gives: st.html sends it as it is."""

    __slots__ = ("html",)

    def __init__(self, html: str) -> None:
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


def clean_around(head: str, tail: str) -> tuple[str, str]:
    """`head` and `tail` cleaned as they are around a one-line middle that starts and ends with a tag, so
    head' + middle + tail' is clean(head + middle + tail) (tests/test_clean_html.py checks the clock's)."""
    cleaned = clean(head + "<\x00>" + tail)
    before, after = cleaned.split("<\x00>")
    return before, after
