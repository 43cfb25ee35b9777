"""What every simulation tab does after its sliders: lock a guess, Play with in-browser playback, then the
tools, each in its own module: share (ui.sims.share), spread over seeds (ui.sims.spread), A/B (ui.sims.compare,
with the pin in ui.sims.pins) and the run's files (ui.sims.runs).

A page describes a tab once (``ui.sims.tab.SimTab``), reads its sliders with ``settings`` and hands the
params to ``play``; everything after that is the same on every page.
"""
from __future__ import annotations

import streamlit as st

from ui import keys
from ui.sims.guess import guess_verdict, play_button, waiting_chart
from ui.sims.charts import playback_figure
from ui.sims.compare import compare_panel
from ui.sims.pins import with_pin
from ui.sims.runs import cached_run, download_panel
from ui.sims.share import locked_guess, share_panel, with_guess
from ui.sims.spread import spread_panel
from ui.sims.tab import Settings, SimTab

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
