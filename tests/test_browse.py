"""The catalogue as a candidate browses it (drills.browse): what each card leads with, the filters by skill and
length, and what spaced review suggests next."""
from __future__ import annotations

import pytest

from drills.browse import (LENGTHS, LONGER, ONE_SITTING, NextUp, card_of, lead, matching, next_up, next_up_line,
                           nothing_matches, skill_choices)
from drills.loader import load_catalogue
from drills.scope import ScopedDrills, Scope, estimated_minutes, scope_drill

CATALOGUE = load_catalogue()
DRILLS = ScopedDrills(CATALOGUE.drills)


def _card(drill_id: str):
    return card_of(CATALOGUE.drills[drill_id].drill, *DRILLS.offers(drill_id))


def test_a_scope_carries_the_work_it_asks_for():
    loaded = CATALOGUE.drills["one_tenant"]
    essentials = DRILLS.offers("one_tenant")[0][0]
    assert essentials.work_min == estimated_minutes(scope_drill(loaded, "essentials").drill)
    assert 0 < essentials.work_min <= essentials.minutes


def test_the_first_card_leads_with_the_practice_that_fits_its_clock():
    card = _card("one_tenant")
    essentials = DRILLS.offers("one_tenant")[0][0]
    whole = estimated_minutes(CATALOGUE.drills["one_tenant"].drill)
    text = lead(card)
    assert text.startswith(f"**Fits the 45-minute clock:** the essentials path (about {essentials.work_min:.0f} "
                           "minutes).")
    # The whole drill's number stays honest, said as what the drill is for, not as a failure.
    assert f"The whole drill (about {whole:.0f} minutes of reading and thinking) is deeper practice" in text
    assert "overruns" not in text


@pytest.mark.parametrize("drill_id", ["cache_stampede", "retry_chain", "split_brain"])
def test_a_library_drill_fits_its_45_minute_clock_whole(drill_id):
    card = _card(drill_id)
    assert not card.overruns and card.clock_min == 45
    assert lead(card).startswith("**Fits the 45-minute clock:** the whole drill, about ")


def _drill_with(work_min: float, offered: list[Scope]):
    drill = CATALOGUE.drills["cache_stampede"].drill
    return card_of(drill, offered, work_min)


def test_a_drill_a_little_over_its_clock_says_so_gently():
    card = _drill_with(50.0, [Scope("expiry", "Break 1: the hot key expires", 25.0, 7, 20.0)])
    assert card.overruns and card.work_min <= 1.25 * card.clock_min
    assert lead(card) == ("**Fits the 25-minute clock:** Break 1: the hot key expires (about 20 minutes). The whole "
                          "drill (about 50 minutes of reading and thinking) goes a little deeper and runs a few minutes "
                          "past its clock, which records the overtime.")


def test_a_drill_that_fits_its_clock_leads_with_the_whole_drill():
    assert lead(_drill_with(30.0, [])) == ("**Fits the 45-minute clock:** the whole drill, about 30 minutes of "
                                           "reading and thinking.")


def test_the_first_shorter_practice_that_fits_is_the_one_named():
    too_long = Scope("essentials", "Essentials path", 35.0, 9, 36.0)
    fits = Scope("expiry", "Break 1: the hot key expires", 35.0, 7, 20.0)
    card = _drill_with(80.0, [too_long, fits])
    assert card.fitting == fits
    assert lead(card).startswith("**Fits the 35-minute clock:** Break 1: the hot key expires (about 20 minutes).")
    nothing_fits = _drill_with(80.0, [too_long])
    assert nothing_fits.fitting is None and lead(nothing_fits).startswith("The whole drill (about 80 minutes")


# -- the filters --------------------------------------------------------------------------------------------
CARDS = [_card(drill_id) for drill_id in CATALOGUE.drills]
ALL = [card.drill_id for card in CARDS]
DRILL_OF = {drill_id: loaded.drill for drill_id, loaded in CATALOGUE.drills.items()}


def _ids(cards) -> list[str]:
    return [card.drill_id for card in cards]


def test_every_rubric_skill_is_a_choice_once_even_when_drills_share_it():
    choices = skill_choices(DRILL_OF.values())
    every = [s.id for d in DRILL_OF.values() for s in d.rubric]
    assert list(choices) == list(dict.fromkeys(every)) and len(choices) < len(every)
    assert choices["shared_resources"] == "Seeing what is shared"


