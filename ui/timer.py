"""The sidebar clock: time left in the box and where the pacing says you should be.

A fragment that re-runs every second; it recomputes from the stored start, never counts locally.
"""
from __future__ import annotations

import streamlit as st

from drills.timebox import clock_for, format_duration, pacing, planned_part
from ui import keys
from ui.context import get_catalogue, get_store, now
from ui.safe import escape_markdown


@st.fragment(run_every=1)
def sidebar_clock(token: str) -> None:
    store = get_store()
    attempt = store.attempt_by_token(token)
    if attempt is None:
        return
    # Read on every tick, the part picker's state first: the clock is drawn before the page, and a
    # Next/Previous click has moved the picker when the run starts, but not yet the URL or the events.
    current_part = (st.session_state.get(keys.PART_SELECT) or st.query_params.get(keys.PART)
                    or store.last_opened_part(attempt.id))   # None only before the first part opens
    loaded = get_catalogue().drills.get(attempt.drill_id)
    clock = clock_for(attempt, now())
    st.markdown(f"**{escape_markdown(attempt.handle)}**" + (f" · cohort {escape_markdown(attempt.cohort)}"
                                                              if attempt.cohort else ""))
    if clock.over:
        st.error(f"Over time by **{format_duration(clock.overtime_s)}** — carry on, it is recorded.", icon="⏰")
    else:
        st.metric("Time left" if not clock.finished else "Time left when you finished",
                  format_duration(clock.remaining_s))
    st.progress(min(1.0, clock.elapsed_s / clock.limit_s) if clock.limit_s else 1.0,
                text=f"{format_duration(clock.elapsed_s)} of {format_duration(clock.limit_s)}"
                     + (f" (incl. {format_duration(attempt.extra_s)} extra)" if attempt.extra_s else ""))
    if loaded is None or clock.finished:
        return
    drill = loaded.drill
    current_part = current_part or drill.parts[0].id
    planned = planned_part(drill, clock.elapsed_s)
    order = [p.id for p in drill.parts]
    lines = []
    for point in pacing(drill):
        marker = "▶" if point.part_id == current_part else ("⏱" if point.part_id == planned else "·")
        lines.append(f"{marker} {point.title} — by {format_duration(point.planned_end_s)}")
    if current_part in order:
        gap = order.index(current_part) - order.index(planned)
        parts = "part" if abs(gap) == 1 else "parts"
        status = "on pace" if gap == 0 else (f"{gap} {parts} ahead" if gap > 0 else f"{-gap} {parts} behind")
        st.caption(f"Pacing: {status}. ▶ is the part you are on; ⏱ is where the suggested pace puts you now.")
    st.text("\n".join(lines))
