"""A simulation embedded beside a drill question: where it lives, and the run that graded it.

Before the reveal the candidate sees only what the run is; after it, the run's own chart.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

import plotly.graph_objects as go
import streamlit as st

from sims import hot_shard, presets
from sims.platform import MITIGATIONS, SCENARIO_TITLES, Params
from ui import keys

K = keys.register("embed", __name__)   # this module's keys (ui.keys holds only shared ones)


def embed_chart(preset_id: str) -> str:
    """The run a drill answer was graded against, embedded under its worked answer."""
    return f"embed::{preset_id}"


# The hot-tenant page's tabs, bound to ?tab= (keys.TAB) so a link can open the simulation tab.
HOT_TENANT_TABS = ("Event-store lab", "Partition simulation")

# The concurrency-pool page's "Guess about" choices, bound to ?cp_lane= so a drill's link asks about its lane.
POOL_LANE, FANOUT_LANE = "the pool of K (bottom lanes)", "the fan-out (top lanes)"
# The tabs of the hot-shard and retry-storm pages, bound to ?tab= (keys.TAB).
HOT_SHARD_TABS = ("Celebrity key", "Tenant groups", "Shuffle sharding")
RETRY_STORM_TABS = ("Synchronised breakers", "Jitter, shared state, ramp")
# The cache-stampede page's tabs (?tab=) and its hot-key tab's "On a miss" choices (?cs_hot_policy=).
STAMPEDE_TABS = ("One hot key", "Many keys")
LEASE_TABS = ("Stop-the-world pause", "Clock set back")   # the leases page's tabs (?tab=)
CHAIN_TABS = ("Partner fails fast", "Partner hangs")   # the retry-chain page's tabs (?tab=)
STAMPEDE_POLICIES = {"every request queries": "none", "one query per key": "coalesce",
                     "serve stale, refresh once": "stale"}

# Which app page lets a candidate explore each model on their own, and the query that opens it there.
MODEL_PAGES = {
    "hot_shard": ("pages/sim_hot_shard.py", "Hot shard", None),
    "concurrency_pool": ("pages/sim_concurrency_pool.py", "Concurrency pool", None),
    "retry_storm": ("pages/sim_retry_storm.py", "Retry storm", None),
    "platform": ("pages/sim_platform.py", "Whole platform", None),
    "partitions": ("pages/hot_tenant.py", "Hot tenant", {keys.TAB: HOT_TENANT_TABS[1]}),
    "cache_stampede": ("pages/sim_cache_stampede.py", "Cache stampede", None),
    "retry_chain": ("pages/sim_retry_chain.py", "Retry chain", None),
    "leases": ("pages/sim_leases.py", "Leases and split brain", None),
}


@st.cache_data(max_entries=64, show_spinner="Running the simulation…")
def _figure(preset_id: str, seed: int, inputs: tuple[tuple[str, float], ...] = ()) -> go.Figure:
    """The graded run's chart; `inputs` are the drill numbers the preset reads (a variant's own run)."""
    preset = presets.PRESETS[preset_id]
    params = preset.params_for(dict(inputs) if inputs else None)
    if preset.model == "platform":
        from sims import platform
        from ui.sims.platform_charts import backlog_figure

        return backlog_figure(platform.run(params, seed))
    if preset.model == "partitions":
        from sims import partitions
        from ui.labs.hot_tenant_charts import backlog_figure

        return backlog_figure(partitions.run(params, seed))
    if preset.model == "cache_stampede":
        from sims import cache_stampede
        from ui.sims.stampede_charts import db_queue_figure

        return db_queue_figure(cache_stampede.run(params, seed))
    if preset.model == "retry_chain":
        from sims import retry_chain
        from ui.sims.chain_charts import partner_calls_figure

        return partner_calls_figure(retry_chain.run(params, seed))
    if preset.model == "leases":
        from sims import leases
        from ui.sims.lease_charts import writes_figure

        return writes_figure(leases.run(params, seed))
    from ui.sims.charts import preset_figure

    return preset_figure(preset_id, seed, params)


def _models_by_page() -> dict[str, list[str]]:
    by_page: dict[str, list[str]] = {}
    for model, (page, _, _) in MODEL_PAGES.items():
        by_page.setdefault(Path(page).stem, []).append(model)
    return by_page


_MODELS_BY_PAGE = _models_by_page()   # worked out once: the frame asks twice on every run of every page


def page_models(url_path: str) -> list[str]:
    """The models whose figures the app page at `url_path` (its file name, e.g. 'sim_hot_shard') shows."""
    return list(_MODELS_BY_PAGE.get(url_path, ()))   # a copy: callers may keep or change it


# Here rather than in ui.sims.controls, which the sim pages use, so the app's start-up (which imports this
# module for the sidebar) does not load the sim pages' machinery with it.
def url_text(value: object) -> str:
    """A setting's value as its bound widget writes it in the URL."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return format(value, ".12g") if isinstance(value, float) else str(value)


