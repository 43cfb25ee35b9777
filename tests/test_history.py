"""History: a handle and its personal resume code open every attempt made under it, from any session."""
from __future__ import annotations

import json
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


def _history_table(at):
    return next(t.value for t in at.table if "Drill" in t.value.columns)


def test_the_code_is_issued_once_and_opens_the_history_from_a_new_session(app_test, db_path):
    first = _start(app_test, handle="ada", cohort="north")
    code = _code_from(first)
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
    assert not at.dataframe
    table = _history_table(at)
    assert len(table) == 2 and list(table["State"]) == ["finished", "in progress"]
    assert list(table["Attempt"]) == ["#1", "#2"] and table["Score %"].iloc[1] == "", "an open attempt has no score yet"
    assert table["Score %"].iloc[0].isdigit()
    possible = len(drill.all_questions())
    assert table["Locked in"].iloc[0] == f"1 / {possible} · 1 skipped", "as the results page counts: a skip is no guess"
    labels = [str(p.label) for p in at.get("page_link")]
    assert [label for label in labels if label.startswith("#")][:2] == [
        label for label in labels if label.startswith(("#2 Resume: One Tenant", "#1 Review: One Tenant"))], \
        "the links say newest first, numbered as the table is"
    assert any("Newest first" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) >= 1, "the score line is drawn once an attempt is finished"


def test_another_handles_code_opens_nothing(app_test, db_path):
    ada = _code_from(_start(app_test, handle="ada"))
    _code_from(_start(app_test, handle="bea"))
    at = _sign_in(_history(app_test), "bea", ada)
    assert any("do not match" in e.value for e in at.error)


def test_the_resume_code_stays_on_the_drill_page_until_it_is_noted(app_test, db_path):
    """It was shown once, above the first part, and gone at the first Next with nothing saying so."""
    at = _start(app_test, handle="ada")
    code = _code_from(at)
    at.run()
    assert _code_from(at) == code, "a rerun keeps it"
    next(b for b in at.button if b.label == "Next →").click().run()
    assert not at.exception, at.exception
    assert at.query_params["part"] != "prompt" and _code_from(at) == code, "the next part still shows it"
    assert any("until you press" in c.value for c in at.caption), "the box says how long it stays"
    at.switch_page("pages/history.py").run()
    assert not any("resume code is" in s.value for s in at.success), "only on the drill page"
    at.switch_page("pages/drill.py").run()
    assert _code_from(at) == code

    next(b for b in at.button if b.label == "I have noted it").click().run()
    assert not at.exception, at.exception
    assert not any("resume code" in s.value for s in at.success), "noted: hidden"
    at.run()
    assert not any("resume code" in s.value for s in at.success), "and it stays hidden"


def test_the_resume_code_is_shown_beside_its_own_handle_only(app_test, db_path):
    at = _start(app_test, handle="ada")
    code = _code_from(at)
    store = AttemptStore(db_path)
    other = store.start_attempt("one_tenant", "bea", "", 45 * 60, seed=1)
    store.close()
    at.query_params["attempt"] = other.token
    at.run()
    assert not at.exception, at.exception
    assert not any("resume code" in s.value for s in at.success), "ada's code is not shown on bea's attempt"
    assert code not in " ".join(m.value for m in [*at.markdown, *at.caption])


def test_skills_levels_say_which_drill_s_scale_they_use(app_test, db_path):
    """One Tenant's levels are Weak/OK/Strong, Hot Tenant's Junior/Senior/Staff: one chart showed both with
    nothing saying which words belong to which drill."""
    from drills.loader import load_catalogue

    drills = load_catalogue().drills
    store = AttemptStore(db_path)
    code = store.issue_resume_code("ada")
    for drill_id, level in (("one_tenant", "strong"), ("hot_tenant", "weak")):
        attempt = store.start_attempt(drill_id, "ada", "", 45 * 60, seed=2)
        store.add_rubric_score(attempt.id, drills[drill_id].drill.rubric[0].id, level)
        store.finish(attempt.id)
    store.close()
    at = _sign_in(_history(app_test), "ada", code)
    captions = " ".join(c.value for c in at.caption)
    one, hot = drills["one_tenant"].drill, drills["hot_tenant"].drill
    for drill in (one, hot):
        scale = " · ".join(drill.level_label(level) for level in ("weak", "ok", "strong"))
        assert f"{drill.title}: {scale}" in captions, (scale, captions)
    hover = [t for t in at.get("plotly_chart") if t.key == "history_skills"]
    cells = [c for row in json.loads(hover[0].proto.spec)["data"][0]["customdata"] for c in row]
    assert f"{hot.title} · levels Junior · Senior · Staff" in cells, "the hover names the drill and its scale"
