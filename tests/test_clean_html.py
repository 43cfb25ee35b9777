"""HTML kept clean once is sent by st.html as Streamlit would send the string (ui/runtime/clean_html.py)."""
from __future__ import annotations

import pytest
from streamlit.string_util import clean_text
from streamlit.testing.v1 import AppTest

from drills.timebox import Clock
from ui import a11y
from ui.drill import browser_clock
from ui.drill.browser_clock import ClockView, clock_markup
from ui.runtime.clean_html import CleanHtml, clean


def _sent() -> None:
    import streamlit as st

    from ui.runtime.clean_html import CleanHtml

    st.html("\n   <p>as a string</p>   \n")
    st.html(CleanHtml("\n   <p>as kept</p>   \n"))


def test_st_html_cleans_a_string_and_sends_repr_html_as_it_is():
    # The Streamlit behaviour this leans on: a string is dedented and stripped (clean_text) on every call, an
    # object's _repr_html_() is sent untouched. If either changes, this fails.
    at = AppTest.from_function(_sent).run()
    bodies = [element.proto.body for element in at.get("html")]
    assert bodies == ["<p>as a string</p>", "\n   <p>as kept</p>   \n"]
    for html in ("\n  <style>a {}</style>\n", "  x\n    y\n", "\n<script>\n  \n</script>\n"):
        assert clean(html) == clean_text(html)


def test_the_page_aids_are_the_bytes_streamlit_would_send():
    raw = a11y._STYLE + a11y._SCRIPT % {"id": f'"{a11y.SKIP_LINK_ID}"'}
    assert isinstance(a11y._AIDS, CleanHtml) and a11y._AIDS.html == clean_text(raw)


@pytest.mark.parametrize("limit, elapsed, finished, extra", [(600, 10, False, 0), (600, 700, False, 60),
                                                              (1800, 300, True, 0), (60, 59.5, False, 30)])
@pytest.mark.parametrize("compact", [False, True])
def test_a_clock_is_the_bytes_streamlit_would_send_for_the_string_it_was(limit, elapsed, finished, extra, compact):
    clock = Clock(limit, elapsed, limit - elapsed, finished)
    view = ClockView(1000.0, limit, extra, 1000.0 + elapsed, clock)
    markup = clock_markup(view, compact=compact, with_script=False)
    assert "\n" not in markup and clean_text(markup) == markup
    before = browser_clock._STYLE + markup + browser_clock._TICKING   # what clock_markup returned before
    assert clock_markup(view, compact=compact) == clean_text(before)
