"""The partitions presets the hot-tenant drill embeds reproduce brief 004's replay figures.

Both use even placement, so the truth is the same whatever seed an attempt draws.
"""
from __future__ import annotations

import pytest

from sims import partitions, presets


@pytest.mark.parametrize("seed", [1, 2, 99])
def test_replay_drain_is_the_briefs_60_seconds(seed):
    # brief 004: 400/s safe total - 250/s fresh = 150/s for replay; 9,000 pending need at least 60 s
    assert presets.evaluate("partitions.replay_drain", seed) == pytest.approx(60.0)


@pytest.mark.parametrize("seed", [1, 2, 99])
def test_uneven_placement_drains_slower(seed):
    # brief 004: hot placement may make the drain slower; 3 partitions leave 50/s spare, 180 s
    assert presets.evaluate("partitions.replay_drain_uneven", seed) == pytest.approx(180.0, abs=0.125)


def test_the_replay_presets_match_the_brief_defaults():
    for preset_id in ("partitions.replay_drain", "partitions.replay_drain_uneven"):
        preset = presets.PRESETS[preset_id]
        assert preset.model == "partitions" and preset.metric == "replay_drain_s"
        params = preset.params
        assert (params.partitions, params.partition_capacity, params.hot_rate, params.pending) == (
            4, 100.0, 250.0, 9_000.0)
        assert params.placement == "even"
    floor = partitions.replay_drain_floor_s(presets.PRESETS["partitions.replay_drain"].params)
    assert floor == pytest.approx(60.0)
