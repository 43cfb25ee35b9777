"""The hot shard page's three tabs: a celebrity key, a noisy tenant in its worker group, shuffle sharding.

Each tab: set the sliders, lock in a guess, press Play, then read the result against the guess.
"""
from __future__ import annotations

import math

import streamlit as st

from sims import hot_shard
from ui import keys
from ui.sims.guess import fmt_figure, plural
from ui.sims.charts import (neighbour_wait_series, shard_load_figure, shard_load_frames, shard_load_series,
                           shuffle_groups, tenant_wait_frames, waiting_by_class_frames, waiting_total_series)
from ui.sims.controls import play
from ui.sims.embed import HOT_SHARD_TABS
from ui.sims.runs import cached_run
from ui.sims.tab import Question, SimTab, settings

K = keys.register("hot_shard", __name__)   # this module's keys (ui.keys holds only shared ones)
GROWN_CHART = K.kept("hs_celeb_grown_chart")  # hot-shard celebrity tab: the load after adding shards


def celebrity_note(result: hot_shard.Result) -> str:
    """What the celebrity run shows, worded for the edge cases: no celebrity, one shard, a busier neighbour."""
    p = result.params
    fleet = hot_shard.fleet_utilisation_pct(result)
    busiest, top = hot_shard.busiest_shard(result), hot_shard.busiest_shard_load_pct(result)
    if p.hot_key_share == 0:
        return (f"With no celebrity key the traffic is only ordinary keys: the fleet averages **{fleet:.0f}%** "
                f"and the busiest shard, shard {busiest + 1}, sits at **{top:.0f}%**, as far apart as the hash "
                f"happens to spread them. Raise the share to see one key outgrow its shard.")
    if p.shards == 1:
        return (f"With a single shard every key, the celebrity's {p.hot_key_share:.0%} included, lands on it: it "
                f"runs at **{top:.0f}%** of its capacity. Add shards to see the average and the hot shard part ways.")
    hot, own = hot_shard.hot_shard(result), hot_shard.hot_shard_load_pct(result)
    if busiest != hot:
        return (f"The fleet averages **{fleet:.0f}%**. The celebrity's shard {hot + 1} sits at **{own:.0f}%**, "
                f"but the busiest is shard {busiest + 1} at **{top:.0f}%**: at {p.hot_key_share:.0%} the "
                f"celebrity is small enough that a pile of ordinary keys hashed together outweighs it.")
    return (f"The fleet averages **{fleet:.0f}%**, yet the celebrity's shard sits at **{top:.0f}%**. An average "
            f"hides the one shard that matters: a key cannot be split across shards, so that shard carries "
            f"the celebrity's whole {p.hot_key_share:.0%} of the traffic plus whatever ordinary keys hash next to it.")


TABS = HOT_SHARD_TABS                  # bound to ?tab=, so a drill question's link opens its tab
CELEBRITY = SimTab("hot_shard.celebrity", "hs_celeb", "hot_shard",
                   Question("Load on the busiest shard, as % of one shard's capacity", "%", 1_000.0, 5.0),
                   hot_shard.busiest_shard_load_pct, shard_load_frames, shard_load_series)
TENANTS = SimTab("hot_shard.tenants", "hs_ten", "hot_shard",
                 Question("Mean wait of the noisy tenant's neighbours", "s", 14_400.0, 10.0, tolerance_rel=0.25),
                 lambda r: hot_shard.mean_wait_s(r, hot_shard.neighbours(r)), tenant_wait_frames,
                 neighbour_wait_series)
SHUFFLE = SimTab("hot_shard.shuffle", "hs_shuf", "hot_shard",
                 Question("Share of other tenants left with no working group", "%", 100.0, 0.5, tolerance_rel=0.3),
                 lambda r: 100.0 * len(hot_shard.cut_off(r)) / r.params.ordinary_keys, waiting_by_class_frames,
                 waiting_total_series)


def celebrity_tab() -> None:
    chosen = settings(
        CELEBRITY,
        "One key gets a fixed share of the traffic and keys are placed by a stable hash. Pick the "
        "shard count and the celebrity's share:",
        dict(label="Shards", min_value=1, max_value=12, value=4, key=keys.sim_setting(CELEBRITY.prefix, "shards")),
        dict(label="Celebrity key's share of traffic", min_value=0.0, max_value=0.6, value=0.30, step=0.05,
             key=keys.sim_setting(CELEBRITY.prefix, "share")), page_tab=(keys.TAB, TABS[0]))
    shards, share = chosen.values
    params = hot_shard.celebrity(shards=shards, hot_key_share=share)
    fleet_pct = 100.0 * params.arrival_rps / (shards * params.shard_capacity_rps)
    st.caption(f"{params.arrival_rps:g} requests a second in all, {share:.0%} of them for the celebrity key; "
               f"each shard handles {params.shard_capacity_rps:g} a second, so {plural(shards, 'shard')} "
               f"run at {fleet_pct:.0f}% on average.")
    result = play(CELEBRITY, params, chosen)
    if result is not None:
        floor = hot_shard.hot_key_floor_pct(params)
        st.markdown(celebrity_note(result))
        if shards + 2 <= hot_shard.MAX_SHARDS and st.toggle(f"Add 2 shards ({shards} → {shards + 2})",
                                                             key=keys.sim_setting(CELEBRITY.prefix, "grow"),
                                                             bind="query-params"):
            grown = cached_run("hot_shard", hot_shard.celebrity(shards=shards + 2, hot_key_share=share),
                               chosen.seed)
            st.plotly_chart(shard_load_figure(grown), width="stretch", key=GROWN_CHART)
            if floor > 0:
                hot, after = hot_shard.hot_shard_load_pct(result), hot_shard.hot_shard_load_pct(grown)
                st.markdown(
                    f"More shards take ordinary keys away from the celebrity's shard: {hot:.0f}% → **{after:.0f}%**. "
                    f"The dotted line is the celebrity on its own, **{floor:.0f}%**; no number of shards "
                    f"gets under it. Caching the hot key, or splitting it, is what moves that line.")
            else:
                top, after = hot_shard.busiest_shard_load_pct(result), hot_shard.busiest_shard_load_pct(grown)
                st.markdown(f"With no celebrity, more shards simply share the same traffic more thinly: "
                            f"the busiest shard goes {top:.0f}% → **{after:.0f}%**.")


