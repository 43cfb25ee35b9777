"""Issue 38's page run in at most one round trip per view, counted on the app's own store in an AppTest: a drill
page run reads the attempt and its view (two statements), and a Lock in writes once and reads nothing more than
the page run it belongs to. (AppTest reruns the whole page for a press; on a server a Lock in reruns only its
fragments, which draw from the view the lock-in's transaction returned: tests/test_load_ws.py walks that.)"""
from __future__ import annotations

from drills.store import AttemptStore
from tests.store_counter import counting
from ui.runtime import seam

# In plain mode (no Streamlit internals) the run keeps no cache of the attempt read by its token, so each part of
# the page that needs it asks again: an optimisation, not a promise. The view itself is read once either way.
ATTEMPT_READS = 3 if seam.plain() else 1


def _view_reads(reads) -> int:
    return sum(1 for sql in reads if sql.startswith("SELECT 'answer'"))


def _board(app_test):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    at.button(key="start_button::one_tenant").click().run()
    next(b for b in at.button if b.label == "Next →").click().run()
    assert not at.exception, at.exception
    return at


def test_a_drill_page_run_reads_the_attempt_and_its_view_once_each(app_test, db_path, monkeypatch):
    at = _board(app_test)
    seen = counting(monkeypatch, AttemptStore)
    at.run()
    assert not at.exception, at.exception
    assert seen.transactions == 0 and _view_reads(seen.reads) == 1, seen.sql   # the view, once
    assert len(seen.reads) == ATTEMPT_READS + 1, seen.sql   # and the attempt by its token


def test_each_lock_in_is_one_write_and_its_run_rereads_nothing(app_test, db_path, monkeypatch):
    at = _board(app_test)
    seen = counting(monkeypatch, AttemptStore)
    for n in range(5):
        seen.clear()
        next(t for t in at.text_input if t.label.startswith("Best guess")).input(str(10 + n))
        next(b for b in at.button if b.label == "Lock in").click().run()
        assert not at.exception, at.exception
        assert sum(m.value.startswith(":material/lock: Your guess:") for m in at.markdown) == n + 1
        # The lock-in's transaction (its view read inside it), then the page run's two reads: eight round trips,
        # where a lock-in took thirteen before (its finished, live and hint checks, then the page's five reads).
        assert seen.transactions == 1 and len(seen.writes) <= 4, seen.sql
        assert _view_reads(seen.reads) == 1 and len(seen.reads) == ATTEMPT_READS + 1, seen.reads
        assert seen.round_trips <= 6 + ATTEMPT_READS + 1


def test_an_unchanged_board_asks_the_store_only_its_data_version_and_a_write_shows_at_once(tmp_path, monkeypatch):
    from ui.instructor.board_reads import BoardReads

    store = AttemptStore(tmp_path / "board.duckdb")
    store.start_attempt("one_tenant", "ada", "north", 600, seed=1)
    asked = []
    query = AttemptStore.query
    monkeypatch.setattr(AttemptStore, "query",
                        lambda self, sql, params=None: asked.append(sql) or query(self, sql, params))

    def filters_read():
        reads = BoardReads(store)
        return (reads.drills_by_activity(), reads.cohorts("one_tenant"), reads.date_bounds("one_tenant") is not None,
                reads.variants_drawn("one_tenant"))

    first = filters_read()
    assert len(asked) == 5 and first[:3] == (["one_tenant"], ["north"], True)
    asked.clear()
    assert filters_read() == first and len(asked) == 1, asked   # the data version alone
    store.start_attempt("one_tenant", "bea", "south", 600, seed=2)
    assert filters_read()[1] == ["north", "south"]
    store.close()


def test_a_start_stores_the_attempt_with_its_graded_seed_in_one_transaction_and_reads_neither_back(
        app_test, db_path, monkeypatch):
    from drills.disclosure import GRADED_SEEDS

    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("ada")
    seen = counting(monkeypatch, AttemptStore)
    at.button(key="start_button::one_tenant").click().run()
    assert not at.exception, at.exception
    transactions, round_trips = seen.transactions, seen.round_trips
    attempt = AttemptStore(db_path).attempts(handle="ada")[0]
    # The attempt, its 'started' event and its graded seed in one transaction, read back inside it; then the drill
    # page's run. Before, the start read the attempt back, the seed, the answers once per simulation question, and
    # wrote the seed in a second transaction, and the claimed handle's row was read again in a transaction of its
    # own: 38 round trips on PostgreSQL where these take 20.
    graded = [sql for _, sql in seen.sql if "graded_seeds" in sql]
    assert graded == ["INSERT INTO graded_seeds (attempt_id, seed) VALUES (?, ?)"], seen.sql
    assert AttemptStore(db_path).graded_seed(attempt.id) in GRADED_SEEDS
    assert not any(sql.startswith(("SELECT attempt_id, question_id", "SELECT part_id FROM attempt_events"))
                   for sql in seen.reads), seen.reads   # no answers nor part opened last of a new attempt
    assert transactions == 3 and round_trips <= 20 + ATTEMPT_READS - 1, seen.sql
