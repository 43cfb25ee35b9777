"""The catalogue as a candidate browses it (drills.browse): what each card leads with."""
from __future__ import annotations

import pytest

from drills.browse import card_of, lead
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
def test_a_drill_a_little_over_its_clock_says_so_gently(drill_id):
    card = _card(drill_id)
    assert card.overruns and card.work_min <= 1.25 * card.clock_min
    assert "runs a few minutes past its clock" in lead(card) and lead(card).startswith("**Fits the 35-minute clock:**")


def _drill_with(work_min: float, offered: list[Scope]):
    drill = CATALOGUE.drills["cache_stampede"].drill
    return card_of(drill, offered, work_min)


def test_a_drill_that_fits_its_clock_leads_with_the_whole_drill():
    assert lead(_drill_with(30.0, [])) == ("**Fits the 35-minute clock:** the whole drill, about 30 minutes of "
                                           "reading and thinking.")


def test_the_first_shorter_practice_that_fits_is_the_one_named():
    too_long = Scope("essentials", "Essentials path", 35.0, 9, 36.0)
    fits = Scope("expiry", "Break 1: the hot key expires", 35.0, 7, 20.0)
    card = _drill_with(80.0, [too_long, fits])
    assert card.fitting == fits
    assert lead(card).startswith("**Fits the 35-minute clock:** Break 1: the hot key expires (about 20 minutes).")
    nothing_fits = _drill_with(80.0, [too_long])
    assert nothing_fits.fitting is None and lead(nothing_fits).startswith("The whole drill (about 80 minutes")