def test_nothing_picked_shows_every_drill_in_catalogue_order():
    assert _ids(matching(CARDS, [], [])) == ALL


def test_a_skill_shows_the_drills_whose_rubric_has_it_and_two_skills_either():
    assert _ids(matching(CARDS, ["shared_resources"], [])) == ["one_tenant", "cache_stampede", "retry_chain"]
    assert _ids(matching(CARDS, ["retry_amplification"], [])) == ["retry_chain"]
    assert _ids(matching(CARDS, ["retry_amplification", "split_brain"], [])) == ["retry_chain", "split_brain"]


def test_length_sorts_drills_by_the_whole_drills_work():
    short = _ids(matching(CARDS, [], [ONE_SITTING]))
    assert short == ["cache_stampede", "retry_chain", "split_brain"]
    assert _ids(matching(CARDS, [], [LONGER])) == ["one_tenant", "hot_tenant"]
    assert _ids(matching(CARDS, [], [ONE_SITTING, LONGER])) == ALL
    assert all(card.work_min <= 45 for card in CARDS if card.drill_id in short)


def test_the_length_line_is_the_45_minutes_its_label_says():
    assert LENGTHS[ONE_SITTING] == "Whole drill within 45 min"
    assert _drill_with(45.0, []).length == ONE_SITTING and _drill_with(45.5, []).length == LONGER


def test_skill_and_length_must_both_hold():
    assert _ids(matching(CARDS, ["shared_resources"], [LONGER])) == ["one_tenant"]
    assert matching(CARDS, ["retry_amplification"], [LONGER]) == []


def test_the_empty_state_says_what_was_asked_and_the_way_out():
    assert nothing_matches(["Retry amplification"], ["Longer"]) == (
        "No drill practises Retry amplification and is longer. Remove a skill or a length to see more drills.")
    assert nothing_matches(["A", "B"], []).startswith("No drill practises A or B.")


# -- next up ------------------------------------------------------------------------------------------------
def test_the_skill_most_due_questions_practise_is_next():
    due = [("one_tenant", "job_duration"), ("one_tenant~essentials", "daily_spend"), ("one_tenant", "daily_spend")]
    suggestion = next_up(DRILL_OF, due, [])
    assert suggestion == NextUp("spend_control", DRILL_OF["one_tenant"].skill("spend_control").name, "one_tenant",
                                "One Tenant Takes Everyone Down", due=2)
    assert next_up_line(suggestion) == ("**Next up:** spaced review. 2 due questions practise *Spend control*, met "
                                        "in One Tenant Takes Everyone Down.")


def test_on_a_tie_the_longest_overdue_question_decides():
    assert next_up(DRILL_OF, [("one_tenant", "job_duration"), ("one_tenant", "daily_spend")], []).skill_id == \
        "shared_resources"


def test_with_nothing_due_the_lowest_rated_skill_is_next_newest_first_on_a_tie():
    scored = [("retry_chain", {"retry_amplification": "ok", "provider_outage": "strong"}),
              ("cache_stampede~essentials", {"expiry_design": "weak", "cache_warmth": "weak"}),
              ("split_brain", {"split_brain": "weak"})]
    suggestion = next_up(DRILL_OF, [], scored)
    assert (suggestion.skill_id, suggestion.drill_id, suggestion.level, suggestion.due) == \
        ("expiry_design", "cache_stampede", "Junior", 0)
    assert next_up_line(suggestion) == ("**Next up:** *Expiry design*, your lowest score lately (Junior in The page "
                                        "that everyone refreshes).")


def test_nothing_is_suggested_when_every_skill_is_strong_or_nothing_is_known():
    assert next_up(DRILL_OF, [], [("retry_chain", {"retry_amplification": "strong"})]) is None
    assert next_up(DRILL_OF, [], []) is None
    # A drill, question or skill the catalogue no longer has is passed over, not an error.
    assert next_up(DRILL_OF, [("gone", "q"), ("one_tenant", "gone")], [("gone", {"x": "weak"}),
                                                                        ("retry_chain", {"gone": "weak"})]) is None
