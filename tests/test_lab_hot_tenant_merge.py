"""Tests for the bounded latest-N merge: exactly-once paging, the cost it reports, the cursor.

Brief 004's figure: ten from each of eight buckets is 80 candidates to return 10.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labs.hot_tenant import EventStore, latest, latest_naive
from labs.hot_tenant.merge import decode_cursor, encode_cursor

TENANT = "acme"


def filled_store(n_events: int, buckets: int = 8, seed: int = 3) -> EventStore:
    rng = random.Random(seed)
    store = EventStore()
    store.create_tenant(TENANT, buckets)
    store.write_burst(TENANT, [(f"evt-{i:04d}", rng.randrange(n_events * 10), "") for i in range(n_events)])
    return store


def test_naive_read_touches_80_candidates_for_10_results():
    store = filled_store(240)
    naive = latest_naive(store, TENANT, 10)
    bounded = latest(store, TENANT, 10)
    assert naive.candidates_read == 80 and naive.streams == 8
    assert bounded.events == naive.events
    assert len(bounded.events) == 10
    assert 10 <= bounded.candidates_read < naive.candidates_read
    assert bounded.peak_concurrent_fetches <= 4


@pytest.mark.parametrize("cap", [1, 2, 3, 8])
def test_concurrency_cap_is_respected(cap):
    store = filled_store(200)
    page = latest(store, TENANT, 10, max_concurrent=cap)
    assert 1 <= page.peak_concurrent_fetches <= cap
    assert page.events == latest_naive(store, TENANT, 10).events


def test_empty_buckets_are_counted_and_an_empty_tenant_has_no_cursor():
    store = EventStore()
    store.create_tenant(TENANT, 8)
    page = latest(store, TENANT, 10)
    assert page.events == () and page.next_cursor is None
    assert page.empty_fetches == page.fetches == 8


def test_cursor_round_trips_and_rejects_junk():
    assert decode_cursor(encode_cursor((12, "evt-3"))) == (12, "evt-3")
    for junk in ("", "not-base64!", encode_cursor((1, "a"))[:-4], "eyJmIjoyfQ=="):
        with pytest.raises(ValueError, match="cursor"):
            decode_cursor(junk) if junk else decode_cursor("e30=")


@settings(max_examples=50, deadline=None)
@given(n_events=st.integers(0, 80), limit=st.integers(1, 15), buckets=st.integers(1, 9),
       cap=st.integers(1, 5), seed=st.integers(0, 1_000), share=st.sampled_from([None, 1, 3]))
def test_paging_returns_every_event_once_in_order(n_events, limit, buckets, cap, seed, share):
    store = filled_store(n_events, buckets, seed)
    expected = [e.event_id for e in store.all_events(TENANT)]
    seen, cursor, pages = [], None, 0
    while True:
        page = latest(store, TENANT, limit, cursor, max_concurrent=cap, page_per_bucket=share)
        assert len(page.events) <= limit
        assert page.peak_concurrent_fetches <= cap
        seen += [e.event_id for e in page.events]
        cursor, pages = page.next_cursor, pages + 1
        if cursor is None:
            break
        assert pages <= n_events + 1
    assert seen == expected


def test_bad_limits_are_refused():
    store = filled_store(5)
    for bad in (0, -1, 10_001, 2.5, True):
        with pytest.raises(ValueError, match="limit"):
            latest(store, TENANT, bad)
    with pytest.raises(ValueError, match="max_concurrent"):
        latest(store, TENANT, 5, max_concurrent=0)
