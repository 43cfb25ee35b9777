"""Replay (issue 22): an attempt's simulation question opens its page on the graded run, seed and locked
guess, pinned as A, and one changed setting draws B over it."""
from __future__ import annotations

import json

import pytest

from drills.loader import load_catalogue
from drills.schema import NumericQuestion
from drills.variants import in_variant
from sims import presets
from ui.sims.replay import replay_query, replay_tab
from tests.test_sim_pages import lock_and_play
from ui.sims.embed import MODEL_PAGES

LOADED = load_catalogue().drills["one_tenant"]
SEED = 123_456   # a question's graded seed (drills.disclosure.question_seed)
SIM_QUESTIONS = [q for q in LOADED.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim]


def test_every_simulation_question_of_the_drill_has_a_tab_to_replay_on():
    assert len(SIM_QUESTIONS) >= 5
    for q in SIM_QUESTIONS:
        query = replay_query(q.sim, LOADED.values, 42.0, seed=SEED)
        name, seed_key = replay_tab(q.sim, query)
        assert query[seed_key] == "123456"
        assert query[f"guess_{name}"] == "42" and f"pin_{name}" in query
        assert query[f"pin_{name}"].endswith("seed=123456 guess=42")


def _drawn(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


@pytest.mark.parametrize("question_id", ["f1_sim_hot_4", "f2_sim_storm_peak",
                                         "b2_sim_pool10_429s"])
def test_the_replay_link_opens_the_graded_run_with_the_guess_pinned(app_test, question_id):
    q = LOADED.drill.question(question_id)
    variant = in_variant(LOADED, 3)                 # a retake's numbers travel too
    query = replay_query(q.sim, variant.values, 7.0, seed=SEED)
    name, seed_key = replay_tab(q.sim, query)
    at = app_test(MODEL_PAGES[presets.PRESETS[q.sim].model][0])
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key=seed_key).value == SEED
    assert any("Your locked guess: **7 " in i.value for i in at.info)
    at.button(key=f"play::{name}").click().run()
    assert not at.exception, at.exception
    assert any("This run is A" in c.value for c in at.caption)     # the page's run is the pinned graded run
    if question_id == "f2_sim_storm_peak":   # the drawn demand has no slider: the page says it runs the pinned one
        assert any("demand per s" in c.value for c in at.caption)


def test_changing_one_setting_overlays_the_other_choice_on_the_graded_run(app_test):
    q = LOADED.drill.question("f1_sim_hot_4")
    at = app_test("pages/sim_hot_shard.py")
    at.query_params.update(replay_query(q.sim, LOADED.values, 150.0, seed=SEED))
    at.run()
    at.button(key="play::hot_shard.celebrity").click().run()
    at.slider(key="hs_celeb_shards").set_value(6).run()
    at = lock_and_play(at, "hot_shard.celebrity", 120.0)      # B asks for its own guess
    assert not at.exception, at.exception
    overlay = next(s for s in _drawn(at) if s["layout"].get("title", {}).get("text") == "A and B on one chart")
    assert [t["name"] for t in overlay["data"]] == ["A (pinned)", "B (now)"]
    assert len(overlay["data"][0]["x"]) == 4 and len(overlay["data"][1]["x"]) == 6
