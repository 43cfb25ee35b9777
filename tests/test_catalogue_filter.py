"""AppTest: the catalogue filtered by skill and length, its empty state, and what spaced review suggests next."""
from __future__ import annotations

from drills.loader import load_catalogue
from drills.store import AttemptStore
from tests.test_history import _history, _sign_in
from tests.test_review import due_since_an_hour

TITLES = {drill_id: loaded.drill.title for drill_id, loaded in load_catalogue().drills.items()}
SKILLS = "catalogue::skills"
LENGTHS = "catalogue::lengths"


def _shown(at) -> list[str]:
    """The drill cards on the page, by title, in page order."""
    return [s.value for s in at.subheader if s.value in TITLES.values()]


def _titles(*drill_ids: str) -> list[str]:
    return [TITLES[d] for d in drill_ids]


def test_the_catalogue_filters_by_skill_then_by_length(app_test):
    at = app_test("app.py").run()
    assert not at.exception, at.exception
    assert _shown(at) == list(TITLES.values())
    at.multiselect(key=SKILLS).set_value(["shared_resources"]).run()
    assert _shown(at) == _titles("one_tenant", "cache_stampede", "retry_chain")
    assert "Showing 3 of 5 drills." in [c.value for c in at.caption]
    at.button_group(key=LENGTHS).set_value(["one_sitting"]).run()
    assert _shown(at) == _titles("cache_stampede", "retry_chain")
    at.multiselect(key=SKILLS).set_value([]).run()
    at.button_group(key=LENGTHS).set_value(["longer"]).run()
    assert _shown(at) == _titles("one_tenant", "hot_tenant")


def test_no_match_says_why_and_offers_every_drill_again(app_test):
    at = app_test("app.py").run()
    at.multiselect(key=SKILLS).set_value(["retry_amplification"]).run()
    at.button_group(key=LENGTHS).set_value(["longer"]).run()
    assert _shown(at) == []
    assert [i.value for i in at.info] == [
        "No drill practises Retry amplification and is longer. Remove a skill or a length to see more drills."]
    at.button(key="catalogue::show_all").click().run()
    assert not at.exception, at.exception
    assert _shown(at) == list(TITLES.values()) and not at.info
    assert at.multiselect(key=SKILLS).value == [] and not at.button_group(key=LENGTHS).value


def _proven(app_test, handle: str, code: str):
    """A session that opened the handle's history with its code, back on the catalogue with the handle typed."""
    at = _sign_in(_history(app_test), handle, code)
    at.switch_page("pages/home.py").run()
    at.text_input(key="candidate_handle").input(handle).run()
    assert not at.exception, at.exception
    return at


def test_next_up_names_the_skill_the_due_reviews_practise_and_filters_by_it(app_test, db_path):
    store = AttemptStore(db_path)
    code = due_since_an_hour(store, "bea", ("daily_spend", "job_duration"))
    store.close()

    stranger = app_test("app.py").run()
    stranger.text_input(key="candidate_handle").input("bea").run()
    assert not [m for m in stranger.markdown if m.value.startswith("**Next up:**")], \
        "a typed handle alone is no proof: its schedule is not told to whoever types it"

    at = _proven(app_test, "bea", code)
    [line] = [m.value for m in at.markdown if m.value.startswith("**Next up:**")]
    assert line == ("**Next up:** spaced review. 1 due question practises *Spend control*, met in "
                    "One Tenant Takes Everyone Down.")
    assert [p for p in at.get("page_link") if str(p.label).startswith("Due for review: 2 questions")]
    at.button(key="catalogue::show_skill").click().run()
    assert at.multiselect(key=SKILLS).value == ["spend_control"]
    assert _shown(at) == _titles("one_tenant")


def test_with_nothing_due_next_up_is_the_lowest_rated_skill(app_test, db_path):
    store = AttemptStore(db_path)
    code = store.claim_handle("cy", "")
    older = store.start_attempt("retry_chain", "cy", "", 35 * 60, seed=1)
    store.add_rubric_score(older.id, "retry_amplification", "weak")
    store.finish(older.id)
    newer = store.start_attempt("cache_stampede", "cy", "", 35 * 60, seed=2)
    for skill, level in (("expiry_design", "ok"), ("cache_warmth", "strong")):
        store.add_rubric_score(newer.id, skill, level)
    store.finish(newer.id)
    store.close()

    at = _proven(app_test, "cy", code)
    [line] = [m.value for m in at.markdown if m.value.startswith("**Next up:**")]
    assert line == "**Next up:** *Retry amplification*, your lowest score lately (Junior in Every layer tries again)."
    assert not [p for p in at.get("page_link") if str(p.label).startswith("Due for review")]
