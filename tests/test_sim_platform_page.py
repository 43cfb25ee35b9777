"""AppTest checks for the platform simulation page: guess before play, charts after, per-scenario switches.

Runs use a 10-minute window so each play stays well under the suite's time budget.
"""
from __future__ import annotations

import dataclasses

from sims import platform, presets
from ui import keys

PAGE = "pages/sim_platform.py"


def _short_window(at, scenario: str) -> None:
    at.slider(key=keys.platform_key(scenario, "window_min")).set_value(10.0)


def _guess(at, value: float) -> None:
    """Type into the guess box (it starts empty; the page's other number box is the seed)."""
    box = next(n for n in at.number_input if n.label != "Seed")
    assert box.value is None
    box.set_value(value)


def _played_captions(at, scenario: str, guess: float) -> str:
    """Lock a guess on a 10-minute run of the scenario, press Play, and return the page's captions."""
    _short_window(at, scenario)
    _guess(at, guess)
    at.button[0].click().run()
    at.button(key=f"play::platform::{scenario}").click().run()
    assert not at.exception
    return " ".join(c.value for c in at.caption)


def test_play_waits_for_a_locked_guess(app_test):
    at = app_test(PAGE).run()
    assert not at.exception
    assert at.title[0].value == "Whole platform, replayed"    # extends the sidebar name
    assert at.button(key="play::platform::baseline").disabled
    assert len(at.toggle) == len(platform.MITIGATIONS)
    assert not at.get("plotly_chart")


def test_guess_then_play_draws_four_charts_and_a_verdict(app_test):
    at = app_test(PAGE).run()
    _short_window(at, "baseline")
    _guess(at, 160.0)
    at.button[0].click().run()                       # lock in
    at.button(key="play::platform::baseline").click().run()
    assert not at.exception
    labels = [m.label for m in at.metric]
    assert {"Your guess", "Simulation", "Jobs in flight", "Backlog growth, jobs/s"} <= set(labels)
    assert len(at.get("plotly_chart")) == 4
    simulated = next(m.value for m in at.metric if m.label == "Simulation")
    assert simulated.endswith("jobs") and 120 < float(simulated.split()[0]) < 200


def test_changing_a_setting_after_play_asks_for_a_fresh_guess(app_test):
    at = app_test(PAGE).run()
    _short_window(at, "baseline")
    _guess(at, 160.0)
    at.button[0].click().run()
    locked = [i.value for i in at.info if "Your locked guess" in i.value]
    assert locked and "Jobs running at once at the weekday peak" in locked[0]
    at.button(key="play::platform::baseline").click().run()
    assert "Off by" in [m.label for m in at.metric]
    at.slider(key=keys.platform_key("baseline", "window_min")).set_value(15.0).run()
    assert not at.exception
    assert not at.metric and not at.get("plotly_chart")
    assert at.button(key="play::platform::baseline").disabled
    assert any("settings changed" in i.value for i in at.info)


def test_fifo_notes_speak_of_no_fixes_and_measure_on_the_charts_axis(app_test):
    at = app_test(PAGE).run()
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break1_fifo").run()
    captions = _played_captions(at, "break1_fifo", 50.0)
    assert "mitigation" not in captions.lower() and "fixes on" not in captions
    assert "no fixes" in captions
    # the break starts at minute 5 of the run; the charts count minutes from it, and so does the caption
    assert "from minute 2 to 5 after the break" in captions


def test_the_baseline_caption_and_the_charts_share_one_axis_from_minute_0(app_test):
    """The review read 'Rates are measured from minute -3 to 55' above charts whose axis started at 0."""
    from tests.test_sim_pages import drawn_charts

    at = app_test(PAGE).run()
    captions = _played_captions(at, "baseline", 160.0)
    assert "from minute 2 to 10 of the run" in captions and "minute -" not in captions
    assert "shaded" in captions and "warm" in captions
    for spec in drawn_charts(at):
        layout = spec["layout"]
        assert layout["xaxis"]["title"]["text"] == "minutes of the run"
        assert layout["xaxis"]["range"][0] == 0
        xs = [x for trace in spec["data"] for x in (trace.get("x") or ())]
        assert xs and min(xs) >= 0 and max(xs) <= 10
        warm_up = [shape for shape in layout["shapes"] if shape.get("type") == "rect"]
        assert [(r["x0"], r["x1"]) for r in warm_up] == [(0, 2)]


