"""Handles compared as people read them, on both stores: ADA, `ada ` and ａｄａ are the handle ada, claimed once
and opened by its one code, while the row keeps what was typed first; and the migration that keys old rows."""
from __future__ import annotations

import pytest

from drills.store.accounts import AccessRefused, handle_key
from drills.store.migrations import MIGRATIONS, PG_MIGRATIONS, apply_migrations
from drills.store.throttle import Client
from tests.clock import FakeClock
from tests.test_store_contract import opened, target  # noqa: F401  (fixtures: each test on both stores)

ME = Client("cookie:me", "203.0.113.1")


def test_a_handle_is_read_case_folded_nfkc_and_with_its_spaces_collapsed():
    assert {handle_key(h) for h in ["ada", "ADA", " ada ", "Ada", "ａｄａ", "ADA\u00a0"]} == {"ada"}
    assert handle_key("Ada   Lovelace") == handle_key("ada lovelace") == "ada lovelace"
    assert handle_key("Straße") == handle_key("STRASSE"), "case-folded, not only lower-cased"
    assert handle_key("ada") != handle_key("ada2") and handle_key("a da") != handle_key("ada")


def test_look_alike_handles_are_refused_beside_the_first_and_open_with_its_code(opened):
    store = opened()
    code = store.claim_handle("ada", "")
    for look_alike in ["ADA", "ada ", "Ada", "ａｄａ"]:
        assert store.claim_handle(look_alike, "") is None, look_alike
        assert store.handle_status(look_alike, "") == "coded" and store.stored_handle(look_alike, "") == "ada"
    assert store.check_resume_code("ADA", code, client=ME), "the one code opens it however it is typed"
    assert store.ensure_candidate("ADA") == store.ensure_candidate("ada"), "one candidate row, shown as typed first"
    assert store.ensure_candidate("ADA").handle == "ada" and store.learner("Ada", "").handle == "ada"
    assert store.claim_handle("ADA", "north") is not None, "another cohort is another handle"
    assert store.stored_handle("ADA", "north") == "ADA", "kept as typed"
    assert store.handle_status("bea", "") == "free" and store.stored_handle("bea", "") is None


def test_runs_of_spaces_inside_a_handle_read_as_one(opened):
    store = opened()
    assert store.claim_handle("ada lovelace", "") is not None
    assert store.claim_handle("Ada  Lovelace", "") is None
    assert store.stored_handle("ADA   LOVELACE", "") == "ada lovelace"


def test_a_name_in_a_class_is_unique_as_people_read_it(opened):
    store = opened()
    ana = store.account_for("https://id.example", "sub-1", "ana@school.edu", "Ana")
    bo = store.account_for("https://id.example", "sub-2", "bo@school.edu", "Bo")
    info, _ = store.create_class("SRE cohort 7", "prof@school.edu")
    store.account_candidate(ana, info.cohort, "Ana K")
    with pytest.raises(AccessRefused, match="“ANA  K” \\(read the same as “Ana K”\\) is taken"):
        store.account_candidate(bo, info.cohort, "ANA  K")
    assert store.handle_status("ana k", info.cohort) == "account", "nor may a handle take it"


def test_wrong_codes_at_a_look_alike_count_at_the_one_handle():
    from drills.store.accounts import resume_target

    assert {resume_target(typed, "north") for typed in ["ADA", "Ada", "ada ", "ａｄａ"]} == {"ada/north"}
    assert resume_target("ADA", "") == "ada"


def _database_before_keys(target: str):
    """A database at the schema of version 30 (before handle keys), as a store from before this change left it:
    (a cursor on it, a way to close it)."""
    if target.startswith("postgresql://"):
        import psycopg

        from drills.store.postgres import _PgCursor
        from drills.store.migrations import postgres_dialect

        conn = psycopg.connect(target, autocommit=True)
        cur = _PgCursor(conn.cursor())
        apply_migrations(cur, 0.0, [m for m in PG_MIGRATIONS if m[0] <= 30], postgres_dialect)
        return cur, conn.close
    import duckdb

    conn = duckdb.connect(target)
    apply_migrations(conn.cursor(), 0.0, [m for m in MIGRATIONS if m[0] <= 30])
    return conn, conn.close


def test_the_migration_keys_old_handles_and_keeps_old_look_alikes_their_own_history(target, opened):
    cur, close = _database_before_keys(target)
    for candidate_id, handle, cohort in [(1, "ada", ""), (2, "ADA", ""), (3, "Bea", "north"), (4, "ada", "north")]:
        cur.execute("INSERT INTO candidates (id, handle, cohort, created_at) VALUES (?, ?, ?, 0)",
                    [candidate_id, handle, cohort])
    close()
    store = opened(FakeClock())
    assert store.query("SELECT id, handle_key FROM candidates ORDER BY id").fetchall() == [
        (1, "ada"), (2, None), (3, "bea"), (4, "ada")], "the older of two look-alikes keeps the key"
    assert store.ensure_candidate("ADA").id == 2, "an old look-alike is still found as it is spelled"
    assert store.ensure_candidate("Ada").id == 1 and store.ensure_candidate("BEA", "north").id == 3
    assert store.claim_handle("aDa", "") is not None and store.stored_handle("aDa", "") == "ada", \
        "a third look-alike takes up the unused original, as typed first, and makes no row of its own"
    assert store.query("SELECT COUNT(*) FROM candidates WHERE cohort = ''").fetchone() == (2,)
    fresh = store.ensure_candidate("cy")
    assert store.query("SELECT handle_key FROM candidates WHERE id = ?", [fresh.id]).fetchone() == ("cy",)
