"""Issue 38's page run in at most one round trip per view, counted on the app's own store in an AppTest: a drill
page run reads the attempt and its view (two statements), and a Lock in writes once and reads nothing more than
the page run it belongs to. (AppTest reruns the whole page for a press; on a server a Lock in reruns only its
fragments, which draw from the view the lock-in's transaction returned: tests/test_load_ws.py walks that.)"""
from __future__ import annotations

from drills.store import AttemptStore
from tests.store_counter import counting


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
    assert seen.transactions == 0 and len(seen.reads) == 2, seen.sql   # the attempt by its token, then its view
    assert any(sql.startswith("SELECT 'answer'") for sql in seen.reads), seen.reads


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
        assert len(seen.reads) == 2, seen.reads
        assert seen.round_trips <= 8
