"""The retry-chain drill: every figure worked by hand from its scenario, the simulations it grades against,
and its shape.

The scenario: 3 layers that retry 3 times, 400 searches/s, a partner limit of 5,000 calls/s, 1 s timeouts, a
2.5 s deadline in the app and a 10% retry budget. The checks every drill shares run on BRIEF in
test_content_common.py.
"""
from __future__ import annotations

from drills.loader import CONTENT_DIR, load_drill
from tests.content_checks import DrillBrief
from tests.library_checks import LABELS, assert_essentials_fit, assert_shape, assert_truths_move

LOADED = load_drill(CONTENT_DIR / "retry_chain.yaml")
DRILL = LOADED.drill
VALUES = LOADED.values

BRIEF_ANSWERS: dict[str, tuple[float, float, str]] = {
    "b_headroom": (12.5, 0.0, "5,000 / 400 = 12.5 times the peak"),
    "e_per_request": (64, 0.0, "(1 + 3) ** 3 = 64 calls a search"),
    "e_peak_calls": (25_600, 0.0, "64 x 400 = 25,600 calls/s"),
    "e_over_limit": (5.12, 0.0, "25,600 / 5,000 = 5.12 times the limit"),
    "e_one_layer": (4, 0.0, "1 + 3 attempts when only the adapter retries"),
    "h_last_start": (9, 0.0, "3 layers x 3 retries x 1 s: the last call starts 9 s in"),
    "h_after_user": (7.5, 0.0, "that call waits 1 s more: 10 s, less the 2.5 s the app waited"),
}

BRIEF_DERIVED: dict[str, tuple[float, float, str]] = {
    "per_request": (64, 0.0, "(1 + 3) ** 3"),
    "budget_floor": (1.331, 0.0, "1.1 ** 3: each layer adds at most 10%"),
}

BRIEF_SIMS: dict[str, tuple[str, float | None, float, str]] = {
    "e_sim_budget": ("retry_chain.budget_amplification", 1.331, 0.03, "at most 1.1 ** 3 = 1.331"),
    "h_sim_orphaned": ("retry_chain.orphaned_pct", 84.375, 0.0, "54 of 64 calls start at 3 s or later"),
}

BRIEF = DrillBrief(LOADED, BRIEF_ANSWERS, BRIEF_DERIVED, BRIEF_SIMS, LABELS, time_box_min=45, sim_seed=0,
                   figures_allowed_in=frozenset({"prompt", "board"}))


def test_the_drill_has_its_parts_follow_ups_and_a_close():
    assert_shape(DRILL, ["prompt", "board", "errors", "hangs", "closing"])


def test_the_essentials_path_fits_45_minutes():
    assert_essentials_fit(DRILL)


def test_no_more_than_a_tenth_of_the_numeric_truths_are_the_same_in_every_draw():
    assert_truths_move(LOADED)


def test_skills_share_ids_with_the_first_drill_where_they_mean_the_same():
    first = {s.id for s in load_drill(CONTENT_DIR / "one_tenant.yaml").drill.rubric}
    assert {"shared_resources", "provider_outage"} <= first & {s.id for s in DRILL.rubric}


def test_the_budgeted_chain_stays_under_its_bound():
    for sims in BRIEF.every_sim_values:   # the brief's run and attempts' own
        assert 1.0 < sims["e_sim_budget"] <= VALUES["budget_floor"]
