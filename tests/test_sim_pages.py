"""AppTest runs of the three simulation pages: they load alone, and guess, Play, verdict works.

Each page is run standalone, as app.py's st.navigation would load it.
"""
from __future__ import annotations

import json

import pytest

PAGES = {
    "pages/sim_hot_shard.py": ["Celebrity key", "Tenant groups", "Shuffle sharding"],
    "pages/sim_concurrency_pool.py": ["Pool limit"],
    "pages/sim_retry_storm.py": ["Synchronised breakers", "Jitter, shared state, ramp"],
}


def drawn_charts(at) -> list[dict]:
    """Charts that hold data; the empty 'press Play' frames are left out."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [spec for spec in specs if spec.get("data")]


def lock_and_play(at, name: str, guess: float):
    form_button = next(b for b in at.button if b.key and b.key.endswith(f"guessform::{name}-Lock in my guess"))
    index = [b.key for b in at.button if b.key and b.key.startswith("FormSubmitter:")].index(form_button.key)
    guesses = [n for n in at.number_input if n.label not in ("Seed", "Seeds to run")]
    guesses[index].set_value(guess)
    form_button.click().run()
    assert not at.exception
    play = at.button(key=f"play::{name}")
    assert not play.disabled
    play.click().run()
    assert not at.exception
    return at


@pytest.mark.parametrize("script, tabs", PAGES.items())
def test_page_loads_alone_with_its_tabs(app_test, script, tabs):
    at = app_test(script).run()
    assert not at.exception
    assert [t.label for t in at.tabs] == tabs
    # Play stays disabled until a guess is locked
    assert all(b.disabled for b in at.button if b.key and b.key.startswith("play::"))
    # nothing that answers the question is drawn before Play: only empty frames, one per tab
    assert not drawn_charts(at) and len(at.get("plotly_chart")) == len(tabs)


def test_celebrity_guess_then_play_then_add_shards(app_test):
    at = lock_and_play(app_test("pages/sim_hot_shard.py").run(), "hot_shard.celebrity", 150.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Your guess"].startswith("150")
    assert metrics["Simulation"].startswith("152")
    assert len(drawn_charts(at)) == 1
    at.toggle(key="hs_celeb_grow").set_value(True).run()
    assert len(drawn_charts(at)) == 2
    assert any("130%" in m.value and "96%" in m.value for m in at.markdown)


def test_moving_a_slider_changes_the_result(app_test):
    at = app_test("pages/sim_hot_shard.py").run()
    at.slider(key="hs_celeb_shards").set_value(6).run()
    at = lock_and_play(at, "hot_shard.celebrity", 120.0)
    assert {m.label: m.value for m in at.metric}["Simulation"] == "130 %"   # as rounded as the page's text


def test_moving_a_slider_after_play_asks_for_a_fresh_guess(app_test):
    at = lock_and_play(app_test("pages/sim_hot_shard.py").run(), "hot_shard.celebrity", 150.0)
    assert "Off by" in [m.label for m in at.metric]
    at.slider(key="hs_celeb_shards").set_value(6).run()
    assert not at.exception
    # the guess made for 4 shards is not graded against 6: no verdict, no chart, Play locked again
    assert "Off by" not in [m.label for m in at.metric]
    assert not drawn_charts(at)
    assert at.button(key="play::hot_shard.celebrity").disabled
    assert any("settings changed" in i.value for i in at.info)
    at = lock_and_play(at, "hot_shard.celebrity", 130.0)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Simulation"] == "130 %" and metrics["Your guess"] == "130 %"
    assert not any("settings changed" in i.value for i in at.info)


def test_question_stays_visible_beside_the_locked_guess(app_test):
    at = lock_and_play(app_test("pages/sim_concurrency_pool.py").run(), "concurrency_pool.pool_limit", 60.0)
    locked = [i.value for i in at.info if "Your locked guess" in i.value]
    assert locked and "429 refusals the pool of K collects" in locked[0] and "60 refusals" in locked[0]


def test_celebrity_text_follows_the_sliders(app_test):
    at = app_test("pages/sim_hot_shard.py").run()
    at.slider(key="hs_celeb_shards").set_value(8).run()
    assert any("8 shards run at 40% on average" in c.value for c in at.caption)
    at.slider(key="hs_celeb_share").set_value(0.0).run()
    at = lock_and_play(at, "hot_shard.celebrity", 50.0)
    text = " ".join(m.value for m in at.markdown)
    assert "no celebrity key" in text and "0% of the traffic" not in text
    at.slider(key="hs_celeb_shards").set_value(1).run()
    at.slider(key="hs_celeb_share").set_value(0.3).run()
    at = lock_and_play(at, "hot_shard.celebrity", 320.0)
    text = " ".join(m.value for m in at.markdown)
    assert "single shard" in text and "averages" not in text


def test_tenant_wait_is_asked_in_the_presets_unit(app_test):
    from sims import presets

    at = app_test("pages/sim_hot_shard.py").run()
    unit = presets.PRESETS["hot_shard.tenant_groups"].unit
    assert any(n.label.endswith(f"({unit})") and "noisy tenant's neighbours" in n.label for n in at.number_input)
    assert any("attempt's own seed" in c.value for c in at.caption)
    at = lock_and_play(at, "hot_shard.tenants", 300.0)
    assert {m.label: m.value for m in at.metric}["Simulation"].endswith(f" {unit}")


def test_tenant_groups_tab_reports_neighbours(app_test):
    at = lock_and_play(app_test("pages/sim_hot_shard.py").run(), "hot_shard.tenants", 10.0)
    assert any("share a group with the noisy one" in m.value for m in at.markdown)


def test_shuffle_tab_shows_the_exact_chance(app_test):
    at = lock_and_play(app_test("pages/sim_hot_shard.py").run(), "hot_shard.shuffle", 4.0)
    assert any("1/28 = **3.6%**" in m.value for m in at.markdown)


def test_pool_page_reports_fanout_and_pool(app_test):
    at = app_test("pages/sim_concurrency_pool.py").run()
    at.slider(key="cp_pool").set_value(10).run()
    at = lock_and_play(at, "concurrency_pool.pool_limit", 20.0)
    # the brief's pool-of-10 figure (about 19 429s) is what is graded, and it moves with K
    assert {m.label: m.value for m in at.metric}["Simulation"] == "20 refusals"
    assert any("Fan-out: **75 refusals**" in m.value and "Pool of 10: **20 refusals**" in m.value
               for m in at.markdown)
    at.slider(key="cp_pool").set_value(5).run()
    at = lock_and_play(at, "concurrency_pool.pool_limit", 0.0)
    assert {m.label: m.value for m in at.metric}["Simulation"] == "0 refusals"


@pytest.mark.parametrize("name, low, high", [("retry_storm.sync", 360, 420), ("retry_storm.jitter", 1, 50)])
def test_retry_storm_tabs(app_test, name, low, high):
    at = lock_and_play(app_test("pages/sim_retry_storm.py").run(), name, 100.0)
    value = float({m.label: m.value for m in at.metric}["Simulation"].split()[0].replace(",", ""))
    assert low <= value <= high


def test_guess_again_resets_play(app_test):
    at = lock_and_play(app_test("pages/sim_concurrency_pool.py").run(), "concurrency_pool.pool_limit", 60.0)
    at.button(key="reguess::concurrency_pool.pool_limit").click().run()
    assert at.button(key="play::concurrency_pool.pool_limit").disabled
    assert not at.metric


@pytest.mark.parametrize("preset_id", ["hot_shard.celebrity_4", "hot_shard.tenant_groups", "hot_shard.shuffle_cut_off",
                                       "concurrency_pool.pool10_rejected", "retry_storm.no_jitter_peak"])
def test_drill_embed_figures_build_for_each_model(preset_id):
    from ui.sims.charts import preset_figure

    figure = preset_figure(preset_id, seed=3)
    assert figure.data and figure.layout.title.text


def test_animation_frames_end_on_the_full_figure():
    from sims import concurrency_pool
    from ui.sims import charts as sim_charts

    result = concurrency_pool.run(concurrency_pool.Params(pool_size=10), 1)
    frames = sim_charts.lanes_frames(result)
    assert len(frames) == sim_charts.FRAMES
    assert frames[-1].to_dict() == sim_charts.lanes_figure(result).to_dict()
    # early frames hold fewer bars than the last, and their title counts the 429s so far
    assert sum(len(t.x) for t in frames[0].data) < sum(len(t.x) for t in frames[-1].data)
    assert "fan-out: 75 × 429" in frames[-1].layout.title.text


def test_reference_lines_are_named_in_the_legend_in_every_frame():
    from sims import hot_shard
    from ui.sims import charts as sim_charts

    frames = sim_charts.shard_load_frames(hot_shard.run(hot_shard.celebrity(shards=6), 1))
    for fig in (frames[0], frames[-1]):
        names = [t.name for t in fig.data]
        assert any(n and n.startswith("fleet average") for n in names)
        assert not fig.layout.annotations or all("fleet average" not in (a.text or "") for a in fig.layout.annotations)


def test_sensible_precision_and_plurals():
    from ui.sims.guess import fmt_figure, plural

    assert [fmt_figure(v) for v in (129.6, 62.5, 3.571, 75.0, 0.0512, 0)] == ["130", "62.5", "3.6", "75", "0.051", "0"]
    assert plural(1, "call") == "1 call" and plural(5, "call") == "5 calls"
    assert plural(2, "process", "processes") == "2 processes"


def test_celebrity_question_grades_the_busiest_shard_not_shard_one(app_test):
    # no celebrity on 5 shards: the celebrity's own shard is at 64%, the busiest at 112%
    at = app_test("pages/sim_hot_shard.py").run()
    at.slider(key="hs_celeb_shards").set_value(5).run()
    at.slider(key="hs_celeb_share").set_value(0.0).run()
    at = lock_and_play(at, "hot_shard.celebrity", 100.0)
    assert {m.label: m.value for m in at.metric}["Simulation"] == "112 %"
    assert any("shard 5, sits at **112%**" in m.value for m in at.markdown)


# -- a drill question's "Explore" link opens the sim on the question's own settings ------------------
def _opened_by_link(app_test, preset_id: str, values=None):
    from sims import presets
    from ui.sims.embed import MODEL_PAGES, explore_query

    page = MODEL_PAGES[presets.PRESETS[preset_id].model][0]
    at = app_test(page)
    at.query_params.update(explore_query(preset_id, values))
    at.run()
    assert not at.exception
    return at


def test_the_uneven_replay_link_opens_the_partition_sim_on_3_of_4_even_buckets(app_test):
    # the review: Hot Tenant Break 3's link opened the sim with 1 bucket
    at = _opened_by_link(app_test, "partitions.replay_drain_uneven")
    value = {s.label: s.value for s in at.slider}
    assert value["Buckets (1 = no spreading)"] == 3 and value["Partitions"] == 4
    assert value["Tenant rate (units/s)"] == 250 and value["Partition capacity (units/s)"] == 100
    assert value["Pending units to replay"] == 9000 and at.radio[-1].value == "even"
    assert any("lands on 3 of the 4 partitions" in c.value for c in at.caption)


def test_a_retake_link_carries_the_retakes_own_numbers(app_test):
    """A variant draws the tenant's rate from 225, 250, 275: the slider takes each one."""
    from drills.lint import variant_values
    from drills.loader import load_drill
    from pathlib import Path

    drill = load_drill(Path("drills/content/hot_tenant.yaml")).drill
    rates = set()
    for variant in range(1, 9):
        values, _ = variant_values(drill, variant)
        rates.add(values["hot_rate"])
        if values["hot_rate"] != 250:
            at = _opened_by_link(app_test, "partitions.replay_drain", values)
            assert {s.label: s.value for s in at.slider}["Tenant rate (units/s)"] == values["hot_rate"]
            assert {s.label: s.value for s in at.slider}["Buckets (1 = no spreading)"] == 4
            break
    else:
        raise AssertionError(f"no variant moved the rate: {rates}")


