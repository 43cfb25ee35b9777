"""Signed-in accounts on the pages: ownership of attempts, attribution in any tab, classes and their boards.

These are AppTest runs, which seed `st.user` the way a signed-in session reads it (AppTest.user). The browser
tests (tests/test_browser_accounts.py) sign in through a real OpenID Connect provider's login form instead.
"""
from __future__ import annotations

import pytest

from drills.store import AttemptStore
from ui.identity import ACCOUNT, ACCOUNT_ROW
from ui.safe import escape_markdown

ISSUER = "http://127.0.0.1:1/"
AUTH = {"auth": {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
                 "client_id": "faultlines", "client_secret": "s", "server_metadata_url":
                 "http://127.0.0.1:1/.well-known/openid-configuration"}}


def _as(app_test, email: str, page: str = "app.py", **claims):
    at = app_test(page)
    at.secrets = dict(AUTH)
    at.user = {"is_logged_in": True, "iss": ISSUER, "sub": f"sub-{email}", "email": email, "name": email.split("@")[0],
               **claims}
    return at


def _start_signed_in(app_test, email: str):
    at = _as(app_test, email).run()
    assert not at.exception, at.exception
    at.button(key="start_button::one_tenant").click().run()
    assert not at.exception, at.exception
    return at


def test_a_signed_in_start_needs_no_handle_and_belongs_to_the_account(app_test, db_path):
    at = _start_signed_in(app_test, "ana@school.edu")
    token = at.query_params["attempt"]
    store = AttemptStore(db_path)
    try:
        attempt = store.attempt_by_token(token)
        assert attempt.account_id is not None and attempt.handle == "ana@school.edu" and attempt.cohort == ""
    finally:
        store.close()
    assert not any("resume code is" in s.value for s in at.success), "an account needs no resume code"


def test_a_second_account_cannot_open_or_lock_into_the_first_accounts_attempt(app_test, db_path):
    token = _start_signed_in(app_test, "ana@school.edu").query_params["attempt"]
    other = _as(app_test, "bo@school.edu")
    other.query_params["attempt"] = token
    other.run()
    other.switch_page("pages/drill.py").run()
    assert not other.exception, other.exception
    assert other.title and other.title[0].value == "This attempt belongs to another account"
    assert not [b for b in other.button if b.label.startswith("Lock in")], "no lock-in form for another account"
    anonymous = app_test("app.py")
    anonymous.secrets = dict(AUTH)
    anonymous.query_params["attempt"] = token
    anonymous.run()
    anonymous.switch_page("pages/drill.py").run()
    assert anonymous.title[0].value == "This attempt belongs to another account", "nor for someone signed out"
    owner = _as(app_test, "ana@school.edu")
    owner.query_params["attempt"] = token
    owner.run()
    owner.switch_page("pages/drill.py").run()
    assert owner.title[0].value != "This attempt belongs to another account"


def test_a_sim_opened_in_a_fresh_session_is_put_on_the_signed_in_candidates_timeline(app_test, db_path):
    """A sim page opened in a new tab was never recorded: the attempt was known only by the ?attempt= token
    one Streamlit session held. Signed in, the account's open attempts are found from any session."""
    token = _start_signed_in(app_test, "ana@school.edu").query_params["attempt"]
    fresh = _as(app_test, "ana@school.edu").run()           # a new session, no token anywhere
    fresh.switch_page("pages/sim_hot_shard.py").run()
    assert not fresh.exception, fresh.exception
    store = AttemptStore(db_path)
    try:
        attempt = store.attempt_by_token(token)
        opened = [e for e in store.events(attempt.id) if e.kind == "sim_opened"]
    finally:
        store.close()
    assert [e.detail["page"] for e in opened] == ["sim_hot_shard"]
    assert not any("cannot be attributed" in c.value for c in fresh.caption)


def test_an_anonymous_fresh_tab_says_its_sim_visits_cannot_be_attributed(app_test, db_path):
    at = app_test("app.py").run()
    at.switch_page("pages/sim_hot_shard.py").run()
    assert any("cannot be attributed" in c.value for c in at.caption)


def _instructor(app_test, monkeypatch, email="prof@school.edu"):
    monkeypatch.setenv("FAULTLINES_INSTRUCTORS", "prof@school.edu, li@school.edu")
    at = _as(app_test, email).run()
    at.switch_page("pages/instructor.py").run()
    assert not at.exception, at.exception
    return at


def test_an_account_not_named_an_instructor_sees_no_board(app_test, db_path, monkeypatch):
    at = _instructor(app_test, monkeypatch, email="ana@school.edu")
    assert any("not an instructor account" in w.value for w in at.warning)
    assert not at.metric and not at.text_input


