"""The websocket load generator (bench/load_ws.py): sessions without a browser, against a real server.

Two sessions start the drill and lock in through one `streamlit run` on PostgreSQL; a lock-in counts only when
the page says it is locked and the store holds the row. The page model is checked on its own first.
"""
from __future__ import annotations


import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load_ws import Page, ProtocolError, StoreAnswers, drive, run_blocking, submit_form
from bench.stack import Stack
from drills.backends import open_store


def _element(page: Page, path: list[int], kind: str, **fields) -> None:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    getattr(msg.delta.new_element, kind).MergeFrom(type(getattr(msg.delta.new_element, kind))(**fields))
    page.apply(msg)


def _block(page: Page, path: list[int]) -> None:
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    msg.delta.add_block.SetInParent()
    page.apply(msg)


def test_the_page_reads_widgets_in_page_order_and_a_redrawn_block_starts_empty():
    page = Page()
    _block(page, [0, 1])
    _element(page, [0, 1, 0], "text_input", id="late", label="Best guess (s)", form_id="lock::late")
    _element(page, [0, 0, 2], "text_input", id="early", label="Best guess (s)", form_id="lock::early")
    _element(page, [0, 0, 3], "button", id="go", label="🔒 Lock in", form_id="lock::early", is_form_submitter=True)
    _element(page, [1, 0], "button", id="side", label="🔒 Lock in")   # the sidebar is not the page body
    assert page.widget("text_input", "Best guess (s)").id == "early"
    assert [w.id for w in submit_form(page, "lock::early", {"early": "12"})] == ["early", "go"]
    assert submit_form(page, "lock::early", {"early": "12"})[0].string_value == "12"

    _block(page, [0, 1])
    assert [w.id for w in page.of_kind("text_input")] == ["early"]
    with pytest.raises(ProtocolError, match="no button labelled 'Next →'.*🔒 Lock in"):
        page.widget("button", "Next →")


@pytest.mark.timeout(180)
def test_two_websocket_sessions_start_and_lock_in_confirmed_on_the_page_and_stored(pg_url):
    with Stack(1, database=pg_url, proxy=False) as stack, StoreAnswers(pg_url) as stored:
        results = run_blocking(drive(stack.url, 2, 90, 0.2, stored, lockins=1))

    assert [r.error for r in results] == ["", ""]
    assert [(r.started, r.acknowledged, r.stored, len(r.latencies_s)) for r in results] == [(True, 1, 1, 1)] * 2
    store = open_store(pg_url)
    try:
        for n, result in enumerate(results):
            attempt = store.attempt_by_token(result.token)
            assert attempt.handle == f"load-{n}"
            assert [a.value for a in store.answers(attempt.id).values()] == [10.0]
    finally:
        store.close()
