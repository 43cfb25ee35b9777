"""Sentences that stay true in every draw (issue 39): the draw an attempt gets, and every drill over 500 draws.

The content rules check `holds:` on sampled draws; an attempt's own draw comes from its seed, anywhere in the
vary space, so drills.variants.pick_variant refuses one that breaks a condition and takes the seed's next.
"""
from __future__ import annotations

import pytest
import yaml

from drills import draws, lint
from drills.draws import corners, draw_for_seed, sampled
from drills.lint.conditions import broken_holds
from drills.loader import CONTENT_DIR, load_catalogue
from drills.schema import Drill
from drills.variants import WRITTEN, in_variant, pick_variant

CATALOGUE = load_catalogue()
ONE = (CONTENT_DIR / "one_tenant.yaml").read_text(encoding="utf-8")
JOINT = ', when: ["spend_cap * free_shed_pct / 100 > jobs_per_day * cost_per_job_a"]'


def _free_shed_on_ordinary_days() -> Drill:
    """One Tenant with its spend cap drawn apart from the daily volume again, its `holds:` kept: some draws
    shed Free tenants at or below a normal day's spend, the sentence's condition broken."""
    assert JOINT in ONE
    return Drill.model_validate(yaml.safe_load(ONE.replace(JOINT, "")))


def _sheds_free_daily(drill: Drill, draw: int) -> bool:
    values, _ = lint.variant_values(drill, draw)
    return values["free_shed_at"] <= values["daily_spend"]


def test_an_attempt_is_never_given_a_draw_that_breaks_a_holds_condition():
    drill = _free_shed_on_ordinary_days()
    forced = [seed for seed in range(1, 41) if _sheds_free_daily(drill, draw_for_seed(seed))]
    assert len(forced) >= 3, "the seeds' own first draws must include some that break the condition"
    for seed in forced:
        assert broken_holds(drill, lint.variant_values(drill, draw_for_seed(seed))[0]) == "free_shed_at > daily_spend"
        picked = pick_variant(drill, seed)
        nxt = next(draw_for_seed(seed, k) for k in range(1, 50) if not _sheds_free_daily(drill, draw_for_seed(seed, k)))
        assert picked == nxt, "the seed's next draw that keeps the condition, not any other"
        assert pick_variant(drill, seed) == picked, "the same seed always gets the same draw"
        assert broken_holds(drill, lint.variant_values(drill, picked)[0]) is None


def test_a_retake_weighs_only_draws_that_keep_every_condition():
    drill = _free_shed_on_ordinary_days()
    for seed in range(1, 13):
        had = [pick_variant(drill, seed + 500)]
        picked = pick_variant(drill, seed, had)
        assert picked not in had and not _sheds_free_daily(drill, picked), seed
    # The check still names such a draw: refusing it at the start of an attempt is no licence to write it.
    assert any("free_shed_at > daily_spend" in f.message
               for f in lint.run_rules(lint.Subject(drill, "one_tenant", 48)) if f.rule == "conditions")


def test_a_draw_the_loader_would_refuse_is_never_picked(monkeypatch):
    # Without retries a draw that breaks One Tenant's joint condition is kept, and variant_values refuses it.
    monkeypatch.setattr(draws, "_JOINT_RETRIES", 1)
    loaded = CATALOGUE.drills["one_tenant"]
    drill = loaded.drill
    forced = [seed for seed in range(1, 60) if lint.variant_values(drill, draw_for_seed(seed))[1]]
    assert forced, "some seed's first draw must break the joint condition"
    for seed in forced[:5]:
        picked = pick_variant(drill, seed)
        assert picked != draw_for_seed(seed)
        assert lint.variant_values(drill, picked)[1] == []
        assert in_variant(loaded, picked).variant == picked   # the page can show it


def test_a_seed_none_of_whose_draws_keeps_the_conditions_gets_the_written_numbers(monkeypatch):
    # The written numbers are checked as written by the rules; they are what is left when every draw is refused.
    from drills import variants

    offered: list[int] = []
    monkeypatch.setattr(variants, "seed_draws", lambda seed: (offered.append(d) or d for d in draws.seed_draws(seed, 10)))
    monkeypatch.setattr(variants, "broken_holds", lambda drill, values: "free_shed_at > daily_spend")
    assert pick_variant(CATALOGUE.drills["one_tenant"].drill, 7) == WRITTEN
    assert offered == [draw_for_seed(7, k) for k in range(10)], "every draw the seed offers is weighed, in order"


# -- the done-criterion: every drill passes every rule over 500 draws and the corners ------------------
@pytest.mark.parametrize("drill_id", ["one_tenant", "hot_tenant", "cache_stampede", "retry_chain", "split_brain"])
def test_every_drill_passes_every_rule_over_500_draws_and_the_corners(drill_id):
    drill = CATALOGUE.drills[drill_id].drill
    subject = lint.Subject(drill, drill_id, draws=500)
    labels = [label for label, _, _ in subject.drawn]
    assert len({label for label in labels if label.startswith("draw ")}) == 500
    assert sum(label.startswith("corner ") for label in labels) == len(list(corners(drill))) >= 2
    assert len(labels) == len(list(sampled(drill, 500)))
    assert lint.run_rules(subject) == []


# -- case 5's second half: the hot-shard model's docstring ---------------------------------------------
def test_the_hot_shard_model_does_not_say_more_shards_never_raise_the_load_under_shuffle_sharding():
    # Before issue 39 the docstring said more shards never raise the hot shard's load, for every placement.
    from sims import hot_shard
    from sims.hot_shard import Params

    def load(shards: int) -> float:
        params = Params(shards=shards, hot_key_share=0.0, ordinary_keys=20, groups_per_key=3, duration_s=1.0)
        return hot_shard.hot_shard_load_pct(hot_shard.run(params, 1))

    assert (round(load(9), 2), round(load(10), 2)) == (21.33, 26.67)
    doc = " ".join(hot_shard.__doc__.split())
    assert "With shuffle sharding a key's groups are picked for each shard count, so one more shard can raise it" in doc
    assert "9 to 10 shards took one from 21.33% to 26.67%" in doc
