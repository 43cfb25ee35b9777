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


def _sign_in(at, handle: str, code: str, cohort: str = ""):
    at.text_input(key="history::handle").input(handle)
    at.text_input(key="history::cohort").input(cohort)
    at.text_input(key="history::code").input(code)
    next(b for b in at.button if b.label == "Open my history").click().run()
    assert not at.exception, at.exception
    return at


def _history_table(at):
    return next(t.value for t in at.table if "Drill" in t.value.columns)


def test_the_code_is_issued_once_and_opens_the_history_from_a_new_session(app_test, db_path):
    first = _start(app_test, handle="ada", cohort="north")
    code = _code_from(first)
    again = _start(app_test, handle="ada", cohort="north", code=code)
    assert not again.exception and again.query_params.get("attempt") not in (None, first.query_params["attempt"])
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

    wrong = _sign_in(_history(app_test), "ada", "AAAA-AAAA", "north")
    assert any("do not match" in e.value for e in wrong.error)
    assert not wrong.dataframe
    elsewhere = _sign_in(_history(app_test), "ada", code, "")
    assert any("do not match" in e.value for e in elsewhere.error), "ada of no cohort is someone else"

    at = _sign_in(_history(app_test), "ada", code.lower(), "north")
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
    # The page's outline skips no level: the title (h1), then each section an h2, no markdown heading below.
    assert [t.value for t in at.title] == ["My history"]
    assert [h.value for h in at.header] == ["Resume or review", "Score over time", "Calibration over time",
                                            "Skills over time"]
    assert not at.subheader and not [m for m in at.markdown if m.value.lstrip().startswith("#")]


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


def test_the_resume_code_is_shown_beside_the_attempt_that_claimed_it_only(app_test, db_path):
    at = _start(app_test, handle="ada")
    code = _code_from(at)
    store = AttemptStore(db_path)
    other = store.start_attempt("one_tenant", "ada", "", 45 * 60, seed=1)   # ada's too, but not the claiming one
    store.close()
    at.query_params["attempt"] = other.token
    at.run()
    assert not at.exception, at.exception
    assert not any("resume code" in s.value for s in at.success), "the code is shown only where it was issued"
    assert code not in " ".join(m.value for m in [*at.markdown, *at.caption])


def test_skills_levels_say_which_drill_s_scale_they_use(app_test, db_path):
    """One Tenant's levels are Weak/OK/Strong, Hot Tenant's Junior/Senior/Staff: one chart showed both with
    nothing saying which words belong to which drill."""
    from drills.loader import load_catalogue

    drills = load_catalogue().drills
    store = AttemptStore(db_path)
    code = store.claim_handle("ada", "")
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


# -- squatting: a handle in use opens only with its code ---------------------------------------------
def test_a_second_visitor_cannot_take_up_a_handle_in_use(app_test, db_path):
    """Whoever first typed a handle was issued its code, the real owner none; the squatter's history then
    listed the owner's open attempt. Now the handle is claimed once, and a second visitor is refused."""
    owner = _start(app_test, handle="alex", cohort="north")
    code = _code_from(owner)
    squatter = _start(app_test, handle="alex", cohort="north")
    assert "attempt" not in squatter.query_params, "no attempt was started for the squatter"
    assert any("is in use" in e.value for e in squatter.error)
    assert not any("resume code is" in s.value for s in squatter.success), "no code is handed to a second visitor"
    guessed = _start(app_test, handle="alex", cohort="north", code="AAAA-AAAA")
    assert any("not the one of" in e.value for e in guessed.error) and "attempt" not in guessed.query_params
    namesake = _start(app_test, handle="alex", cohort="south")   # another cohort: another person, their own code
    assert _code_from(namesake) != code
    store = AttemptStore(db_path)
    try:
        assert [a.cohort for a in store.attempts(handle="alex")] == ["north", "south"]
    finally:
        store.close()


def test_a_handle_with_attempts_but_no_code_is_never_issued_one(app_test, db_path):
    """Every demo handle, and every store written before resume codes, had attempts and no code: the first
    visitor was handed a fresh one."""
    store = AttemptStore(db_path)
    store.start_attempt("one_tenant", "legacy", "", 45 * 60, seed=1)
    store.close()
    at = _start(app_test, handle="legacy")
    assert "attempt" not in at.query_params
    assert any("before resume codes existed" in e.value for e in at.error)
    assert not any("resume code is" in s.value for s in at.success)


def test_ten_wrong_codes_for_a_handle_never_stop_its_owner_from_another_browser(app_test, db_path):
    """Anyone who knew a handle could lock its owner out for ten minutes with 10 wrong codes; now the wrong
    codes slow only the browsers and the address that typed them."""
    code = _code_from(_start(app_test, handle="ada"))
    for n in range(10):
        at = _sign_in(_history(app_test), "ada", f"WRNG-{n:04d}")
        assert any("do not match" in e.value for e in at.error)
    owner = _sign_in(_history(app_test), "ada", code)
    assert not owner.error and owner.table, "the owner's right code opens the history"
    other = _start(app_test, handle="bea")                      # another handle is not held up
    assert _code_from(other)


def test_a_seat_in_a_live_room_is_marked_live_in_the_history(app_test, db_path):
    code = _code_from(_start(app_test, handle="ada", cohort="north"))
    store = AttemptStore(db_path)
    session = store.start_live_session("north", "one_tenant~break2", "prof")
    store.live_join(session.id, store.ensure_candidate("ada", "north"), 600)
    store.close()
    at = _sign_in(_history(app_test), "ada", code, "north")
    table = _history_table(at)
    assert list(table["State"]) == ["in progress", "in progress · live room"], "only the live seat is marked"
    labels = [str(p.label) for p in at.get("page_link") if str(p.label).startswith("#")]
    assert labels[0].startswith("#2 Resume") and labels[0].endswith("· live room") and "live" not in labels[1]
