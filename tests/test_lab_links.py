"""Drill reveals that link the PostgreSQL lab name experiments the lab runs, and show them once open."""
from __future__ import annotations

from drills.loader import load_catalogue
from drills.store import AnswerEntry, AttemptStore
from labs.postgres.experiments import EXPERIMENTS
from tests.test_pages import _go, _start
from ui.labs.pg_lab import VIEWS

CATALOGUE = load_catalogue()


def _links():
    for loaded in CATALOGUE.drills.values():
        for part in loaded.drill.parts:
            for section in part.reveal:
                yield loaded.drill.id, part.id, section.stage, section.labs
            if part.followup is not None:
                yield loaded.drill.id, part.id, "followup", part.followup.labs


def test_every_linked_experiment_exists_in_the_lab():
    linked = [(where, lab) for *where, labs in _links() for lab in labs]
    assert len(linked) >= 5, "One Tenant links its PostgreSQL claims to the lab"
    for where, lab in linked:
        assert lab in EXPERIMENTS and lab in VIEWS, f"{where}: unknown lab experiment {lab!r}"


def test_a_lab_link_shows_under_the_worked_answer_once_it_is_open(app_test, db_path):
    at = _start(app_test)
    _go(at, "break3")
    def links() -> list[str]:
        return [str(p.label) for p in at.get("page_link")]

    assert not any("PostgreSQL" in label for label in links()), "no lab link before the reveal"
    store = AttemptStore(db_path)
    attempt = store.attempt_by_token(at.query_params["attempt"])
    part = CATALOGUE.drills["one_tenant"].drill.part("break3")
    store.lock_answers(attempt.id, [AnswerEntry(q.id, "break3", q.kind, skipped=True) for q in part.questions])
    for section in part.reveal:
        store.record_reveal(attempt.id, "break3", section.stage)
    store.close()
    at.run()
    shown = links()
    assert any(EXPERIMENTS["refunds"].title in label for label in shown), shown