def test_an_instructor_makes_a_class_and_a_candidate_joins_it_by_its_link(app_test, db_path, monkeypatch):
    at = _instructor(app_test, monkeypatch)
    assert any("No classes yet" in i.value for i in at.info)
    at.text_input(key="classes::title").input("SRE cohort 7")
    next(b for b in at.button if b.label == "Make the class").click().run()
    assert not at.exception, at.exception
    link = next(c.value for c in at.code if "?join=" in c.value)
    code = link.rsplit("join=", 1)[1]

    joiner = _as(app_test, "ana@school.edu")
    joiner.query_params["join"] = code
    joiner.run()
    joiner.text_input(key="join::name").input("Ana K")
    next(b for b in joiner.button if b.label == "Join").click().run()
    assert not joiner.exception, joiner.exception
    assert "join" not in joiner.query_params
    assert joiner.selectbox(key="class_pick").value == "sre-cohort-7"
    joiner.button(key="start_button::one_tenant").click().run()
    store = AttemptStore(db_path)
    try:
        attempt = store.attempt_by_token(joiner.query_params["attempt"])
        assert (attempt.handle, attempt.cohort) == ("Ana K", "sre-cohort-7")
        bo = store.account_for(ISSUER, "sub-bo@school.edu", "bo@school.edu")
        with pytest.raises(Exception, match="taken in this class"):
            store.account_candidate(bo, "sre-cohort-7", "Ana K")
    finally:
        store.close()
    anonymous = app_test("app.py")
    anonymous.secrets = dict(AUTH)
    anonymous.run()
    anonymous.text_input(key="candidate_handle").input("sneaky")
    anonymous.text_input(key="candidate_cohort").input("sre-cohort-7")
    anonymous.button(key="start_button::one_tenant").click().run()
    assert "attempt" not in anonymous.query_params
    assert any("asks everyone to sign in" in e.value for e in anonymous.error)


def test_an_instructor_sees_only_the_classes_they_own_or_are_named_on(app_test, db_path, monkeypatch):
    store = AttemptStore(db_path)
    mine, _ = store.create_class("Mine", "prof@school.edu")
    shared, _ = store.create_class("Shared", "li@school.edu", instructors=("prof@school.edu",))
    theirs, _ = store.create_class("Theirs", "li@school.edu")
    for info in (mine, shared, theirs):
        store.start_attempt("one_tenant", f"cand-{info.cohort}", info.cohort, 2700)
    store.close()
    at = _instructor(app_test, monkeypatch)
    cohorts = at.selectbox(key="instructor::cohort").options   # the picker names a class by title, then code
    assert sorted(cohorts) == sorted([f"Mine ({mine.cohort})", f"Shared ({shared.cohort})"])
    assert not any(theirs.cohort in c for c in cohorts) and "All cohorts" not in cohorts


def test_an_instructor_signed_in_with_the_provider_is_never_held_up_by_passphrase_guesses(app_test, db_path,
                                                                                          monkeypatch):
    """Strangers' wrong passphrases, past every count (150 at the one target, over the ceiling of 100, many
    from this page's own address), leave the provider's instructor untouched: no passphrase stands in the way."""
    from drills import access
    from drills.store.throttle import Client, TryKind

    monkeypatch.setenv(access.HASH_ENV, access.hash_passphrase("the real passphrase", iterations=1_000))
    store = AttemptStore(db_path)
    try:
        for n in range(150):
            address = "loopback" if n % 2 else f"10.2.{n // 250}.{n % 250}"   # AppTest's own address, and others
            store.record_access(TryKind.INSTRUCTOR, "passphrase", False, "mallory", Client(f"cookie:bot-{n}", address))
    finally:
        store.close()
    at = _instructor(app_test, monkeypatch)
    assert not any("Too many wrong tries" in e.value for e in at.error)
    assert any("No classes yet" in i.value for i in at.info), "the board opens"


def _account_rows(at) -> list:
    """The blocks keyed as the page's account row, anywhere in the main area."""
    found, blocks = [], [at.main]
    while blocks:
        block = blocks.pop()
        children = [c for c in getattr(block, "children", {}).values()]
        found += [c for c in children if str(getattr(c.proto, "id", "")).endswith(ACCOUNT_ROW)]
        blocks += children
    return found


def test_every_page_has_the_account_row_with_sign_out_for_a_phone(app_test, db_path):
    # On a phone the sidebar (and its Sign out) starts collapsed: the page itself carries the account's row.
    at = _as(app_test, "ana@school.edu", name="Ana").run()
    assert not at.exception, at.exception
    for page in ("pages/home.py", "pages/history.py", "pages/sim_hot_shard.py"):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        [row] = _account_rows(at)
        assert [c.value for c in row.caption] == [f":material/account_circle: {escape_markdown('ana@school.edu')}"]
        assert [link.proto.page for link in row.get("page_link")] == ["history"]
        assert [b.label for b in row.button] == ["Sign out"]
    assert ACCOUNT in at.session_state
    row.button[0].click().run()
    assert not at.exception, at.exception
    assert ACCOUNT not in at.session_state, "the row's Sign out forgets the account like the sidebar's"
    anonymous = app_test("app.py").run()
    assert not _account_rows(anonymous), "nobody signed in: no account row"
