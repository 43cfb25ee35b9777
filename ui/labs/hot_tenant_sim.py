"""The hot-tenant simulation tab: partitions with one hot tenant spread over buckets, and a replayed backlog.

The run is sims.partitions; its horizon follows the ideal drain time the model states (replay_drain_floor_s).
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from sims import partitions
from sims.partitions import Params
from ui import keys
from ui.sims import guess
from ui.labs import hot_tenant_charts as charts

K = keys.register("hot_tenant_sim", __name__)   # this module's keys (ui.keys holds only shared ones)
BACKLOG_CHART = K.kept("ht_backlog")     # hot-tenant simulation: the replayed backlog chart

SIM_NAME = "partitions"
# partitions x horizon the page will ask for: the model's own event budget
SIM_PARTITION_SECONDS = partitions.EVENT_BUDGET * partitions.TICK_S


def sim_givens(partition_count: int, capacity: int, hot_rate: int, buckets: int, pending: int,
               placement: str) -> str:
    """The current sliders in a sentence: the givens of the guess, never its answer."""
    fleet = f"{partition_count} partitions serve {capacity:,} units/s each ({partition_count * capacity:,} in all)"
    if hot_rate == 0:
        tenant = "the tenant sends nothing"
    elif buckets == 1:
        tenant = f"the tenant sends {hot_rate:,} units/s in one bucket, so all of it lands on partition A"
    else:
        tenant = (f"the tenant sends {hot_rate:,} units/s spread over {buckets} buckets, placed "
                  + ("bucket b on partition b mod P" if placement == "even" else "by a seeded hash"))
        if placement == "even" and buckets < partition_count:
            tenant += f", so it lands on {buckets} of the {partition_count} partitions"
    replay = f"{pending:,} units wait to be replayed" if pending else "there is no backlog to replay"
    return f"{fleet}; {tenant}; {replay}."


@st.cache_data(max_entries=64, show_spinner=False)
def simulate(partition_count: int, capacity: float, hot_rate: float, buckets: int, pending: float,
             placement: str, seed: int) -> partitions.Result:
    """The run the sliders ask for, long enough to see the replay drain at twice its ideal pace."""
    params = Params(partitions=partition_count, partition_capacity=capacity, hot_rate=hot_rate, buckets=buckets,
                    pending=pending, placement=placement)
    floor = partitions.replay_drain_floor_s(params) or 0.0     # None: the tenant alone outruns the fleet
    horizon = min(partitions.MAX_HORIZON_S, SIM_PARTITION_SECONDS / partition_count, max(120.0, 2 * floor))
    return partitions.run(dataclasses.replace(params, horizon_s=horizon), seed)


def render_sim() -> None:
    st.markdown("Partitions each serve a fixed rate, and one tenant sends more than a single partition can "
                "take. Spread it over buckets, then replay a backlog while fresh work keeps priority.")
    # Bound to the URL, so a drill question's link (ui.sims.embed.explore_query) opens the sim on its numbers.
    def setting(name: str) -> dict:
        return dict(key=keys.sim_setting(keys.HOT_TENANT_SIM_PREFIX, name), bind="query-params")

    cols = st.columns(3)
    buckets = cols[0].slider("Buckets (1 = no spreading)", 1, 16, 1, **setting("buckets"))
    # steps of 5 so every rate a retake of the drill draws (225, 250, 275) can be set
    hot_rate = cols[1].slider("Tenant rate (units/s)", 0, 1_000, 250, step=5, **setting("rate"))
    capacity = cols[2].slider("Partition capacity (units/s)", 25, 400, 100, step=25, **setting("capacity"))
    cols = st.columns(3)
    partition_count = cols[0].slider("Partitions", 2, 8, 4, **setting("partitions"))
    pending = cols[1].slider("Pending units to replay", 0, 30_000, 9_000, step=500, **setting("pending"))
    placement = cols[2].radio("Bucket placement", list(partitions.PLACEMENTS), horizontal=True,
                              help="even: bucket b on partition b mod P. hashed: a seeded random draw, "
                                   "so two buckets can share a partition.", **setting("placement"))
    seed = 1
    if placement == "hashed":
        seed = int(cols[2].number_input("Seed", 0, 10_000, 1))
    st.caption(sim_givens(partition_count, capacity, hot_rate, buckets, pending, placement))

    settings = (partition_count, float(capacity), float(hot_rate), buckets, float(pending), placement, seed)
    locked = guess.guess_lockin(SIM_NAME, "How much unserved work does the fleet add every second?", "units/s",
                                min_value=0, max_value=10_000, step=10,
                                scope=guess.digest(*settings))
    just_played = st.session_state.get(keys.played_key(SIM_NAME)) is not True
    if not guess.play_button(SIM_NAME, locked):
        guess.waiting_chart(SIM_NAME)
        return
    result = simulate(*settings)
    out = partitions.summary(result)
    guess.guess_verdict(locked, out["backlog_growth_per_s"], "units/s", tolerance_rel=0.05)
    m = st.columns(4)
    m[0].metric("Backlog growth", f"{out['backlog_growth_per_s']:,.1f}/s")
    m[1].metric("Fleet utilisation", f"{out['fleet_utilisation_pct']:.1f}%")
    m[2].metric("Busiest bucket", f"{out['max_bucket_rate_per_s']:,.1f}/s")
    drain = out["replay_drain_s"]
    m[3].metric("Replay drained after", "never" if drain is None else f"{drain:,.1f} s",
                help=f"Within the {out['horizon_s']:,.0f} s simulated. The ideal floor is pending ÷ spare capacity.")
    st.plotly_chart(charts.partition_load_figure(result), width="stretch")
    guess.animate(charts.backlog_frames(result), animate_now=just_played, chart_key=BACKLOG_CHART)
    floor = out["replay_drain_floor_s"]
    if floor is None:
        st.warning("The tenant alone offers more than the whole fleet can serve: no spreading can drain a replay.")
    elif drain is None:
        st.warning(f"The replay never finishes: a partition with no spare capacity holds part of it. "
                   f"With ideal spreading it would take {floor:,.0f} s.")
    elif drain > floor + partitions.TICK_S:
        st.info(f"The replay took {drain:,.1f} s, slower than the ideal {floor:,.0f} s: "
                "some partitions had less spare capacity than others.")
    else:
        st.success(f"The replay drained at the ideal pace: {floor:,.0f} s, because spare capacity "
                   "was spread evenly.")
