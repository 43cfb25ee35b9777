"""Simulation page: the whole drill-13 platform, with Breaks 1 and 2 to replay and every fix switchable.

Pick a scenario, flip mitigations, lock a guess, press Play; the charts and the verdict come from the run.
Thin page: the scenario's question, the switches and what a run shows are ui.sims.platform_page.
"""
from __future__ import annotations

import streamlit as st

from sims.platform import SCENARIO_TITLES, SCENARIOS, Params
from ui import keys
from ui.frame import require_frame
from ui.sims.guess import play_button
from ui.live.room import follow_the_room
from ui.sims.platform_page import BIND, show_run, sim_tab, switches, written_numbers
from ui.sims.compare import compare_panel
from ui.sims.embed import platform_query
from ui.sims.pins import with_pin
from ui.sims.runs import cached_run, download_panel
from ui.sims.share import locked_guess, share_panel, with_guess
from ui.sims.spread import spread_panel

require_frame()


def main() -> None:
    st.title("Whole platform, replayed")
    st.markdown(
        "Two thousand tenants share 200 worker slots and three LLM providers. Replay the hot-tenant "
        "break or the primary-provider outage, switch the final design's fixes on or off, and see "
        "what happens to the queue, the waits and the bill. Lock in a guess before you press Play."
    )
    follow_the_room()   # a live room's injected break switches this page by itself
    names = list(SCENARIOS)
    scenario = st.selectbox("Scenario", names, format_func=lambda n: SCENARIO_TITLES[n],
                            key=keys.PLATFORM_SCENARIO, bind=BIND)
    base = Params.for_scenario(scenario)
    written = written_numbers(base)
    if written:
        st.caption(written)
    chosen = switches(scenario, base)
    # Only what differs from the scenario goes in the link (as the bound widgets do in the URL);
    # a bound selectbox or radio keeps the label it shows there, not the option behind it.
    defaults = {**{name: getattr(base, name) for name in chosen if name != "seed"}, "seed": 1}
    query = platform_query(scenario, {name: value for name, value in chosen.items() if value != defaults[name]})
    seed = int(chosen.pop("seed"))
    try:
        params = Params.for_scenario(scenario, **chosen)
    except ValueError as exc:
        st.error(f"Those settings don't make a valid run: {exc}")
        return

    tab = sim_tab(scenario)
    st.header("Your guess")
    guess, scope = locked_guess(tab, params, seed)
    query = with_pin(with_guess(query, tab.name, guess, scope), tab)
    if not play_button(tab.name, guess):
        share_panel("platform", params, seed, query)
        return
    with st.spinner("Simulating…"):
        result = cached_run("platform", params, seed)      # the same cache the spread and A/B use
    truth = show_run(scenario, params, result, guess)
    share_panel("platform", params, seed, query)
    spread_panel(tab, params, seed, guess, truth)
    compare_panel(tab, params, seed, result, guess)
    download_panel(tab, params, seed)


main()
