"""Every page's query parameters under huge, malformed and hostile values: a clear page, never an error box.

Issue 34: ``/sim_platform?live=`` with 400 digits crashed the page ("Python integer too large"). The frame
now bounds every parameter before any page parses one (ui.frame.bound_query_params); this test opens each
declared page with every parameter it reads, and every widget key it binds to the URL, set to each value.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from sims.platform import SCENARIOS
from tests.test_pages import _open
from ui import keys
from ui.instructor.integrity import TIMELINE_PARAM
from ui.labs.pg_lab import EXPERIMENT
from ui.live.room import ROOM_PARAM
from ui.sims.guess import guess_for_param, guess_param
from ui.sims.hot_shard_tabs import CELEBRITY, SHUFFLE, TENANTS
from ui.sims.pins import pin_param
from ui.sims.platform_page import sim_tab

# Every page there is, the library drills' simulation pages and any page added later included.
PAGES = sorted(f"pages/{page.name}" for page in (Path(__file__).resolve().parent.parent / "pages").glob("*.py"))
SIM_TABS = [CELEBRITY.name, TENANTS.name, SHUFFLE.name, "concurrency_pool.pool_limit", "concurrency_pool.fanout",
            "retry_storm.sync", "retry_storm.jitter", *(sim_tab(scenario).name for scenario in SCENARIOS)]
# the parameters pages read by hand; the bound widgets' keys are found by opening each page
READ_BY_HAND = [keys.ATTEMPT_TOKEN, keys.PART, keys.JOIN_PARAM, TIMELINE_PARAM, ROOM_PARAM, EXPERIMENT,
                *(f(tab) for tab in SIM_TABS for f in (guess_param, guess_for_param, pin_param))]
HOSTILE = {
    "400 digits": "9" * 400,
    "20 digits": "9" * 20,                        # past a 64-bit integer
    "negative": "-1",
    "overflowing float": "1e309",
    "nan": "nan",
    "infinity": "-inf",
    "script": "<script>alert(1)</script>",
    "huge text": "x" * 20_000,
    "nul and controls": "a\x00b\x1b[31m",
    "full-width digits": "１２３",
    "empty": "",
}


def _widget_keys(at) -> set[str]:
    found = set()
    for kind in ("slider", "number_input", "selectbox", "radio", "toggle", "checkbox", "text_input", "select_slider",
                 "multiselect", "text_area", "date_input", "segmented_control", "pills"):
        for element in getattr(at, kind, []):
            if isinstance(getattr(element, "key", None), str):
                found.add(element.key)
    return found


@pytest.mark.parametrize("page", PAGES)
def test_no_parameter_value_breaks_a_page(app_test, page):
    plain = _open(app_test, page)
    assert not plain.exception, plain.exception
    names = sorted(set(READ_BY_HAND) | _widget_keys(plain) | set(plain.query_params))
    for label, value in HOSTILE.items():
        at = _open(app_test, page, **{name: value for name in names})
        assert not at.exception, f"{page} with every parameter {label}: {at.exception[0].value[:300]}"


def test_a_live_room_link_with_400_digits_is_ignored_and_the_page_says_so(app_test):
    at = app_test("app.py")
    at.query_params[ROOM_PARAM] = "9" * 400
    at.run()                                    # the run the link opens says what it dropped
    assert any("ignored" in str(c.value) and "'live'" in str(c.value) for c in at.caption)
    assert ROOM_PARAM not in at.query_params
    at.switch_page("pages/sim_platform.py").run()
    assert not at.exception, at.exception


def test_usable_values_are_left_alone():
    from ui.url_params import refused

    for name, value in (("hs_celeb_seed", "0"), ("hs_celeb_seed", "1000000"), ("guess_x", "153.5"),
                        ("attempt", "Xy3_-0AbCdEfGhIjKlMnOpQr"), ("handle", "Ada Lovelace"), ("live", "123456789012345"),
                        ("pin", "shards=6 hot_key_share=0.3 seed=4 guess=140")):
        assert refused(name, value) is None, (name, value)
    for value in ("9" * 16, "1e309", "nan", "-Infinity", "a\x00b", "x" * 2_001):
        assert refused("live", value) is not None, value


def test_the_fuzz_opens_every_page_the_app_serves():
    """The page list is every file under pages/ (the three library simulation pages were once left out)."""
    assert {"pages/sim_cache_stampede.py", "pages/sim_leases.py", "pages/sim_retry_chain.py",
            "pages/sim_platform.py", "pages/drill.py", "pages/instructor.py"} <= set(PAGES)
