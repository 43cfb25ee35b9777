"""Replay from an attempt's timeline: each simulation question opens its page on the run that graded it
(the attempt's numbers, the graded seed) with the candidate's locked guess, pinned as A, so changing one
setting draws that other choice as B over it.

The page's query is the drill's own sim link (ui.sims.embed.explore_query) plus the seed, the guess and the pin
the sim pages already read from the URL (ui.sims.controls).
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from drills.disclosure import SIMULATION_SEED
from drills.schema import NumericQuestion
from sims import presets
from ui import keys
from ui.sims.guess import fmt_guess, guess_param
from ui.instructor.figures import short_prompt
from ui.sims.pins import Pin, pin_param, pin_text
from ui.sims.embed import FANOUT_LANE, MODEL_PAGES, explore_query

# The simulation tab (its name, which scopes the guess and the pin, and its URL prefix) each page section is.
_TABS = {"hs_celeb": "hot_shard.celebrity", "hs_ten": "hot_shard.tenants", "hs_shuf": "hot_shard.shuffle",
         "rs_sync": "retry_storm.sync", "rs_jitter": "retry_storm.jitter"}


def replay_tab(preset_id: str, query: Mapping[str, str]) -> tuple[str, str] | None:
    """(tab name, the seed's query key) of the page section `query` opens, or None for a page with no pin
    (the hot-tenant page's partition simulation keeps its seed and guess in the session only)."""
    preset = presets.PRESETS[preset_id]
    if preset.model == "concurrency_pool":
        lane = query.get(keys.sim_setting("cp", "lane"))
        return ("concurrency_pool.fanout" if lane == FANOUT_LANE else "concurrency_pool.pool_limit",
                keys.sim_setting("cp", "seed"))
    if preset.model == "platform":
        scenario = preset.params_for(None).scenario
        return f"platform::{scenario}", keys.platform_key(scenario, "seed")
    prefixes = {k.rsplit("_", 1)[0] for k in query if k.rsplit("_", 1)[0] in _TABS}
    if len(prefixes) != 1:
        return None
    prefix = prefixes.pop()
    return _TABS[prefix], keys.sim_setting(prefix, "seed")


def replay_query(preset_id: str, values: Mapping[str, float] | None, guess: float | None,
                 seed: int = SIMULATION_SEED) -> dict[str, str]:
    """The sim page's query for the graded run of `preset_id` on the attempt's `values`: its settings, `seed`,
    the locked `guess` (left for the page to scope to the settings it shows) and that run pinned as A."""
    query = explore_query(preset_id, values)
    tab = replay_tab(preset_id, query)
    if tab is None:   # the page keeps its seed and guess to itself: the settings are what travels
        return query
    name, seed_key = tab
    query[seed_key] = str(int(seed))
    if guess is not None:
        query[guess_param(name)] = format(guess, ".12g")
    params = presets.PRESETS[preset_id].params_for(values)
    query[pin_param(name)] = pin_text(Pin(params, int(seed), guess))
    return query


def replay_url(page: str, query: Mapping[str, str]) -> str:
    """The sim page's address (its url path, the file's stem, beside the board's) with the replay's query."""
    return f"{Path(page).stem}?{urlencode(query)}"


def replay_rows(view) -> list[tuple[str, str, float | None, str]]:
    """(question id, short prompt, locked guess, preset) for each simulation question of the attempt."""
    out = []
    for q in view.loaded.drill.all_questions():
        if isinstance(q, NumericQuestion) and q.sim:
            answer = view.answers.get(q.id)
            guess = None if answer is None or answer.skipped else answer.value
            out.append((q.id, short_prompt(view.text(q.prompt)), guess, q.sim))
    return out


def render_replay(view) -> None:
    """Under the timeline: a link per simulation question to its graded run, guess and pin."""
    rows = replay_rows(view)
    if not rows:
        return
    st.markdown("##### Replay the simulations")
    st.caption("Each link opens the simulation on the exact run this question was graded against (this "
               f"attempt's numbers, seed {SIMULATION_SEED}) with the candidate's locked guess, pinned as A. Change "
               "one setting there and press Play to draw B over it. Each opens in a new tab.")
    values = view.loaded.values    # the attempt's own variant's numbers, which the presets read
    for _qid, prompt, guess, preset_id in rows:
        page, name, _ = MODEL_PAGES[presets.PRESETS[preset_id].model]
        # A link to the page's own address, opened in a new tab so the board stays where it was (and drawn
        # the same wherever the board runs, inside the app's navigation or not).
        st.link_button(f"{prompt} — {name}, their guess {'none' if guess is None else fmt_guess(guess)}",
                       replay_url(page, replay_query(preset_id, values, guess)), icon=":material/casino:")
