"""The sidebar clock: time left in the box and where the pacing says you should be.

The browser ticks the countdown (ui/drill/browser_clock.py); the server redraws it when the candidate acts
or once the limit passes, always from the stored start, never from a local count.
"""
from __future__ import annotations

import streamlit as st

from drills.store.accounts import may_open
from drills.timebox import clock_for, format_duration, pacing, planned_part
from ui import keys
from ui.drill.browser_clock import ClockView, clock_markup, next_server_run_s
from ui.runtime.clean_html import CleanHtml
from ui.context import attempt_this_run, get_catalogue, get_store, now, store_guard, viewer, watch_this_page
from ui.safe import escape_markdown


def attempt_clocks(token: str) -> None:
    """The sidebar's clock and the page's compact one, from one read of the attempt.

    The compact one shows only where the sidebar starts collapsed (phones); it is drawn on every full run,
    not in the fragment, and carries the style and the script both clocks share: the browser ticks and announces
    both from it. (It stays on the page while the sidebar's fragment reruns alone, so the sidebar's clock sends
    its markup only: 5.5 KB less for every run.)
    """
    attempt = attempt_this_run(token)
    if attempt is None or not may_open(attempt.account_id, viewer()):   # another account's: not even its clock
        return
    with st.sidebar:
        _sidebar_fragment(attempt, token)
    at = now()
    clock = clock_for(attempt, at)
    st.html(CleanHtml(clock_markup(ClockView(attempt.started_at, clock.limit_s, attempt.extra_s, at, clock),
                                   compact=True)),
            unsafe_allow_javascript=True)


def _sidebar_fragment(attempt, token: str) -> None:
    """Draw the clock in a fragment that the server reruns only when the limit passes."""
    every = next_server_run_s(clock_for(attempt, now()))
    st.fragment(_guarded_clock, run_every=every)(token)


def _guarded_clock(token: str) -> None:
    watch_this_page()   # the server reruns this fragment when the store stops answering (ui.store_watch)
    with store_guard():   # a tick during a store outage, or that push, reruns the app as the outage page
        _draw_clock(token)


def _draw_clock(token: str) -> None:
    store = get_store()
    attempt = attempt_this_run(token)
    if attempt is None:
        return
    # The part picker's state first: the clock is drawn before the page, and a Next/Previous click
    # has moved the picker when the run starts, but not yet the URL or the events.
    current_part = (st.session_state.get(keys.PART_SELECT) or st.query_params.get(keys.PART)
                    or store.last_opened_part(attempt.id))   # None only before the first part opens
    loaded = get_catalogue().drills.get(attempt.drill_id)
    at = now()
    clock = clock_for(attempt, at)
    st.markdown(f"**{escape_markdown(attempt.handle)}**" + (f" · cohort {escape_markdown(attempt.cohort)}"
                                                              if attempt.cohort else ""))
    # Numbers only go into this HTML (never the handle or any other user text).
    st.html(CleanHtml(clock_markup(ClockView(attempt.started_at, clock.limit_s, attempt.extra_s, at, clock),
                                   with_script=False)),
            unsafe_allow_javascript=True)
    if loaded is None or clock.finished:
        return
    drill = loaded.drill
    current_part = current_part or drill.parts[0].id
    planned = planned_part(drill, clock.elapsed_s)
    order = [p.id for p in drill.parts]
    lines = []
    for point in pacing(drill):
        marker = "▶" if point.part_id == current_part else ("»" if point.part_id == planned else "·")
        lines.append(f"{marker} {point.title} — by {format_duration(point.planned_end_s)}")
    if current_part in order:
        gap = order.index(current_part) - order.index(planned)
        parts = "part" if abs(gap) == 1 else "parts"
        status = "on pace" if gap == 0 else (f"{gap} {parts} ahead" if gap > 0 else f"{-gap} {parts} behind")
        st.caption(f"Pacing: {status}. ▶ is the part you are on; » is where the suggested pace puts you now.")
    st.text("\n".join(lines))
