"""The graded run stays unseen (issue 34): each attempt of a drill with simulation questions draws its own graded
seed when it starts, kept in the store; each simulation question is graded against the run at its own seed of
it (drills.disclosure.question_seed), named with a replay link once the question is locked in; a sim page will
not run an open question's seed for its owner from any session the owner is known in (an account, a handle
proven with its code), and nobody else is ever told it."""
from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from drills.disclosure import draw_graded_seed, graded_seed_of, question_seed
from drills.loader import load_catalogue
from drills.reports import aggregates
from drills.scope import scope_drill
from drills.store import MIGRATIONS, AttemptStore
from drills.variants import in_variant
from sims import presets
from tests.test_accounts import _as, _start_signed_in
from tests.test_history import _code_from, _history, _sign_in
from tests.test_pages import _go, _start
from tests.test_store_contract import opened, target  # noqa: F401 - fixtures: each store, on both backends

CATALOGUE = load_catalogue()
ONE_TENANT = CATALOGUE.drills["one_tenant"]
QID = "f1_sim_neighbour_wait"          # graded against hot_shard.tenant_groups, whose figure moves with the seed
SEED_BOX = "hs_ten_seed"               # the hot-shard page's seed box on that model's tab


def _seed_of(db_path, token: str, question_id: str = QID) -> int:
    store = AttemptStore(db_path)
    try:
        return question_seed(store.graded_seed(store.attempt_by_token(token).id), question_id)
    finally:
        store.close()


def _lock(db_path, token: str, *question_ids: str) -> None:
    store = AttemptStore(db_path)
    try:
        attempt = store.attempt_by_token(token)
        for question_id in question_ids:
            store.lock_answer(attempt.id, question_id, "break1", "numeric", value=100)
    finally:
        store.close()


def _sim_page(at, seed: int):
    at.query_params[SEED_BOX] = str(seed)      # a link straight to the graded run
    at.switch_page("pages/sim_hot_shard.py").run()
    assert not at.exception, at.exception
    return at


def _refused(at, seed: int) -> bool:
    refusals = [w.value for w in at.warning if w.value.startswith(f"Seed {seed} is closed here for now")]
    return bool(refusals) and f"Showing seed {seed + 1}" in refusals[0]


# -- drawn once, kept -----------------------------------------------------------------------------------------
def test_two_attempts_draw_their_own_seeds_and_a_restarted_store_keeps_them(tmp_path):
    path = tmp_path / "s.duckdb"
    store = AttemptStore(path)
    drill = ONE_TENANT.drill
    attempts = [store.start_attempt("one_tenant", handle, "", 2700) for handle in ("ada", "bo", "cy")]
    seeds = [graded_seed_of(store, a, drill) for a in attempts]
    assert len(set(seeds)) == 3, "every attempt draws its own"
    assert all(100_000 <= s <= 999_999 for s in seeds), "never 0 nor a seed a reader's page starts on"
    per_question = {question_seed(seeds[0], q.id) for q in drill.all_questions() if getattr(q, "sim", None)}
    assert len(per_question) == 7, "each of the attempt's 7 simulation questions runs at a seed of its own"
    store.close()

    again = AttemptStore(path)          # a restart: a new store, nothing cached in it
    try:
        assert [graded_seed_of(again, again.attempt_by_id(a.id), drill) for a in attempts] == seeds
        assert again.keep_graded_seed(attempts[0].id, 5) == seeds[0], "written once: a second draw changes nothing"
        assert again.graded_seed(attempts[0].id) == seeds[0]
    finally:
        again.close()


def test_a_room_s_seeds_are_read_in_one_query_as_each_would_be_read_alone(tmp_path):
    """A live room's Close grades every seat at once in each process (ui.live.report.seat_graders): the seeds that
    process does not know yet are one query, not one per seat, and are the seeds graded_seed_of gives."""
    from drills.disclosure import graded_seeds_of

    path = tmp_path / "s.duckdb"
    store = AttemptStore(path)
    drill = ONE_TENANT.drill
    attempts = [store.start_attempt("one_tenant", handle, "", 2700) for handle in ("ada", "bo", "cy")]
    seeds = [graded_seed_of(store, a, drill) for a in attempts]
    store.close()
    again = AttemptStore(path)   # another process: nothing known yet
    asked = []
    one_by_one = again.graded_seed
    again.graded_seed = lambda attempt_id: asked.append(attempt_id) or one_by_one(attempt_id)
    try:
        fresh = again.start_attempt("one_tenant", "di", "", 2700)   # no seed stored yet: drawn by the rule
        found = graded_seeds_of(again, [again.attempt_by_id(a.id) for a in attempts] + [fresh], drill)
        assert [found[a.id] for a in attempts] == seeds
        assert asked == [fresh.id], "the three stored seeds in one query; only the new attempt's read alone"
        assert found[fresh.id] == again.graded_seed(fresh.id) and 100_000 <= found[fresh.id] <= 999_999
    finally:
        again.close()


