"""Practice that fits the clock: the essentials path and single-break drills cut from a whole drill."""
from __future__ import annotations

import pytest

from drills.loader import load_catalogue
from drills.schema import Drill
from drills.variants import in_variant
from drills.scope import (ESSENTIALS, ScopedDrills, estimated_minutes, scope_drill, scoped_id, scopes,
                          split_id)

CATALOGUE = load_catalogue()
DRILLS = sorted(CATALOGUE.drills)
CASES = [(d, s.id) for d in DRILLS for s in scopes(CATALOGUE.drills[d].drill)]


def test_every_drill_offers_essentials_and_each_of_its_breaks():
    for drill_id in DRILLS:
        drill = CATALOGUE.drills[drill_id].drill
        offered = [s.id for s in scopes(drill)]
        assert offered[0] == ESSENTIALS
        assert offered[1:] == [p.id for p in drill.parts if p.kind == "break"]


def test_the_whole_drill_does_not_fit_its_clock_which_is_why_scopes_exist():
    loaded = CATALOGUE.drills["one_tenant"]
    assert estimated_minutes(loaded.drill) > 2 * loaded.drill.time_box_min


@pytest.mark.parametrize("drill_id,scope", CASES)
def test_a_scoped_attempt_fits_its_clock_and_its_pacing_adds_up(drill_id, scope):
    cut = scope_drill(CATALOGUE.drills[drill_id], scope).drill
    assert estimated_minutes(cut) <= cut.time_box_min, f"{cut.title}: {estimated_minutes(cut):.0f} min of work"
    assert sum(p.minutes for p in cut.parts) == pytest.approx(cut.time_box_min)
    assert all(p.minutes > 0 for p in cut.parts)


def test_the_essentials_path_has_about_twenty_questions_three_to_five_per_break():
    loaded = CATALOGUE.drills["one_tenant"]
    cut = scope_drill(loaded, ESSENTIALS).drill
    assert 15 <= len(cut.all_questions()) <= 22
    for part in cut.parts:
        if part.kind == "break":
            assert 2 <= len(part.questions) <= 5, part.id
            assert part.followup is None
    assert cut.time_box_min == loaded.drill.time_box_min


@pytest.mark.parametrize("drill_id,scope", CASES)
def test_a_scoped_drill_is_a_valid_drill_with_the_same_numbers(drill_id, scope):
    loaded = CATALOGUE.drills[drill_id]
    scoped = scope_drill(loaded, scope)
    cut = scoped.drill
    assert cut.id == scoped_id(drill_id, scope) and split_id(cut.id) == (drill_id, scope)
    # Valid under the schema's own rules (ids, references, pacing within the box), bar the scoped id.
    Drill.model_validate({**cut.model_dump(), "id": drill_id})
    full = {q.id for q in loaded.drill.all_questions()}
    assert {q.id for q in cut.all_questions()} <= full
    assert scoped.values == loaded.values, "a scope never changes a given or an answer"
    used = {s for q in cut.all_questions() for s in q.skills}
    assert {s.id for s in cut.rubric} == used, "the rubric covers exactly the skills the questions evidence"
    assert 1 <= cut.verdict.strong_needed <= len(cut.rubric)


def test_a_break_drill_keeps_its_break_whole_with_the_follow_up():
    loaded = CATALOGUE.drills["one_tenant"]
    whole = loaded.drill.part("break3")
    cut = scope_drill(loaded, "break3").drill
    assert [p.id for p in cut.parts] == ["prompt", "board", "baseline", "break3"]
    kept = cut.part("break3")
    assert kept.questions == whole.questions and kept.followup == whole.followup
    assert kept.reveal == whole.reveal
    assert cut.time_box_min == loaded.drill.break_minutes == 45


def test_no_single_break_gets_a_longer_clock_than_its_whole_drill():
    for loaded in CATALOGUE.drills.values():
        for scope in scopes(loaded.drill):
            assert scope.minutes <= loaded.drill.time_box_min, f"{loaded.drill.id} {scope.id}: {scope.minutes} min"


def test_scoped_ids_resolve_through_the_catalogue_mapping():
    drills = ScopedDrills(CATALOGUE.drills)
    assert list(drills) == list(CATALOGUE.drills), "the catalogue still lists whole drills only"
    assert drills["one_tenant~break2"].drill.title.endswith("Break 2: the primary LLM provider goes down")
    assert drills.get("one_tenant") is CATALOGUE.drills["one_tenant"]
    assert drills.get("one_tenant~break9") is None and "one_tenant~break9" not in drills
    assert drills.get("nope~essentials") is None


