"""Hot shard simulation page: a celebrity key, noisy tenants in worker groups, shuffle sharding.

Each tab: set the sliders, lock in a guess, press Play, then read the result against the guess.
"""
from __future__ import annotations

import math

import streamlit as st

from sims import hot_shard
from ui.sim_charts import (Question, cached_run, guess_then_play, shard_load_figure, shard_load_frames,
                           shuffle_groups, tab_controls, tenant_wait_frames, waiting_by_class_frames)
from ui.frame import require_frame

require_frame()

st.title("Hot shard")
st.caption("Hashing spreads keys, not load. Guess first, then watch what one heavy key does to its shard.")

celebrity_tab, tenants_tab, shuffle_tab = st.tabs(["Celebrity key", "Tenant groups", "Shuffle sharding"])

with celebrity_tab:
    shards, share = tab_controls(
        "One key gets a fixed share of 32 requests a second. Each shard handles 10 a second, so with "
        "4 shards the fleet as a whole runs at 80%. Keys are placed by a stable hash.",
        dict(label="Shards", min_value=1, max_value=12, value=4, key="hs_celeb_shards"),
        dict(label="Celebrity key's share of traffic", min_value=0.0, max_value=0.6, value=0.30, step=0.05,
             key="hs_celeb_share"))
    params = hot_shard.celebrity(shards=shards, hot_key_share=share)
    result = guess_then_play(
        "hot_shard.celebrity",
        Question("Load on the celebrity key's shard, as % of one shard's capacity", "%", 1_000.0, 100.0, 5.0),
        "hot_shard", params, shard_load_frames, hot_shard.hot_shard_load_pct)
    if result is not None:
        floor = hot_shard.hot_key_floor_pct(params)
        st.markdown(
            f"The fleet averages **{hot_shard.fleet_utilisation_pct(result):.0f}%**, yet the celebrity's "
            f"shard sits at **{hot_shard.hot_shard_load_pct(result):.0f}%**. An average hides the one "
            f"shard that matters: a key cannot be split across shards, so that shard carries all "
            f"{share:.0%} of the traffic plus whatever ordinary keys hash next to it.")
        if shards + 2 <= hot_shard.MAX_SHARDS and st.toggle(f"Add 2 shards ({shards} → {shards + 2})",
                                                             key="hs_celeb_grow"):
            grown = cached_run("hot_shard", hot_shard.celebrity(shards=shards + 2, hot_key_share=share))
            st.plotly_chart(shard_load_figure(grown), width="stretch", key="hs_celeb_grown_chart")
            st.markdown(
                f"More shards take ordinary keys away from the hot one: "
                f"{hot_shard.hot_shard_load_pct(result):.0f}% → **{hot_shard.hot_shard_load_pct(grown):.0f}%**. "
                f"The dotted line is the celebrity on its own, **{floor:.0f}%**; no number of shards "
                f"gets under it. Caching the hot key, or splitting it, is what moves that line.")

with tenants_tab:
    groups, multiplier = tab_controls(
        "2,000 tenants are hashed to worker groups that share 200 slots of 32-second jobs. One tenant "
        "normally sends 0.05 jobs a second; turn it up and watch its group.",
        dict(label="Worker groups", min_value=2, max_value=8, value=4, key="hs_ten_groups"),
        dict(label="Noisy tenant's load (× normal)", min_value=1, max_value=200, value=100, key="hs_ten_mult"))
    params = hot_shard.tenant_groups(groups=groups, multiplier=float(multiplier))
    result = guess_then_play(
        "hot_shard.tenants",
        Question("Mean wait of the noisy tenant's neighbours", "min", 240.0, 5.0, 0.5, tolerance_rel=0.25),
        "hot_shard", params, tenant_wait_frames,
        lambda r: hot_shard.mean_wait_s(r, hot_shard.neighbours(r)) / 60)
    if result is not None:
        near = hot_shard.neighbours(result)
        rest = frozenset(range(1, len(result.placement))) - near
        st.markdown(
            f"**{len(near):,}** tenants share a group with the noisy one. Over these ten minutes their "
            f"jobs waited **{hot_shard.mean_wait_s(result, near) / 60:.1f} min** on average; everyone "
            f"else waited **{hot_shard.mean_wait_s(result, rest):.1f} s**. Hashing capped the damage at "
            f"one group out of {groups}, but inside that group nothing protects anyone. A per-tenant "
            f"cap on running jobs is what keeps the neighbours' wait flat.")

with shuffle_tab:
    groups, per_tenant = tab_controls(
        "Now one tenant's jobs crash whatever worker picks them up. Each tenant is given a few of the "
        "groups, and a job runs on whichever of its groups is healthy.",
        dict(label="Worker groups", min_value=4, max_value=16, value=8, key="hs_shuf_groups"),
        dict(label="Groups per tenant", min_value=1, max_value=3, value=2, key="hs_shuf_per"))
    params = hot_shard.shuffle_sharding(groups=groups, per_tenant=per_tenant)
    result = guess_then_play(
        "hot_shard.shuffle",
        Question("Share of other tenants left with no working group", "%", 100.0, 10.0, 0.5,
                 tolerance_rel=0.3),
        "hot_shard", params, waiting_by_class_frames,
        lambda r: 100.0 * len(hot_shard.cut_off(r)) / r.params.ordinary_keys)
    if result is not None:
        pairs = math.comb(groups, per_tenant)
        classes = ", ".join(shuffle_groups(result))
        st.markdown(
            f"There are C({groups}, {per_tenant}) = **{pairs}** ways to pick {per_tenant} of {groups} "
            f"groups, so another tenant draws exactly the same set with chance 1/{pairs} = "
            f"**{hot_shard.exact_share_all_pct(params):.1f}%**. In this run: {classes}. Tenants that lost "
            f"only some of their groups keep running on the rest; only the exact matches are stuck.")
