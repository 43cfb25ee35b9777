"""Leases simulation page: a leader whose lease lapses while it is paused, or while its clock is wrong.

Two tabs: a stop-the-world pause, and a network split with the clock set back; fencing on or off in both.
"""
from __future__ import annotations

import dataclasses

import streamlit as st

from sims import leases
from ui import keys
from ui.frame import require_frame
from ui.sims.controls import play
from ui.sims.embed import LEASE_TABS, url_text
from ui.sims.guess import plural
from ui.sims.lease_charts import stale_series, writes_frames
from ui.sims.tab import Question, SimTab, settings

require_frame()

st.title("Leases and split brain")
st.caption("Node A holds a lease and writes; node B waits to take over. What reaches storage when A's view of "
           "time is wrong?")

PAUSE = SimTab("leases.pause", "ls_pause", "leases",
               Question("Seconds B had led when A woke", "s", 120.0, 0.1, tolerance_rel=0.15),
               lambda r: leases.wake_after_takeover_s(r), writes_frames, stale_series, metric="wake_after_takeover_s")
STEP = SimTab("leases.step", "ls_step", "leases",
              Question("A's writes that land after B's first", "writes", 500.0, 1.0, tolerance_rel=0.2),
              lambda r: float(leases.stale_accepted(r)), writes_frames, stale_series, metric="stale_accepted")
RENEW_S, SINCE_RENEW_S = 3.0, 1.3     # as the split-brain drill: the fault strikes 1.3 s after A's second renewal
FAULT_AT_S = 2 * RENEW_S + SINCE_RENEW_S


def fencing_toggle(tab: SimTab, chosen):
    key = keys.sim_setting(tab.prefix, "fencing")
    on = st.toggle("Fencing tokens checked by storage", key=key, bind="query-params")
    return on, dataclasses.replace(chosen, query={**chosen.query, key: url_text(on)})


pause_tab, step_tab = st.tabs(list(LEASE_TABS), key=keys.TAB, bind="query-params")

with pause_tab:
    chosen = settings(
        PAUSE, f"A renews every {RENEW_S:g} s. {SINCE_RENEW_S:g} s after a renewal it checks its lease, sends a "
               "write and freezes; that write lands when A wakes.",
        dict(label="Lease, s", min_value=4, max_value=20, value=10, key=keys.sim_setting(PAUSE.prefix, "lease")),
        dict(label="Pause, s", min_value=0, max_value=30, value=18, key=keys.sim_setting(PAUSE.prefix, "pause")),
        page_tab=(keys.TAB, LEASE_TABS[0]))
    lease_s, pause_s = chosen.values
    fencing, chosen = fencing_toggle(PAUSE, chosen)
    params = leases.Params(lease_s=float(lease_s), renew_every_s=RENEW_S, fault_at_s=FAULT_AT_S,
                           fault_s=float(pause_s), fencing=fencing, duration_s=FAULT_AT_S + pause_s + 5.0)
    result = play(PAUSE, params, chosen)
    if result is not None:
        out = leases.summary(result)
        if result.b_acquired_s is None:
            st.markdown(f"The lease had {lease_s - SINCE_RENEW_S:g} s left when A froze, and A woke first: "
                        "B never took over.")
        else:
            st.markdown(f"The lease lapsed {lease_s - SINCE_RENEW_S:g} s into the pause and B took over at "
                        f"{out['b_acquired_s']:.1f} s; A woke **{out['wake_after_takeover_s']:.1f} s** later, and "
                        f"{plural(out['stale_writes'], 'write')} of its landed after B's first "
                        f"({out['stale_refused']} refused).")

with step_tab:
    chosen = settings(
        STEP, f"{SINCE_RENEW_S:g} s after a renewal A loses the coordination service but not storage, and a time "
              "sync sets its clock back. A stops when its own clock says the lease is over.",
        dict(label="Lease, s", min_value=4, max_value=20, value=10, key=keys.sim_setting(STEP.prefix, "lease")),
        dict(label="Clock set back, s", min_value=0.0, max_value=10.0, value=4.0, step=0.5,
             key=keys.sim_setting(STEP.prefix, "step")),
        dict(label="Writes a second", min_value=1, max_value=10, value=2, key=keys.sim_setting(STEP.prefix, "rate")),
        page_tab=(keys.TAB, LEASE_TABS[1]))
    lease_s, step_s, rate = chosen.values
    fencing, chosen = fencing_toggle(STEP, chosen)
    split_s = lease_s + step_s + 5.0
    params = leases.Params(lease_s=float(lease_s), renew_every_s=RENEW_S, fault="partition", fault_at_s=FAULT_AT_S,
                           fault_s=split_s, clock_step_s=step_s, write_every_s=1.0 / rate, fencing=fencing,
                           duration_s=FAULT_AT_S + split_s + 5.0)
    result = play(STEP, params, chosen)
    if result is not None:
        out = leases.summary(result)
        st.markdown(f"A wrote until {out['a_stopped_s']:.1f} s by the coordination service's clock, "
                    f"{step_s:g} s past the lapse: {plural(out['stale_writes'], 'write')} landed after B's first, "
                    f"**{out['stale_accepted']} accepted** and {out['stale_refused']} refused.")
