"""The live room's strip of a numeric question: a row per guess in a class-sized room, counts in a big one.

A room of 500 seats drew a 500-row strip, a chart over 13,000 px tall on every page and on the console. Over 40
guesses the room's guesses are bars of counts instead, and the viewer's own guess is a mark on their baseline.
"""
from __future__ import annotations

import random
from dataclasses import replace

from drills.live import Guess, NumericRoom
from ui.live.figures import numeric_figure, numeric_strip


def _room(n: int, own_row: int | None, seed: int = 38) -> NumericRoom:
    rng = random.Random(seed)
    guesses = []
    for row in range(n):
        value = float(rng.randint(40, 400))
        guesses.append(Guess(value, value - 20, value + 30, 160.0, value - 20 <= 160 <= value + 30, 0.5,
                             row == own_row))
    guesses.sort(key=lambda g: (g.value, not g.own))
    return NumericRoom("jobs_in_flight", "jobs", tuple(guesses), n, 0)


def _seen_from(room: NumericRoom, row: int) -> NumericRoom:
    """The same room as the seat whose guess is at `row` sees it."""
    return replace(room, guesses=tuple(replace(g, own=i == row) for i, g in enumerate(room.guesses)))


def _figure(room: NumericRoom, strip=None) -> dict:
    return numeric_figure(room, show_truth=True, strip=strip).to_dict()


def test_up_to_40_guesses_the_strip_has_a_row_each():
    for n in (1, 12, 40):
        figure = _figure(_room(n, own_row=0))
        rows = sorted(y for trace in figure["data"] for y in trace["y"])
        assert rows == list(range(1, n + 1)), n
        assert figure["layout"]["height"] == max(220, 26 * n + 120)
        assert all(trace["type"] == "scatter" for trace in figure["data"])


def test_over_40_guesses_the_room_is_counts_and_the_own_guess_a_mark_on_the_baseline():
    for n in (41, 500):
        nobody = _room(n, own_row=None)
        strip = numeric_strip(nobody, show_truth=True)
        console = _figure(nobody, strip)
        assert [t["type"] for t in console["data"]] == ["histogram"], "the console: the room's counts alone"
        counted = console["data"][0]["x"]
        assert sorted(counted) == sorted(g.value for g in nobody.guesses), "every guess is counted once"
        assert console["layout"]["height"] == 340, n
        assert console["layout"]["annotations"][0]["text"] == "truth 160 jobs"

        seat = _room(n, own_row=7)
        mine = next(g for g in seat.guesses if g.own)
        page = _figure(seat, numeric_strip(seat, show_truth=True))
        histogram, own = page["data"]
        assert histogram["type"] == "histogram" and sorted(histogram["x"]) == sorted(counted)
        assert own["name"] == "your guess"
        assert (own["x"], own["y"]) == ([mine.value], [0])
        assert (own["error_x"]["array"], own["error_x"]["arrayminus"]) == ([30.0], [20.0]), "its own 80% range"
        assert page["layout"] == console["layout"], "one layout for every page and the console"


def test_every_page_of_a_big_room_shares_one_count_trace():
    room = _room(120, own_row=None)
    strip = numeric_strip(room, show_truth=True)
    seen_by = [_seen_from(room, row) for row in (0, 60, 119)]
    figures = [numeric_figure(r, show_truth=True, strip=strip).to_dict() for r in seen_by]
    assert all(f["data"][0] is strip.counts for f in figures), "built once per room, not once per page"
    assert [f["data"][1]["x"] for f in figures] == [[room.guesses[row].value] for row in (0, 60, 119)]