def claim_label(rule: str) -> str:
    """A claim rule as the platform page's radio shows it, and so as its bound value reads in the URL."""
    return rule.replace("_", " ")


def platform_query(scenario: str, moved: Mapping[str, object]) -> dict[str, str]:
    """The platform page's query: the scenario, and the controls in ``moved`` (those set off its values)."""
    return {keys.PLATFORM_SCENARIO: SCENARIO_TITLES[scenario],
            **{keys.platform_key(scenario, name): url_text(claim_label(value) if name == "claim" else value)
               for name, value in moved.items()}}


def _settings(prefix: str, **values: object) -> dict[str, str]:
    return {keys.sim_setting(prefix, name): url_text(value) for name, value in values.items()}


def _hot_shard_query(p) -> dict[str, str]:
    if p.bad_key_breaks_groups:
        return {keys.TAB: HOT_SHARD_TABS[2], **_settings("hs_shuf", groups=p.shards, per=p.groups_per_key)}
    if p.service_s == hot_shard.JOB_S:        # tenants in worker groups: the page's slider is the noisy load
        multiplier = round(p.hot_key_share * p.arrival_rps / hot_shard.NOISY_NORMAL_JOBS_PER_S)
        return {keys.TAB: HOT_SHARD_TABS[1], **_settings("hs_ten", groups=p.shards, mult=multiplier)}
    return {keys.TAB: HOT_SHARD_TABS[0], **_settings("hs_celeb", shards=p.shards, share=p.hot_key_share)}


def _platform_query(p) -> dict[str, str]:
    base = Params.for_scenario(p.scenario)
    shown = ("claim", "acme_multiplier", "acme_cap", "outage_min", "window_min", "mitigations_from_min",
             *MITIGATIONS)        # the page's controls
    return platform_query(p.scenario, {name: getattr(p, name) for name in shown
                                       if getattr(p, name) != getattr(base, name)})