def test_the_fanout_questions_link_asks_about_the_fanout_lane(app_test):
    # the review: the pool page asked about the pool lane while the drill asked about the fan-out
    at = _opened_by_link(app_test, "concurrency_pool.fanout_rejected")
    assert at.radio(key="cp_lane").value == "the fan-out (top lanes)"
    assert any("about the top lanes" in c.value for c in at.caption)
    assert any(n.label.startswith("429 refusals the unbounded fan-out") for n in at.number_input)
    at = lock_and_play(at, "concurrency_pool.fanout", 70.0)
    assert {m.label: m.value for m in at.metric}["Simulation"].startswith("75")      # the fan-out's 75 × 429
    pool = _opened_by_link(app_test, "concurrency_pool.pool10_rejected")
    assert pool.radio(key="cp_lane").value == "the pool of K (bottom lanes)"
    assert pool.slider(key="cp_pool").value == 10
    assert any(n.label.startswith("429 refusals the pool of K") for n in pool.number_input)


@pytest.mark.parametrize("preset_id, tab, sliders", [
    ("hot_shard.celebrity_6", "Celebrity key", {"hs_celeb_shards": 6, "hs_celeb_share": 0.3}),
    ("hot_shard.tenant_groups", "Tenant groups", {"hs_ten_groups": 4, "hs_ten_mult": 100}),
    ("retry_storm.jitter_peak", "Jitter, shared state, ramp", {"rs_jitter_procs": 40, "rs_jitter_parked": 9}),
])
def test_sim_links_open_the_questions_tab_and_settings(app_test, preset_id, tab, sliders):
    at = _opened_by_link(app_test, preset_id)
    container = next(n for n in at.main.children.values() if n.type == "tab_container").proto.tab_container
    assert [t.label for t in at.tabs][container.default_tab_index] == tab
    for key, value in sliders.items():
        assert at.slider(key=key).value == pytest.approx(value), key
