"""The link that replays a graded run on its sim page: the drill's own sim link (ui.sims.embed.explore_query)
plus the question's graded seed, the locked guess and that run pinned as A, all read from the URL by the page.

A candidate's locked question links to it (ui.drill.lockin), and an instructor's replay (ui.instructor.replay).
"""
from __future__ import annotations

from collections.abc import Mapping

from sims import presets
from ui import keys
from ui.sims.embed import FANOUT_LANE, explore_query
from ui.sims.guess import guess_param
from ui.sims.pins import Pin, pin_param, pin_text

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


def replay_query(preset_id: str, values: Mapping[str, float] | None, guess: float | None, *,
                 seed: int) -> dict[str, str]:
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