def test_each_scenario_starts_from_its_own_switches(app_test):
    at = app_test(PAGE).run()
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break2").run()
    assert not at.exception
    assert at.toggle(key=keys.platform_key("break2", "polish_switch")).value is True
    assert at.toggle(key=keys.platform_key("break2", "short_timeouts")).value is True
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break1_fifo").run()
    assert at.toggle(key=keys.platform_key("break1_fifo", "rate_limit")).value is False
    assert at.radio(key=keys.platform_key("break1_fifo", "claim")).value == "fifo"


def test_flipping_a_switch_changes_the_run(app_test):
    at = app_test(PAGE).run()
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break2_polish_off").run()
    _short_window(at, "break2_polish_off")
    at.toggle(key=keys.platform_key("break2_polish_off", "polish_switch")).set_value(True)
    _guess(at, 1.0)
    at.button[0].click().run()
    at.button(key="play::platform::break2_polish_off").click().run()
    assert not at.exception
    degraded = next(m.value for m in at.metric if m.label == "Degraded (no polish)")
    assert int(degraded.replace(",", "")) > 0


def test_platform_presets_name_figures_the_summary_has():
    ours = [p for p in presets.PRESETS.values() if p.model == "platform"]
    assert len(ours) >= 5
    for preset in ours:
        short = dataclasses.replace(preset.params, window_min=preset.params.break_at_min + 2.0)
        assert preset.metric in platform.summary(platform.run(short, 1)), preset.id


def test_a_link_reopens_the_scenario_its_switches_seed_and_guess(app_test):
    from ui.sims.guess import guess_param

    at = app_test("pages/sim_platform.py")
    at.query_params.update({keys.PLATFORM_SCENARIO: platform.SCENARIO_TITLES["break1_fair"],
                            keys.platform_key("break1_fair", "rate_limit"): "false",
                            keys.platform_key("break1_fair", "seed"): "4",
                            guess_param("platform::break1_fair"): "25"})
    at.run()
    assert not at.exception
    assert at.selectbox(key=keys.PLATFORM_SCENARIO).value == "break1_fair"
    assert at.toggle(key=keys.platform_key("break1_fair", "rate_limit")).value is False
    assert at.number_input(key=keys.platform_key("break1_fair", "seed")).value == 4
    assert any("Your locked guess: **25 min**" in i.value for i in at.info)
    command = next(c.value for c in at.code if c.value.startswith("python -m sims platform"))
    assert command == "python -m sims platform scenario=break1_fair rate_limit=false seed=4"
    link = next(c.value for c in at.code if "platform_scenario=" in c.value)
    assert "rate_limit=false" in link and "idempotency" not in link      # only what differs from the scenario


def test_scenario_titles_and_preset_labels_quote_no_number_a_retake_changes():
    """Retakes draw Acme's rate, the storm's length and the outage's: a label next to a retake must not
    quote the written 100x, 13:10 or 40 minutes as if they were the retake's."""
    written = ("100x", "100×", "13:10", "40 min", "40-minute")
    labels = [*platform.SCENARIO_TITLES.values(), *(p.label for p in presets.PRESETS.values())]
    assert not [label for label in labels if any(figure in label for figure in written)]
    assert all("as written" in title for name, title in platform.SCENARIO_TITLES.items() if name != "baseline")
    # labels only: the runs behind them are the drill's written numbers, as before
    assert presets.PRESETS["platform.break1_growth"].params == platform.Params.for_scenario("break1_fifo")
    assert platform.Params.for_scenario("break1_fifo").acme_multiplier == 100.0


def test_a_break_scenario_says_its_numbers_are_the_drills_as_written(app_test):
    at = app_test(PAGE).run()
    assert not any("as written" in c.value for c in at.caption)           # the baseline has no break
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break1_fair").run()
    note = next(c.value for c in at.caption if "as written" in c.value)
    assert "Acme at 100× its usual load from minute 5" in note and "10 minutes later" in note
    assert "retake" in note
    at.selectbox(key=keys.PLATFORM_SCENARIO).set_value("break2").run()
    note = next(c.value for c in at.caption if "as written" in c.value)
    assert "provider A down for 40 minutes" in note
