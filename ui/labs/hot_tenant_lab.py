"""The hot-tenant lab tab: write, re-route and retry events, read the newest with bounded work, and fence an
ordered stream's owners. The lab itself is labs.hot_tenant (one private in-memory DuckDB per session).
"""
from __future__ import annotations

import streamlit as st

from labs.hot_tenant.playground import MAX_BURST, OWNERS, Playground
from ui.labs import hot_tenant_charts as charts
from ui import keys
from ui.labs.pg_lab import render_owner_race_beside_duckdb

K = keys.register("hot_tenant", __name__)   # this module's keys (ui.keys holds only shared ones)
LAB = K("lab")                           # the reader's private hot-tenant lab (in-memory DuckDB)
NOTE = K("note")                         # outcome of the reader's last lab action
READ = K("read")                         # last latest-N read: (bounded page, naive page)
RACE = K("race")                         # last threaded owner race
BURST = K.kept("ht_burst")               # hot-tenant lab: events in the next burst
BUCKETS = K.kept("ht_buckets")           # hot-tenant lab: bucket count of the next routing version
RETRY_N = K.kept("ht_retry_n")           # hot-tenant lab: how many of the oldest events to retry
RETRY_ROUTE = K.kept("ht_retry_route")   # hot-tenant lab: route retries by first or current version
PAGE_SIZE = K.kept("ht_limit")           # hot-tenant lab: events per latest-N page
READ_CAP = K.kept("ht_cap")              # hot-tenant lab: bucket reads allowed at once
BATCH = K.kept("ht_batch")               # hot-tenant lab: events per owner append
RACE_CHART = K.kept("race_chart")        # hot-tenant lab: the stream after the threaded owner race


def acquire_button(owner: str) -> str:
    """The hot-tenant lab's "Acquire" button of one stream owner."""
    return f"ht_acq_{owner}"


def take_over_button(owner: str) -> str:
    """The hot-tenant lab's "Take over" button of one stream owner."""
    return f"ht_take_{owner}"


def append_button(owner: str) -> str:
    """The hot-tenant lab's "Append" button of one stream owner."""
    return f"ht_app_{owner}"


def lab() -> Playground:
    if LAB not in st.session_state:
        st.session_state[LAB] = Playground()
    return st.session_state[LAB]


def note(kind: str, text: str) -> None:
    st.session_state[NOTE] = (kind, text)


def restart_lab() -> None:
    old = st.session_state.pop(LAB, None)
    if old is not None:
        old.close()
    for key in (NOTE, READ, RACE):
        st.session_state.pop(key, None)


def on_write() -> None:
    report = lab().write_burst(int(st.session_state[BURST]))
    note("success", f"Burst of {report.attempted}: {report.accepted} new events under routing version "
                    f"{lab().version.version}.")


def on_change_buckets() -> None:
    before = lab().version
    after = lab().change_buckets(int(st.session_state[BUCKETS]))
    note("info", f"Published routing version {after.version} with {after.buckets} buckets. Version "
                 f"{before.version} ({before.buckets} buckets) stays readable; its events keep their place.")


def on_retry() -> None:
    keep = st.session_state[RETRY_ROUTE] == "original"
    count = min(int(st.session_state[RETRY_N]), len(lab().sent))
    if count < 1:
        note("warning", "Write a burst first: there is nothing to retry yet.")
        return
    report = lab().retry_oldest(count, keep_route=keep)
    versions = ", ".join(f"v{v}: {n}" for v, n in report.by_version.items())
    kind = "success" if report.accepted == 0 else "info"
    note(kind, f"Retried the {count} oldest events ({'original' if keep else 'current'} route): "
               f"{report.recognised} recognised, {report.accepted} stored for the first time. "
               f"Stored copies by routing version: {versions}.")


def on_read(next_page: bool) -> None:
    cursor = None
    if next_page and READ in st.session_state:
        cursor = st.session_state[READ][0].next_cursor
    st.session_state[READ] = lab().read_latest(
        int(st.session_state[PAGE_SIZE]), cursor,
        max_concurrent=int(st.session_state[READ_CAP]))


def on_acquire(owner: str, takeover: bool) -> None:
    lab().acquire(owner, takeover=takeover)


def on_append(owner: str) -> None:
    lab().append(owner, int(st.session_state[BATCH]))


def on_race() -> None:
    st.session_state[RACE] = lab().race()