def tenants_tab() -> None:
    chosen = settings(
        TENANTS,
        f"{hot_shard.TENANTS:,} tenants are hashed to worker groups that split {hot_shard.SLOTS} slots "
        f"of {hot_shard.JOB_S:.0f}-second jobs. One tenant normally sends "
        f"{hot_shard.NOISY_NORMAL_JOBS_PER_S:g} jobs a second; turn it up and watch its group.",
        dict(label="Worker groups", min_value=2, max_value=8, value=4,
             key=keys.sim_setting(TENANTS.prefix, "groups")),
        dict(label="Noisy tenant's load (× normal)", min_value=1, max_value=200, value=100,
             key=keys.sim_setting(TENANTS.prefix, "mult")),
        page_tab=(keys.TAB, TABS[1]))
    groups, multiplier = chosen.values
    params = hot_shard.tenant_groups(groups=groups, multiplier=float(multiplier))
    noisy_rate = hot_shard.NOISY_NORMAL_JOBS_PER_S * multiplier
    st.caption(f"{plural(groups, 'group')} of {plural(params.servers_per_shard, 'slot')}; the noisy tenant "
               f"sends {noisy_rate:g} jobs a second for {params.duration_s / 60:g} minutes. A drill asks "
               f"this in seconds and grades it with the attempt's own seed, so its number can differ a "
               f"little from this page's run (seed {chosen.seed}); the spread below shows by how much.")
    result = play(TENANTS, params, chosen)
    if result is not None:
        near = hot_shard.neighbours(result)
        rest = frozenset(range(1, len(result.placement))) - near
        near_s, rest_s = hot_shard.mean_wait_s(result, near), hot_shard.mean_wait_s(result, rest)
        told = (f"**{len(near):,}** tenants share a group with the noisy one. Over these "
                f"{params.duration_s / 60:g} minutes their jobs waited **{fmt_figure(near_s)} s** "
                f"({near_s / 60:.1f} min) on average; everyone else waited **{fmt_figure(rest_s)} s**. ")
        if near_s > 2 * rest_s + params.service_s:
            told += (f"Hashing capped the damage at one group out of {groups}, but inside that group nothing "
                     f"protects anyone. A per-tenant cap on running jobs is what keeps the neighbours' "
                     f"wait flat.")
        else:
            told += ("At this load the noisy tenant's group keeps up, so its neighbours barely notice. "
                     "Turn the load up to see where one group's slots run out.")
        st.markdown(told)


def shuffle_tab() -> None:
    chosen = settings(
        SHUFFLE,
        "Now one tenant's jobs crash whatever worker picks them up. Each tenant is given a few of the "
        "groups, and a job runs on whichever of its groups is healthy.",
        dict(label="Worker groups", min_value=4, max_value=16, value=8,
             key=keys.sim_setting(SHUFFLE.prefix, "groups")),
        dict(label="Groups per tenant", min_value=1, max_value=3, value=2,
             key=keys.sim_setting(SHUFFLE.prefix, "per")),
        page_tab=(keys.TAB, TABS[2]))
    groups, per_tenant = chosen.values
    params = hot_shard.shuffle_sharding(groups=groups, per_tenant=per_tenant)
    result = play(SHUFFLE, params, chosen)
    if result is not None:
        pairs = math.comb(groups, per_tenant)
        classes = ", ".join(shuffle_groups(result))
        chosen = f"{per_tenant} of {groups} groups" if per_tenant > 1 else f"one group of {groups}"
        told = (f"There are C({groups}, {per_tenant}) = **{pairs}** ways to pick {chosen}, so another "
                f"tenant draws exactly the same set with chance 1/{pairs} = "
                f"**{hot_shard.exact_share_all_pct(params):.1f}%**. In this run: {classes}. ")
        if per_tenant > 1:
            told += ("Tenants that lost only some of their groups keep running on the rest; only the exact "
                     "matches are stuck.")
        else:
            told += ("With one group each there is no rest to fall back on: everyone in the bad tenant's "
                     "group is stuck. That is plain sharding; give each tenant two groups to see the shuffle.")
        st.markdown(told)