def test_both_stores_keep_the_first_seed_and_reports_read_it(target, opened):
    store = opened()
    attempt = store.start_attempt("one_tenant", "ada", "c1", 2700)
    assert store.graded_seed(attempt.id) is None
    assert store.keep_graded_seed(attempt.id, 123_456) == 123_456
    assert store.keep_graded_seed(attempt.id, 654_321) == 123_456, "the first one written stays"
    again = opened()                    # another process, or a restart
    assert again.graded_seed(attempt.id) == 123_456
    assert again.graded_seeds([attempt.id, attempt.id + 999]) == {attempt.id: 123_456}
    assert aggregates.variants_drawn(again, "one_tenant") == [(attempt.variant, 123_456)]   # PostgreSQL: its copy


class _Edge:
    """A random stream that always draws the first (or the last) of what it is offered."""

    def __init__(self, last: bool):
        self.last = last

    def randrange(self, n: int) -> int:
        return n - 1 if self.last else 0


def test_graded_seeds_run_from_100000_to_999999_as_the_readme_says():
    assert draw_graded_seed(_Edge(last=False)) == 100_000 and draw_graded_seed(_Edge(last=True)) == 999_999


def test_a_drill_without_simulation_questions_draws_no_seed(tmp_path):
    plain = scope_drill(ONE_TENANT, "break3")   # the spend cap: no simulation question
    assert not any(getattr(q, "sim", None) for q in plain.drill.all_questions())
    store = AttemptStore(tmp_path / "s.duckdb")
    attempt = store.start_attempt(plain.drill.id, "ada", "", 2700)
    assert graded_seed_of(store, attempt, plain.drill) == 0 and store.graded_seed(attempt.id) is None
    store.close()


def test_an_attempt_from_before_graded_seeds_keeps_seed_0(tmp_path, monkeypatch):
    import drills.store.duckdb as duck
    from drills.store.migrations import apply_migrations

    path = tmp_path / "old.duckdb"
    monkeypatch.setattr(duck, "apply_migrations",
                        lambda cur, now: apply_migrations(cur, now, [m for m in MIGRATIONS if m[0] < 46]))
    old = AttemptStore(path)
    attempt = old.start_attempt("one_tenant", "ada", "", 2700)
    old.lock_answer(attempt.id, QID, "break1", "numeric", value=900)
    old.close()
    monkeypatch.undo()
    store = AttemptStore(path)          # migration 46 gives every attempt already there seed 0
    try:
        assert store.schema_version() >= 47 and store.graded_seed(attempt.id) == 0
        assert graded_seed_of(store, attempt, ONE_TENANT.drill) == 0
    finally:
        store.close()


# -- graded against that run, and shown once locked ---------------------------------------------------------------
def test_the_run_graded_is_the_one_at_the_attempts_seed_named_once_locked_in(app_test, db_path):
    from ui.drill.attempt_view import AttemptView

    pool = "b2_sim_pool10_429s"   # on the break2 part's own page, beside the fan-out's question
    at = _start(app_test)
    token = at.query_params["attempt"]
    seed = _seed_of(db_path, token, pool)
    _go(at, "break2")
    page = " ".join(c.value for c in at.caption) + " ".join(m.value for m in at.markdown)
    assert "a run of the **Concurrency pool** simulation" in page and "its seed shows once you lock in" in page
    assert str(seed) not in page, "the seed of an open question is nowhere on its page"

    at.text_input(key=f"lock::{pool}::value").input("20")
    at.button(key=f"lock::{pool}::submit").click().run()
    assert not at.exception, at.exception
    named = [int(n) for c in at.caption for n in re.findall(r"seed \*\*(\d+)\*\*", c.value)]
    assert named == [seed], "locked in: its seed is named (and only its own: the fan-out's is still open)"
    replay = [link.proto for link in at.get("page_link")
              if link.proto.label == f"Replay seed {seed} on the Concurrency pool page"]
    assert replay and f"cp_seed={seed}" in replay[0].query_string and "guess_" in replay[0].query_string

    store = AttemptStore(db_path)
    try:
        attempt = store.attempt_by_token(token)
        view = AttemptView.load(store, attempt, ONE_TENANT)
        drawn = in_variant(ONE_TENANT, attempt.variant)
        for question_id in (pool, QID):   # the model itself, run at the question's seed of this attempt
            q = drawn.drill.question(question_id)
            run = presets.evaluate(q.sim, _seed_of(db_path, token, question_id), drawn.values)
            assert view.truth(question_id) == pytest.approx(run), question_id
        graded = next(r for r in view.results() if r.question_id == pool)
        assert graded.truth == pytest.approx(view.truth(pool))
    finally:
        store.close()


