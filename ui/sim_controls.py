"""What every simulation tab does after its sliders: lock a guess, Play with in-browser playback, then the
tools, each in its own module: share (ui.sim_share), spread over seeds (ui.sim_spread), A/B (ui.sim_compare,
with the pin in ui.sim_pins) and the run's files (ui.sim_runs).

A page describes a tab once (``ui.sim_tab.SimTab``), reads its sliders with ``settings`` and hands the
params to ``play``; everything after that is the same on every page.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.guess import guess_verdict, play_button, waiting_chart
from ui.sim_charts import playback_figure
from ui.sim_compare import compare_panel
from ui.sim_pins import with_pin
from ui.sim_runs import cached_run, download_panel
from ui.sim_share import locked_guess, share_panel, with_guess
from ui.sim_spread import spread_panel
from ui.sim_tab import Settings, SimTab

K = keys.register("sim_controls", __name__)   # this module's keys (ui.keys holds only shared ones)


def chart_key(tab_name: str) -> str:
    """A simulation tab's replayed run."""
    return f"chart::{tab_name}"


def play(tab: SimTab, params: object, chosen: Settings) -> object | None:
    """Lock a guess, press Play, replay the run in the browser, grade it, then the tools.

    The guess is scoped to ``params`` and the seed (``locked_guess``): move a slider and the page asks
    for a new one, also when a run is pinned as A. Returns the result once played (so the page can add its own notes), else None.
    """
    seed, question = chosen.seed, tab.question
    guess, scope = locked_guess(tab, params, seed)
    query = with_pin(with_guess(chosen.query, tab.name, guess, scope), tab)
    if not play_button(tab.name, guess):
        waiting_chart(tab.name)
        share_panel(tab.model, params, seed, query)
        return None
    result = cached_run(tab.model, params, seed)
    st.plotly_chart(playback_figure(tab.frames(result)), width="stretch", key=chart_key(tab.name))
    truth = tab.truth(result)
    guess_verdict(guess, truth, question.unit, tolerance_rel=question.tolerance_rel)
    share_panel(tab.model, params, seed, query)
    spread_panel(tab, params, seed, guess, truth)
    compare_panel(tab, params, seed, result, guess)
    download_panel(tab, params, seed)
    return result
