"""The hot-tenant drill against brief 004 ("Distribute a hot tenant..."): every figure, the pacing, the rubric.

Each number the brief states is checked against what the drill's own formulas (or its simulations) give;
the checks every drill shares run on BRIEF in test_content_common.py.
"""
from __future__ import annotations

import re

import pytest

from drills.formulas import placeholders
from drills.loader import CONTENT_DIR, load_drill
from drills.schema import ChoiceQuestion, NotesQuestion
from tests.content_checks import GRADED_SAMPLE, DrillBrief, numeric, templates

LOADED = load_drill(CONTENT_DIR / "hot_tenant.yaml")
DRILL = LOADED.drill
VALUES = LOADED.values

# question id -> (the figure the brief states, relative tolerance, where the brief states it)
BRIEF_ANSWERS: dict[str, tuple[float, float, str]] = {
    "b_deficit": (150, 0.0, "skew row: 250 units/s routed to A leaves 150 units/s unserved"),
    "b_fleet_util": (62.5, 0.0, "skew row: offered load is only 62.5% of total nominal capacity"),
    "b_hot_load": (250, 0.0, "contract: 250 write units/s to a partition able to serve 100, i.e. 250%"),
    "s_bucket_rate": (62.5, 0.0, "independent-event row: 250 / 4 ideal buckets = 62.5 units/s per bucket"),
    "f_naive_candidates": (80, 0.0, "senior follow-up: ten from each of eight buckets reads up to eighty candidates"),
    "o_unbatched": (100, 0.0, "lead follow-up: one unbatched write per 10 ms sustains only 100 events/s"),
    "o_shortfall": (150, 0.0, "lead follow-up: 250/s leaves 150/s behind"),
    "o_batched": (500, 0.0, "lead follow-up: a batch of five in the same 10 ms gives an ideal 500 events/s"),
    "r_replay_capacity": (150, 0.0, "build brief: 400/s safe total and 250/s fresh leave only 150/s for replay"),
}

# derived value -> (the brief's figure, relative tolerance, where)
BRIEF_DERIVED: dict[str, tuple[float, float, str]] = {
    "nominal_capacity": (400, 0.0, "contract: a four-partition service with a nominal 400/s total capacity"),
    "drain_floor_s": (60, 0.0, "build brief: 9,000 pending / 150 spare = a 60 s minimum, ideal spread"),
    "bucket_rate": (62.5, 0.0, "independent-event target: 62.5 units/s per bucket"),
}

# simulation-graded question -> (preset id, the brief's figure or None, relative tolerance, where)
BRIEF_SIMS: dict[str, tuple[str, float | None, float, str]] = {
    "r_sim_drain": ("partitions.replay_drain", 60, 0.0,
                    "build brief: at least 60 seconds to replay 9,000 units under ideal distribution"),
    "r_sim_uneven": ("partitions.replay_drain_uneven", None, 0.0,
                     "build brief: hot physical placement may make the actual drain slower"),
}

SIM_SEEDS = (1, 2, 7)

# Numbers that are names or labels rather than quantities: HTTP codes, break numbers, a year, p99.
_LABELS = re.compile(
    r"\b(202|429)\b"
    r"|\bBreak\s+\d\b"
    r"|\b20\d\d\b"          # the year of the real incident
    r"|\bp99\b"
    r"|\b80% range\b"     # the app's calibration range, not a figure of the scenario
)

# The generic checks in test_content_common.py run on this; no part may type a figure.
BRIEF = DrillBrief(LOADED, BRIEF_ANSWERS, BRIEF_DERIVED, BRIEF_SIMS, _LABELS, time_box_min=30,
                   sim_seed=SIM_SEEDS[0])


def test_the_brief_has_enough_numeric_questions():
    assert len(BRIEF_ANSWERS) >= 3
    assert len(numeric(DRILL, with_answer=False)) >= 1, "at least one simulation-graded question"


def test_simulation_settings_match_the_drill_givens():
    from sims import presets

    ideal = presets.PRESETS["partitions.replay_drain"].params
    uneven = presets.PRESETS["partitions.replay_drain_uneven"].params
    for params in (ideal, uneven):
        assert params.partitions == VALUES["partitions"]
        assert params.partition_capacity == VALUES["partition_capacity"]
        assert params.hot_rate == VALUES["hot_rate"]
        assert params.pending == VALUES["pending"]
        assert params.placement == "even"  # seed-independent, so every attempt is graded on the same truth
    assert ideal.buckets == VALUES["buckets"]
    assert uneven.buckets == VALUES["uneven_buckets"]


def test_the_ideal_drain_meets_the_formula_floor_and_uneven_placement_is_slower():
    for sim_values in BRIEF.every_sim_values:   # the brief's run and attempts' own
        assert sim_values["r_sim_drain"] == pytest.approx(VALUES["drain_floor_s"])
        assert sim_values["r_sim_uneven"] > sim_values["r_sim_drain"]
        assert sim_values["r_sim_uneven"] == pytest.approx(VALUES["uneven_floor_s"], abs=0.25)


def test_simulation_truths_do_not_depend_on_the_attempt_seed():
    from sims import presets

    for question in numeric(DRILL, with_answer=False):
        assert len({presets.evaluate(question.sim, seed) for seed in SIM_SEEDS + GRADED_SAMPLE}) == 1, question.id


def test_the_drill_has_its_parts_follow_ups_and_a_close():
    assert [p.id for p in DRILL.parts] == ["prompt", "board", "spread", "ordered", "replay", "closing"]
    breaks = [p for p in DRILL.parts if p.kind == "break"]
    assert all(p.followup is not None and p.followup.questions for p in breaks)
    assert DRILL.parts[-1].kind == "closing" and DRILL.parts[-1].reveal
    kinds = {q.kind for q in DRILL.all_questions()}
    assert kinds == {"numeric", "choice", "notes"}
    assert any(isinstance(q, ChoiceQuestion) for q in DRILL.all_questions())
    assert any(isinstance(q, NotesQuestion) for q in DRILL.all_questions())


def test_rubric_levels_are_named_by_seniority():
    assert (DRILL.level_label("strong"), DRILL.level_label("ok"), DRILL.level_label("weak")) == (
        "Staff", "Senior", "Junior")
    assert 4 <= len(DRILL.rubric) <= 6
    assert set(DRILL.verdict.watch_skills) <= {s.id for s in DRILL.rubric}


def test_every_given_and_derived_value_is_used():
    texts = " ".join(template for _, _, template in templates(DRILL))
    exprs = " ".join([d.expr for d in DRILL.derived] + [q.answer for q in numeric(DRILL, with_answer=True)])
    mentioned = set(placeholders(texts)) | set(re.findall(r"[a-z_][a-z0-9_]*", exprs))
    sim_settings = {"uneven_buckets"}  # used by the test above against the preset
    unused = {g.name for g in DRILL.givens} | {d.name for d in DRILL.derived}
    unused -= mentioned | sim_settings
    assert not unused, f"defined but never used: {sorted(unused)}"