# -- closed for its owner in any session, while open ----------------------------------------------------------
def test_a_fresh_signed_in_session_of_the_candidate_cannot_run_the_seed_until_it_is_locked(app_test, db_path):
    token = _start_signed_in(app_test, "ana@school.edu").query_params["attempt"]
    seed = _seed_of(db_path, token)
    fresh = _sim_page(_as(app_test, "ana@school.edu").run(), seed)       # a new session: no token anywhere
    assert _refused(fresh, seed)
    assert any("open drill questions are graded against this model" in c.value for c in fresh.caption)

    _lock(db_path, token, "f1_sim_hot_4", "f1_sim_hot_6", QID)
    after = _sim_page(_as(app_test, "ana@school.edu").run(), seed)
    assert not _refused(after, seed) and after.number_input(key=SEED_BOX).value == seed


def test_a_fresh_session_with_the_handle_and_its_code_cannot_run_the_seed_until_it_is_locked(app_test, db_path):
    first = _start(app_test, handle="ada", cohort="north")
    token, code = first.query_params["attempt"], _code_from(first)
    seed = _seed_of(db_path, token)
    fresh = _sim_page(_sign_in(_history(app_test), "ada", code, "north"), seed)   # a private window, proven
    assert _refused(fresh, seed)

    _lock(db_path, token, "f1_sim_hot_4", "f1_sim_hot_6", QID)
    after = _sim_page(_sign_in(_history(app_test), "ada", code, "north"), seed)
    assert not _refused(after, seed) and after.number_input(key=SEED_BOX).value == seed


def test_the_other_open_questions_seeds_stay_closed_after_one_is_locked(app_test, db_path):
    at = _start(app_test)
    token = at.query_params["attempt"]
    _lock(db_path, token, QID)
    assert _refused(_sim_page(at, _seed_of(db_path, token, "f1_sim_hot_4")), _seed_of(db_path, token, "f1_sim_hot_4"))
    assert not _refused(_sim_page(at, _seed_of(db_path, token)), _seed_of(db_path, token))


# -- an instructor's replay -----------------------------------------------------------------------------------
def _replay_links(token: str) -> None:
    from ui.context import get_catalogue, get_store
    from ui.drill.attempt_view import AttemptView
    from ui.instructor.replay import render_replay

    store = get_store()
    attempt = store.attempt_by_token(token)
    render_replay(AttemptView.load(store, attempt, get_catalogue().drills[attempt.drill_id]))


def test_an_instructors_replay_opens_the_run_at_the_attempts_seed(app_test, db_path):
    token = _start(app_test).query_params["attempt"]
    seed = _seed_of(db_path, token)
    at = AppTest.from_function(_replay_links, args=(token,), default_timeout=120).run()
    assert not at.exception, at.exception
    link = next(b.proto for b in at.get("link_button") if "Hot shard, seed" in b.proto.label
                and f"{SEED_BOX}=" in b.proto.url)
    assert f"seed {seed}" in link.label and f"{SEED_BOX}={seed}" in link.url


def test_an_attempt_without_a_seed_that_already_locked_one_in_keeps_seed_0(tmp_path):
    """A seat made by the store, or a script, that locked a simulation question before any page drew its seed
    was graded against seed 0 by every report: it keeps that run rather than a new one."""
    store = AttemptStore(tmp_path / "s.duckdb")
    try:
        answered, fresh = (store.start_attempt("one_tenant", handle, "", 2700) for handle in ("ada", "bo"))
        store.lock_answer(answered.id, QID, "break1", "numeric", value=900)
        assert graded_seed_of(store, answered, ONE_TENANT.drill) == 0 == store.graded_seed(answered.id)
        assert graded_seed_of(store, fresh, ONE_TENANT.drill) >= 100_000, "nothing locked yet: one is drawn"
    finally:
        store.close()