@pytest.mark.parametrize("drill_id", sorted(CATALOGUE.drills))
def test_a_practice_verdict_names_the_count_it_asks_for(drill_id):
    whole = CATALOGUE.drills[drill_id].drill
    drills = ScopedDrills(CATALOGUE.drills)
    scaled = 0
    for scope in scopes(whole):
        verdict = drills[scoped_id(drill_id, scope.id)].drill.verdict
        if verdict.strong_needed == whole.verdict.strong_needed:
            assert (verdict.pass_message, verdict.short_message) == (whole.verdict.pass_message,
                                                                     whole.verdict.short_message)
            continue
        scaled += 1
        for message in (verdict.pass_message, verdict.short_message):
            assert f" {verdict.strong_needed} " in message and message != whole.verdict.pass_message
    assert scaled, "some practice covers fewer skills and asks for fewer strong ones"


def test_the_catalogue_works_out_each_drills_offers_once(monkeypatch):
    import drills.scope as scope_module

    drills = ScopedDrills(CATALOGUE.drills)
    cuts = []
    real = scope_module.scope_drill
    monkeypatch.setattr(scope_module, "scope_drill", lambda loaded, s: cuts.append(s) or real(loaded, s))
    for drill_id, loaded in CATALOGUE.drills.items():
        offered, minutes = drills.offers(drill_id)
        assert [s.id for s in offered] == [s.id for s in scopes(loaded.drill)]
        assert minutes == estimated_minutes(loaded.drill)
    direct = len(cuts) // 2   # scopes() above cut each scope once more, outside the catalogue
    for drill_id in CATALOGUE.drills:
        drills.offers(drill_id)
    assert len(cuts) == 2 * direct, "a second page run must not cut the scopes again"


def test_a_break_drill_starts_from_the_catalogue_and_runs_on_its_own_clock(app_test, db_path):
    from drills.reports import aggregates
    from drills.reports.grading_key import DrillKey
    from drills.reports.source import Filters
    from drills.store import AttemptStore

    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("bea")
    at.selectbox(key="scope_pick::one_tenant").select_index([s.id for s in scopes(CATALOGUE.drills["one_tenant"].drill)].index("break2"))
    at.button(key="start_scope::one_tenant").click().run()
    assert not at.exception, at.exception
    store = AttemptStore(db_path)
    attempt = store.attempt_by_token(at.query_params["attempt"])
    assert attempt.drill_id == "one_tenant~break2" and attempt.time_box_s == 45 * 60
    assert at.selectbox(key="part_select").options == [
        "1. The prompt", "2. Numbers for the board", "3. The baseline design",
        "4. Break 2: the primary LLM provider goes down", "5. Score yourself"]
    at.selectbox(key="part_select").set_value("board").run()
    board_forms = [k for k in (w.key for w in at.text_input) if k and k.endswith("::value")]
    assert sorted(board_forms) == sorted(f"lock::{q}::value" for q in ("jobs_in_flight", "utilisation"))

    at.switch_page("pages/results.py").run()
    assert not at.exception, at.exception
    assert any(t.value.startswith("Results — One Tenant Takes Everyone Down — Break 2") for t in at.title)

    # The instructor board treats the break drill as a drill of its own, graded on its own questions.
    loaded = CATALOGUE.drills["one_tenant"]
    scoped = ScopedDrills(CATALOGUE.drills)[attempt.drill_id]
    drawn = in_variant(loaded, attempt.variant)   # the attempt's own numbers
    store.lock_answer(attempt.id, "b2_polish_rate", "break2", "numeric", value=drawn.values["b2_polish_rate"])
    key = DrillKey.from_loaded(scoped, {q.id: 1.0 for q in scoped.drill.all_questions()
                                                 if getattr(q, "sim", None)},
                               aggregates.variants_drawn(store, attempt.drill_id))
    summary = aggregates.attempt_summary(store, key, Filters(attempt.drill_id))
    assert list(summary["attempt_id"]) == [attempt.id] and summary["earned"].iloc[0] == 1
    assert "one_tenant~break2" in aggregates.drills_by_activity(store)
