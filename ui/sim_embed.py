"""A simulation embedded beside a drill question: where it lives, and the run that graded it.

Before the reveal the candidate sees only what the run is; after it, the run's own chart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import plotly.graph_objects as go
import streamlit as st

from sims import presets
from ui import keys

# The hot-tenant page's tabs, bound to ?tab= (keys.HOT_TENANT_TAB) so a link can open the simulation tab.
HOT_TENANT_TABS = ("Event-store lab", "Partition simulation")

# Which app page lets a candidate explore each model on their own, and the query that opens it there.
MODEL_PAGES = {
    "hot_shard": ("pages/sim_hot_shard.py", "Hot shard", None),
    "concurrency_pool": ("pages/sim_concurrency_pool.py", "Concurrency pool", None),
    "retry_storm": ("pages/sim_retry_storm.py", "Retry storm", None),
    "platform": ("pages/sim_platform.py", "Whole platform", None),
    "partitions": ("pages/hot_tenant.py", "Hot tenant", {keys.HOT_TENANT_TAB: HOT_TENANT_TABS[1]}),
}


@st.cache_data(max_entries=64, show_spinner="Running the simulation…")
def _figure(preset_id: str, seed: int, inputs: tuple[tuple[str, float], ...] = ()) -> go.Figure:
    """The graded run's chart; `inputs` are the drill numbers the preset reads (a variant's own run)."""
    preset = presets.PRESETS[preset_id]
    params = preset.params_for(dict(inputs) if inputs else None)
    if preset.model == "platform":
        from sims import platform
        from ui.platform_charts import backlog_figure

        return backlog_figure(platform.run(params, seed))
    if preset.model == "partitions":
        from sims import partitions
        from ui.hot_tenant_charts import backlog_figure

        return backlog_figure(partitions.run(params, seed))
    from ui.sim_charts import preset_figure

    return preset_figure(preset_id, seed, params)


def page_models(url_path: str) -> list[str]:
    """The models whose figures the app page at `url_path` (its file name, e.g. 'sim_hot_shard') shows."""
    return [model for model, (page, _, _) in MODEL_PAGES.items() if Path(page).stem == url_path]


def render_sim_embed(preset_id: str, seed: int, *, revealed: bool, locked: bool,
                     values: Mapping[str, float] | None = None) -> None:
    """`values`: the attempt's drill numbers, for a preset whose run is built from them."""
    preset = presets.PRESETS[preset_id]
    page, name, query = MODEL_PAGES[preset.model]
    if not revealed:
        if locked:
            st.caption(f"🎲 Graded against the **{name}** simulation ({preset.label.lower()}); its run opens "
                       "here with the worked answer.")
        else:
            st.caption(f"🎲 Graded against the **{name}** simulation ({preset.label.lower()}). Lock in your own "
                       "estimate first: opening the simulation while this question is open is recorded on "
                       "your attempt's timeline, and your instructor sees it.")
        st.page_link(page, label=f"Explore the {name} simulation", icon="🎲", query_params=query)
        return
    with st.expander(f"🎲 The {name} run this answer was graded against"):
        inputs = presets.inputs_of([preset_id], values) if values is not None else ()
        st.plotly_chart(_figure(preset_id, seed, inputs), width="stretch", key=keys.sim_embed_chart(preset_id))
