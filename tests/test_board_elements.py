"""The board part draws ten numeric lock-ins on every page run: each question's three boxes sit in one row block
(where three columns were four blocks), the boxes and their keys unchanged."""
from __future__ import annotations

from drills.loader import load_catalogue


def test_each_numeric_lock_in_draws_its_three_boxes_in_one_row_and_no_columns(app_test):
    at = app_test("app.py").run()
    at.text_input(key="candidate_handle").input("rows")
    at.button(key="start_button::one_tenant").click().run()
    at.selectbox(key="part_select").set_value("board").run()
    assert not at.exception, at.exception
    board = load_catalogue().drills["one_tenant"].drill.part("board")
    keys = {t.key for t in at.text_input}
    for question in board.questions:
        assert {f"lock::{question.id}::{f}" for f in ("value", "low", "high")} <= keys
    assert len(at.columns) == 0, f"{len(at.columns)} column blocks on the board"
