"""app.py's pages are built once per process and each run navigates its own copies (ui/frame.declared_pages); in
plain mode they are built every run, as stock Streamlit does."""
from __future__ import annotations

import pytest
import streamlit as st
from streamlit.errors import StreamlitAPIException

from ui import frame
from ui.runtime import seam


@pytest.fixture(autouse=True)
def optimised(request, monkeypatch):
    """These tests hold the optimisation itself, so they run with it on even in the suite's plain pass; the
    plain-mode test below turns it off."""
    if request.node.name != "test_in_plain_mode_every_run_builds_its_pages":
        monkeypatch.delenv(seam.PLAIN_ENV, raising=False)


def _declared_in_app(app_test) -> frame.Sections:
    """The process's pages after app.py has run twice: the first run builds them, or a test before did."""
    at = app_test("app.py").run()
    at.run()
    assert not at.exception
    assert frame._declared is not None, "app.py's pages are kept for the process"
    return frame._declared


def test_the_kept_pages_are_plain_streamlit_pages_that_copy_cleanly(app_test):
    # Streamlit internals this leans on: st.navigation marks the page it returns in the page's own __dict__
    # (`_can_be_called`), and nothing in a page is mutable, so a shallow copy per run is a page of its own.
    # If a Streamlit release changes either, _copies_cleanly turns the kept pages off (built every run again)
    # and this test says why.
    declared = _declared_in_app(app_test)
    assert frame._copies_cleanly(declared)
    pages = [page for section in declared.values() for page in section]
    assert len(pages) == 16               # app.py declares sixteen pages
    assert all(page._can_be_called is False for page in pages), "no kept page was ever handed to st.navigation"


def test_a_runs_copies_carry_their_own_flag(app_test):
    declared = _declared_in_app(app_test)
    this_run = frame.declared_pages(lambda: {})
    assert this_run.keys() == declared.keys()
    for section, kept_pages in declared.items():
        for kept, copied in zip(kept_pages, this_run[section], strict=True):
            assert copied is not kept and vars(copied) == vars(kept)
    kept, copied = declared["Drills"][0], this_run["Drills"][0]
    copied._can_be_called = True   # what st.navigation does to the page it returns
    copied.run()   # outside a script run it only checks and clears the flag: on the copy
    assert copied._can_be_called is False and kept._can_be_called is False
    with pytest.raises(StreamlitAPIException, match="cannot be called directly"):
        kept.run()   # the flag st.navigation sets is the one Page.run checks


def test_pages_that_do_not_copy_cleanly_are_built_every_run(monkeypatch):
    monkeypatch.setattr(frame, "_declared", None)
    built = []

    def declare():
        built.append(object())
        return {"Drills": [st.Page("pages/home.py", title="Catalogue")]}   # no script run: a bare page

    first, second = frame.declared_pages(declare), frame.declared_pages(declare)
    assert len(built) == 2 and frame._declared is None
    assert first["Drills"][0] is not second["Drills"][0]


def test_in_plain_mode_every_run_builds_its_pages(app_test, monkeypatch):
    monkeypatch.setenv(seam.PLAIN_ENV, "1")
    built = []

    def declare():
        built.append({"Drills": [st.Page("pages/home.py", title="Catalogue")]})
        return built[-1]

    kept = {"Drills": [st.Page("pages/drill.py", title="Drill")]}
    monkeypatch.setattr(frame, "_declared", kept)   # pages an optimised run of this process kept earlier
    first, second = frame.declared_pages(declare), frame.declared_pages(declare)
    assert (first, second) == (built[0], built[1]), "plain mode builds afresh, whatever the process kept"
    monkeypatch.setattr(frame, "_declared", None)
    at = app_test("app.py").run()
    assert not at.exception, "app.py runs on pages built afresh"
