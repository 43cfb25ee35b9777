"""Chromium, signed in through a real OpenID Connect provider's login form (tests/oidc/provider.mjs).

A candidate's attempt is theirs alone: a sim page opened in a fresh tab goes on its timeline, and a second
account holding the attempt's link cannot open or lock into it. An instructor account makes a class whose
join link enrols a candidate.
"""
from __future__ import annotations

import re

import pytest

from drills.store import AttemptStore
from tests.browser import (
    LOOPBACK_REDIRECT_URI,
    AppServer,
    sign_in_through_provider,
    sign_out_through_provider,
    wait_for_app,
)
from tests.oidc_provider import auth_secrets

pytestmark = pytest.mark.browser

SIDEBAR_SIGN_IN = re.compile(r"^(🔑 )?Sign in$")


@pytest.fixture
def signed_server(tmp_path, oidc_provider):
    server = AppServer(tmp_path / "accounts.duckdb", env={"FAULTLINES_INSTRUCTORS": "prof@school.test"},
                       secrets=auth_secrets(oidc_provider, LOOPBACK_REDIRECT_URI, "c" * 40))
    server.start()
    yield server
    server.stop()


def _open(page, url: str) -> None:
    page.goto(url)
    page.get_by_test_id("stApp").wait_for(timeout=120_000)
    wait_for_app(page)


def _signed_in(chromium, server, login: str):
    context = chromium.new_context(viewport={"width": 1300, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    _open(page, server.url)
    sign_in_through_provider(page, login, button=SIDEBAR_SIGN_IN)
    page.get_by_text(f"Signed in as {login}").first.wait_for()
    return context, page


def _start_from_catalogue(page, server, drill: str) -> None:
    """Press the catalogue's Start for `drill`, once."""
    page.get_by_role("button", name=f"Start the clock: {drill}").click()


def test_an_attempt_is_its_accounts_alone_and_visits_from_any_tab_are_attributed(signed_server, chromium):
    ana, page = _signed_in(chromium, signed_server, "ana@school.test")
    _start_from_catalogue(page, signed_server, "One Tenant Takes Everyone Down")
    page.wait_for_url(re.compile(r".*attempt=.*"))
    wait_for_app(page)
    token = re.search(r"attempt=([^&]+)", page.url).group(1)
    assert page.get_by_text("resume code").count() == 0, "an account needs no resume code"

    fresh = ana.new_page()                                   # a fresh tab: no ?attempt= anywhere
    _open(fresh, f"{signed_server.url}/sim_hot_shard")
    assert fresh.get_by_text("cannot be attributed").count() == 0

    bo, other = _signed_in(chromium, signed_server, "bo@school.test")
    _open(other, f"{signed_server.url}/drill?attempt={token}")
    other.get_by_text("This attempt belongs to another account").wait_for()
    assert other.get_by_role("button", name=re.compile("Lock in")).count() == 0
    bo.close()
    ana.close()

    signed_server.stop()                                     # DuckDB lets one process hold the file
    store = AttemptStore(signed_server.db_path)
    try:
        attempt = store.attempt_by_token(token)
        kinds = [(e.kind, e.detail.get("page")) for e in store.events(attempt.id)]
        answers = store.answers(attempt.id)
    finally:
        store.close()
    assert ("sim_opened", "sim_hot_shard") in kinds, kinds
    assert answers == {}, "nothing was locked by the other account"


def test_an_instructor_account_makes_a_class_and_its_link_enrols_a_candidate(signed_server, chromium):
    prof, board = _signed_in(chromium, signed_server, "prof@school.test")
    _open(board, f"{signed_server.url}/instructor")
    board.get_by_role("textbox", name="Class name").fill("Drill night")
    board.get_by_role("button", name="Make the class").click()
    wait_for_app(board)
    link = board.get_by_test_id("stCode").filter(has_text="?join=").first.inner_text().strip()
    assert "join=" in link, link
    code = link.rsplit("join=", 1)[1]
    prof.close()

    cand, page = _signed_in(chromium, signed_server, "cy@school.test")
    _open(page, f"{signed_server.url}/?join={code}")
    page.get_by_role("textbox", name=re.compile("Your name in this class")).fill("Cy")
    page.get_by_role("button", name="Join", exact=True).click()
    wait_for_app(page)
    page.get_by_text("Your attempts count for").wait_for()
    page.get_by_role("button", name="Start the clock: One Tenant Takes Everyone Down").click()
    page.wait_for_url(re.compile(r".*attempt=.*"))
    token = re.search(r"attempt=([^&]+)", page.url).group(1)
    cand.close()
    signed_server.stop()
    store = AttemptStore(signed_server.db_path)
    try:
        attempt = store.attempt_by_token(token)
    finally:
        store.close()
    assert (attempt.handle, attempt.cohort) == ("Cy", "drill-night")


_FOCUSED = "() => { const el = document.activeElement; return el ? (el.innerText || '').trim() : ''; }"
ROW = ".st-key-identity--account_row"   # ui.identity.ACCOUNT_ROW as Streamlit names its block


def test_on_a_phone_the_page_itself_offers_sign_out_within_a_few_tabs(signed_server, chromium):
    # The sidebar, with its Sign out, starts collapsed on a phone: the page's own account row is the way out.
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        _open(page, signed_server.url)
        sign_in_through_provider(page, "cy@school.test", button="Sign in with your account")
        page.locator(ROW).get_by_text("cy@school.test").wait_for()
        wait_for_app(page)
        assert page.get_by_role("button", name="Sign out").count() == 1, "the sidebar's is hidden while it is shut"
        page.locator("body").focus()
        seen = []
        for _ in range(12):
            page.keyboard.press("Tab")
            seen.append(page.evaluate(_FOCUSED))
            if seen[-1].endswith("Sign out"):
                break
        assert seen[-1].endswith("Sign out"), f"Tab reaches the page's Sign out: {seen}"
        page.set_viewport_size({"width": 1300, "height": 900})
        assert page.locator(ROW).is_hidden(), "where the sidebar starts open, it alone carries Sign out"
        page.set_viewport_size({"width": 390, "height": 844})   # the sidebar opened at 1300 px may stay open
        sign_out_through_provider(page, within=page.locator(ROW))
        page.get_by_role("button", name="Sign in with your account").wait_for()
        assert page.locator(ROW).count() == 0
    finally:
        context.close()
