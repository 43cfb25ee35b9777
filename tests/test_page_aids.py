"""The page-level aids' server side: the compact page clock beside the sidebar's, the confirmations drawn in the
page (not as toasts), and scripts that survive the frontend's sanitiser."""
from __future__ import annotations

import re

import pytest

from drills.timebox import Clock
from ui import a11y
from ui.drill import browser_clock
from ui.drill.browser_clock import ClockView, clock_markup
from ui.runtime import seam

STARTED = 1_790_000_000.0


def _compact(limit: float, elapsed: float, *, extra: float = 0.0) -> str:
    clock = Clock(limit_s=limit, elapsed_s=elapsed, remaining_s=limit - elapsed, finished=False)
    return clock_markup(ClockView(STARTED, limit, extra, STARTED + elapsed, clock), compact=True)


@pytest.mark.parametrize("module", [a11y, browser_clock])
def test_scripts_hold_no_text_the_sanitiser_drops(module):
    """st.html's sanitiser removes a script whose text has "<" before a letter or "/" (a tag in a comment did)."""
    script = module._SCRIPT
    body = script[script.index("<script>") + len("<script>"):script.rindex("</script>")]
    assert not re.search(r"<[/\w]", body), re.findall(r".{20}<[/\w].{10}", body)


def test_the_compact_clock_carries_the_same_numbers_under_its_own_test_ids():
    body = _compact(2700, 600.4)
    assert 'data-fl-compact="1"' in body and f'data-started="{STARTED:.3f}"' in body and 'data-limit="2700.000"' in body
    assert 'data-testid="fl-page-time-left"' in body and 'data-testid="fl-time-left"' not in body
    assert '<strong class="fl-value">34:59</strong>' in body
    assert re.search(r'data-testid="fl-page-over-time" hidden', body)
    assert "@media (max-width: 768px)" in body   # shown only where the sidebar starts collapsed


def test_the_compact_clock_over_time():
    body = _compact(2700, 2790)
    assert re.search(r'data-testid="fl-page-time-left" hidden', body)
    assert 'Over by <strong class="fl-overtime">01:30</strong>' in body


def test_a_drill_page_draws_both_clocks_and_the_page_aids(app_test):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    assert not at.exception, at.exception
    bodies = [h.proto.body for h in at.get("html")]
    assert sum('data-fl-clock="1"' in b and "data-fl-compact" not in b for b in bodies) == 1   # the sidebar's
    assert sum("data-fl-compact" in b for b in bodies) == 1                                   # the page's
    assert any(a11y.SKIP_LINK_ID in b for b in bodies)
    # The ticking script and the clocks' style are sent once a run, with the page's clock (which stays on the page
    # while the sidebar's fragment reruns alone), not in both.
    ticking = [b for b in bodies if "setInterval(tick" in b]
    assert len(ticking) == 1 and "data-fl-compact" in ticking[0] and ".fl-clock .fl-value" in ticking[0]


def test_a_lock_in_is_confirmed_in_the_page_not_by_a_toast(app_test):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    next(t for t in at.text_input if t.label.startswith("Best guess")).input("12")
    next(b for b in at.button if "Lock in" in b.label).click().run()
    assert not at.exception, at.exception
    assert any(s.value == "Locked in." for s in at.success)
    assert not at.toast


@pytest.mark.skipif(seam.plain(), reason="an optimisation, not a promise: in plain mode each ask reads the store "
                    "(the run identity it keys on is below Streamlit's documented API)")
def test_a_drill_page_run_reads_its_attempt_once(app_test, monkeypatch):
    """The two clocks, their fragment and the page used to read the attempt by token three times a run."""
    from drills.store import AttemptStore

    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    reads = []
    original = AttemptStore.attempt_by_token

    def counted(self, token):
        reads.append(token)
        return original(self, token)

    monkeypatch.setattr(AttemptStore, "attempt_by_token", counted)
    at.selectbox(key="part_select").set_value("board").run()
    assert not at.exception, at.exception
    assert len(reads) == 1, reads
