"""History: a handle and its personal resume code open every attempt made under it, from any session."""
from __future__ import annotations

import re

from drills.store import AttemptStore
from tests.test_pages import _start


def _code_from(at) -> str:
    shown = " ".join(s.value for s in at.success)
    match = re.search(r"resume code is \*\*([A-Z0-9]{4}-[A-Z0-9]{4})\*\*", shown)
    assert match, f"no resume code shown: {shown!r}"
    return match.group(1)


def _history(app_test):
    at = app_test("app.py").run()
    at.switch_page("pages/history.py").run()
    assert not at.exception, at.exception
    return at


def _sign_in(at, handle: str, code: str):
    at.text_input(key="history::handle").input(handle)
    at.text_input(key="history::code").input(code)
    next(b for b in at.button if b.label == "Open my history").click().run()
    assert not at.exception, at.exception
    return at


def test_the_code_is_shown_once_and_opens_the_history_from_a_new_session(app_test, db_path):
    first = _start(app_test, handle="ada", cohort="north")
    code = _code_from(first)
    first.run()
    assert not any("resume code" in s.value for s in first.success), "the code is shown only once"
    again = _start(app_test, handle="ada", cohort="")
    assert not any("resume code" in s.value for s in again.success), "a handle gets one code, not one per start"
    store = AttemptStore(db_path)
    finished = store.attempt_by_token(first.query_params["attempt"])
    from drills.loader import load_catalogue

    drill = load_catalogue().drills[finished.drill_id].drill
    (guessed, guessed_part), (skipped, skipped_part) = [(q, p) for p in drill.parts for q in p.questions
                                                        if q.kind == "numeric"][:2]
    store.lock_answer(finished.id, guessed.id, guessed_part.id, guessed.kind, value=1.0)
    store.lock_answer(finished.id, skipped.id, skipped_part.id, skipped.kind, skipped=True)
    store.finish(finished.id)
    store.close()

    wrong = _sign_in(_history(app_test), "ada", "AAAA-AAAA")
    assert any("do not match" in e.value for e in wrong.error)
    assert not wrong.dataframe

    at = _sign_in(_history(app_test), "ada", code.lower())
    table = next(d.value for d in at.dataframe if "Drill" in d.value.columns)
    assert len(table) == 2 and list(table["State"]) == ["finished", "open"]
    possible = len(drill.all_questions())
    assert table["Locked in"].iloc[0] == f"1 / {possible} · 1 skipped", "as the results page counts: a skip is no guess"
    labels = [str(p.label) for p in at.get("page_link")]
    assert any(label.startswith("Review: One Tenant") for label in labels)
    assert any(label.startswith("Resume: One Tenant") for label in labels)
    assert len(at.get("plotly_chart")) >= 1, "the score line is drawn once an attempt is finished"


def test_another_handles_code_opens_nothing(app_test, db_path):
    ada = _code_from(_start(app_test, handle="ada"))
    _code_from(_start(app_test, handle="bea"))
    at = _sign_in(_history(app_test), "bea", ada)
    assert any("do not match" in e.value for e in at.error)