# -- the lab tab --------------------------------------------------------------------------------
def render_lab() -> None:
    play = lab()
    version = play.version
    top = st.columns([1, 1, 1, 1])
    top[0].metric("Events the client sent", f"{len(play.sent):,}")
    top[1].metric("Events stored", f"{play.stored_count():,}")
    top[2].metric("Routing version · buckets", f"v{version.version} · {version.buckets}")
    top[3].button("Start the lab again", on_click=restart_lab, help="Drops this session's lab database.")

    st.header("1 · Write, re-route, retry")
    cols = st.columns(3)
    with cols[0].container(border=True):
        st.number_input("Events in a burst", 1, MAX_BURST, 40, key=BURST)
        st.button("Write burst", on_click=on_write, type="primary", width="stretch")
    with cols[1].container(border=True):
        st.number_input("New bucket count", 1, 64, 8 if version.buckets != 8 else 16, key=BUCKETS)
        st.button(f"Publish routing version {version.version + 1}", on_click=on_change_buckets,
                  width="stretch")
    with cols[2].container(border=True):
        st.number_input("Retry the oldest", 1, MAX_BURST, 20, key=RETRY_N)
        st.radio("Route retries by", ["original", "current"], horizontal=True, key=RETRY_ROUTE,
                 format_func=lambda v: "their first version" if v == "original" else "today's version")
        st.button("Retry", on_click=on_retry, width="stretch")

    if NOTE in st.session_state:
        kind, text = st.session_state[NOTE]
        getattr(st, kind)(text)
    buckets_by_version = {v.version: v.buckets for v in play.store.versions("acme")}
    st.plotly_chart(charts.bucket_figure(play.bucket_counts(), buckets_by_version), width="stretch")
    st.caption("Each event's bucket is a blake2b hash of its id modulo the bucket count of the version "
               "it was first accepted under. A retry finds the stored copy by id, so it never lands twice.")

    st.header("2 · Read the newest events")
    cols = st.columns([1, 1, 1, 1])
    cols[0].number_input("Page size", 1, 50, 10, key=PAGE_SIZE)
    cols[1].slider("Concurrent bucket reads", 1, 8, 4, key=READ_CAP)
    cols[2].button("Read the newest page", on_click=on_read, args=(False,), width="stretch")
    last = st.session_state.get(READ)
    cols[3].button("Next page", on_click=on_read, args=(True,), width="stretch",
                   disabled=last is None or last[0].next_cursor is None)
    if last is not None:
        bounded, naive = last
        m = st.columns(4)
        m[0].metric("Returned", len(bounded.events))
        m[1].metric("Candidates read (bounded)", bounded.candidates_read)
        m[2].metric("Candidates read (naive)", naive.candidates_read)
        m[3].metric("Queries · most at once", f"{bounded.fetches} · {bounded.peak_concurrent_fetches}")
        left, right = st.columns([3, 2])
        left.plotly_chart(charts.read_cost_figure(bounded, naive), width="stretch")
        right.dataframe([{"event": e.event_id, "version": e.routing_version, "bucket": e.bucket,
                          "occurred at": e.occurred_at} for e in bounded.events],
                        hide_index=True, width="stretch", height=300)
        if not bounded.events:
            st.info("No older events.")
        if bounded.next_cursor is None:
            st.caption("That was the last page: paging from the newest has now read every stored event once.")
    else:
        st.caption("Reads cover every bucket of every routing version, old and new.")

    st.header("3 · One ordered stream, two owners")
    st.markdown("A strictly ordered stream cannot be spread over buckets. One owner holds a lease with an "
                "epoch; every append carries the epoch and is refused if a newer owner has taken over.")
    st.columns([1, 3])[0].number_input("Events per append", 1, 25, 5, key=BATCH)
    owner_cols = st.columns(len(OWNERS))
    for col, owner in zip(owner_cols, OWNERS):
        with col.container(border=True):
            st.markdown(f"**Owner {owner}**")
            b = st.columns(3)
            b[0].button("Acquire", key=acquire_button(owner), on_click=on_acquire, args=(owner, False),
                        width="stretch")
            b[1].button("Take over", key=take_over_button(owner), on_click=on_acquire, args=(owner, True),
                        width="stretch")
            b[2].button("Append", key=append_button(owner), on_click=on_append, args=(owner,),
                        width="stretch", type="primary")
    if play.owner_log:
        latest_attempt = play.owner_log[-1]
        (st.success if latest_attempt.ok else st.error)(
            f"{latest_attempt.owner_id} {latest_attempt.action}: {latest_attempt.detail}")
        st.plotly_chart(charts.stream_figure(play.stream_events(), play.owner_log), width="stretch")
        with st.expander(f"All {len(play.owner_log)} owner actions"):
            st.dataframe([{"owner": a.owner_id, "action": a.action, "epoch": a.epoch,
                           "result": "ok" if a.ok else "refused", "detail": a.detail}
                          for a in reversed(play.owner_log)], hide_index=True, width="stretch")
    else:
        st.caption("Try: A acquires and appends, B takes over, then A appends again.")

    st.button("Race the two owners in threads", on_click=on_race)
    race = st.session_state.get(RACE)
    if race is not None:
        tenant, report, events = race
        seqs = [e.seq for e in events]
        gap_free = seqs == list(range(1, len(seqs) + 1))
        st.markdown(f"Stream `{tenant}`: A had **{report.a_batches}** batches accepted, then was refused "
                    f"({len(report.refusals)}×); B appended from epoch **{report.b_epoch}**. "
                    f"{len(events)} events, sequence {'has no gaps' if gap_free else 'HAS GAPS'}, "
                    f"every event after the takeover is B's.")
        st.plotly_chart(charts.stream_figure(events, title=f"Threaded race on {tenant}"), width="stretch",
                        key=RACE_CHART)
    with st.expander("The same race on PostgreSQL, with no turnstile: row locks and the epoch fence alone"):
        render_owner_race_beside_duckdb()