def explore_query(preset_id: str, values: Mapping[str, float] | None = None) -> dict[str, str]:
    """The query that opens the preset's page with the preset's own settings (the attempt's numbers when
    the run is built from them), on the tab and, on the pool page, the lane the question asks about.

    Only what the page has a control for travels; the page's seed stays its own (the question's graded seed
    is the attempt's secret until it is locked in; ui.sims.replay then adds that seed, the guess and a pin).
    """
    preset = presets.PRESETS[preset_id]
    p = preset.params_for(values)
    query = dict(MODEL_PAGES[preset.model][2] or {})
    if preset.model == "hot_shard":
        query.update(_hot_shard_query(p))
    elif preset.model == "concurrency_pool":
        lane = FANOUT_LANE if preset.metric.startswith("fanout.") else POOL_LANE
        query.update(_settings("cp", pool=p.pool_size, limit=p.provider_limit, calls=p.calls,
                               retry=p.retry_after_s, lane=lane))
    elif preset.model == "retry_storm":
        slug = "jitter" if p.jitter else "sync"
        query.update({keys.TAB: RETRY_STORM_TABS[p.jitter],
                      **_settings(f"rs_{slug}", procs=p.processes, parked=p.in_flight_per_process)})
    elif preset.model == "platform":
        query.update(_platform_query(p))
    elif preset.model == "partitions":
        query.update(_settings(keys.HOT_TENANT_SIM_PREFIX, buckets=p.buckets, rate=p.hot_rate,
                               capacity=p.partition_capacity, partitions=p.partitions, pending=p.pending,
                               placement=p.placement))
    elif preset.model == "cache_stampede":
        query.update(_stampede_query(p))
    elif preset.model == "retry_chain":
        if p.fault == "errors":
            query.update({keys.TAB: CHAIN_TABS[0], **_settings("rc_fast", depth=p.depth, retries=p.retries,
                                                               budget=round(100 * p.budget_ratio) if p.budget else 0)})
        else:
            query.update({keys.TAB: CHAIN_TABS[1], **_settings("rc_hang", depth=p.depth, retries=p.retries,
                                                               timeout=p.timeout_s, deadline=p.deadline_s,
                                                               propagate=p.propagate)})
    elif preset.model == "leases":
        if p.fault == "pause":
            query.update({keys.TAB: LEASE_TABS[0], **_settings("ls_pause", lease=round(p.lease_s),
                                                               pause=round(p.fault_s))})
        else:
            query.update({keys.TAB: LEASE_TABS[1], **_settings("ls_step", lease=round(p.lease_s),
                                                               step=p.clock_step_s,
                                                               rate=round(1 / p.write_every_s))})
    return query


def _stampede_query(p) -> dict[str, str]:
    if p.keys > 1:
        return {keys.TAB: STAMPEDE_TABS[1], **_settings("cs_many", keys=p.keys, jitter=round(p.jitter_s),
                                                        slots=p.db_slots)}
    policy = next(label for label, name in STAMPEDE_POLICIES.items() if name == p.policy)
    return {keys.TAB: STAMPEDE_TABS[0], **_settings("cs_hot", rate=round(p.request_rate_per_s),
                                                    query=p.recompute_s, slots=p.db_slots, policy=policy)}


GRADED_RUN_OPEN = ("Graded against a run of the **{name}** simulation ({label}) of its own: its seed shows once "
                   "you lock in, and no sim page runs that seed for you while this question is open. Lock in your "
                   "own estimate first: opening the simulation while this question is open is recorded on your "
                   "attempt's timeline, and your instructor sees it.")
GRADED_RUN_LOCKED = "Graded against the **{name}** simulation ({label}), seed **{seed}**."


def render_sim_embed(preset_id: str, seed: int, *, revealed: bool, locked: bool,
                     values: Mapping[str, float] | None = None, replay: Mapping[str, str] | None = None) -> None:
    """`seed`: the question's graded seed, named only once the question is locked (or its truth is out);
    `values`: the attempt's drill numbers, for a preset whose run is built from them; `replay`: the query that
    opens that run on its page (ui.sims.replay), None for a page with no seed in its URL."""
    preset = presets.PRESETS[preset_id]
    page, name, _ = MODEL_PAGES[preset.model]
    label = preset.label.lower()
    if not (locked or revealed):   # open: the seed stays the attempt's secret
        st.caption(":material/casino: " + GRADED_RUN_OPEN.format(name=name, label=label))
        st.page_link(page, label=f"Explore the {name} simulation", icon=":material/casino:",
                     query_params=explore_query(preset_id, values))
        return
    st.caption(":material/casino: " + GRADED_RUN_LOCKED.format(name=name, label=label, seed=seed)
               + ("" if revealed else " Its run opens here with the worked answer."))
    if replay is not None:
        st.page_link(page, label=f"Replay seed {seed} on the {name} page", icon=":material/replay:",
                     query_params=dict(replay))
    else:   # a page that keeps its seed to itself: the run's settings travel
        st.page_link(page, label=f"Explore the {name} simulation", icon=":material/casino:",
                     query_params=explore_query(preset_id, values))
    if revealed:
        with st.expander(f"The {name} run this answer was graded against", icon=":material/casino:"):
            inputs = presets.inputs_of([preset_id], values) if values is not None else ()
            st.plotly_chart(_figure(preset_id, seed, inputs), width="stretch", key=embed_chart(preset_id))
