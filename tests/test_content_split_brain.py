"""The split-brain drill: every figure worked by hand from its scenario, the simulations it grades against,
and its shape.

The scenario: a 10 s lease renewed every 3 s, the fault 1.3 s after a renewal, an 18 s pause, a standby that
polls every 0.25 s, 2 writes a second and a clock set back 4 s. The checks every drill shares run on BRIEF in
test_content_common.py.
"""
from __future__ import annotations

from drills.loader import CONTENT_DIR, load_drill
from tests.content_checks import DrillBrief
from tests.library_checks import LABELS, assert_essentials_fit, assert_shape, assert_truths_move

LOADED = load_drill(CONTENT_DIR / "split_brain.yaml")
DRILL = LOADED.drill
VALUES = LOADED.values

BRIEF_ANSWERS: dict[str, tuple[float, float, str]] = {
    "b_missed": (3, 0.0, "renewals due at 3, 6 and 9 s may fail; the one at 12 s is past the 10 s lease"),
    "p_lapse": (8.7, 0.0, "10 s lease - 1.3 s since the renewal"),
    "p_takeover": (8.95, 0.0, "8.7 s + one 0.25 s poll at most"),
    "p_asleep": (18.6, 0.0, "(18 s pause - 8.7 s) x 2 batches a second"),
    "c_extra": (8, 0.0, "4 s set back x 2 writes a second"),
    "c_trust": (6, 0.0, "10 s lease - 4 s a sync may step"),
}

BRIEF_DERIVED: dict[str, tuple[float, float, str]] = {
    "lapse_at_s": (8.7, 0.0, "10 - 1.3"),
    "takeover_by_s": (8.95, 0.0, "10 - 1.3 + 0.25"),
    "asleep_s": (9.3, 0.0, "18 - 8.7"),
    "trust_s": (6, 0.0, "10 - 4"),
}

BRIEF_SIMS: dict[str, tuple[str, float | None, float, str]] = {
    "p_sim_wake": ("leases.pause_wake", None, 0.0, "between 18 - 8.95 = 9.05 s and 18 - 8.7 = 9.3 s"),
    "c_sim_stale": ("leases.step_stale", None, 0.0, "at most the 8 batches after the lapse"),
}

BRIEF = DrillBrief(LOADED, BRIEF_ANSWERS, BRIEF_DERIVED, BRIEF_SIMS, LABELS, time_box_min=45, sim_seed=0,
                   figures_allowed_in=frozenset({"prompt", "board"}))


def test_the_drill_has_its_parts_follow_ups_and_a_close():
    assert_shape(DRILL, ["prompt", "board", "pause", "skew", "closing"])


def test_the_essentials_path_fits_45_minutes():
    assert_essentials_fit(DRILL)


def test_no_more_than_a_tenth_of_the_numeric_truths_are_the_same_in_every_draw():
    assert_truths_move(LOADED)


def test_skills_share_ids_with_the_hot_tenant_drill_where_they_mean_the_same():
    hot = {s.id for s in load_drill(CONTENT_DIR / "hot_tenant.yaml").drill.rubric}
    assert "ordering_fencing" in hot & {s.id for s in DRILL.rubric}


def test_the_simulated_wake_sits_between_the_hand_worked_bounds():
    for sims in BRIEF.every_sim_values:   # the brief's run and attempts' own
        wake = sims["p_sim_wake"]
        assert VALUES["pause_s"] - VALUES["takeover_by_s"] <= wake <= VALUES["pause_s"] - VALUES["lapse_at_s"]


def test_the_simulated_split_brain_is_within_the_writes_after_the_lapse():
    for sims in BRIEF.every_sim_values:
        assert 0 < sims["c_sim_stale"] <= LOADED.truth("c_extra")
