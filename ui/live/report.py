"""The room's answers against the truth: each question's report, shared per process after a Close, and the ranking.

Grading and ranking are drills.live's; this module reads what they need from the store once, keeps a closed
question's report for every page of the room (ui.live.shared) and draws it with ui.live.figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from drills import live
from drills.disclosure import LEGACY_SEED, graded_seeds_of
from drills.store.live import OPEN, LiveSession
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.variants import in_variant
from ui.drill.attempt_view import SimTruths
from ui.live.common import K
from ui.live.figures import Strip, choice_figure, numeric_figure, numeric_strip
from ui.live.shared import SharedReads


def _chart_key(question_id: str) -> str:
    """The room's distribution chart of one question."""
    return K.item("chart", question_id)


def seat_graders(store, session: LiveSession, seats, loaded) -> dict[int, live.Grader]:
    """Each seat graded in its own attempt's variant and graded seed (drills.disclosure.graded_seed_of); the
    class's attempts read in one query and the seeds not known here in another, a grader per (variant, seed).
    Its simulations run only if a question graded needs one (SimTruths), once per process (cached)."""
    attempts = {a.id: a for a in store.attempts(cohort=session.cohort, drill_id=session.drill_id)}
    seeds = graded_seeds_of(store, [attempts[s.attempt_id] for s in seats if s.attempt_id in attempts], loaded.drill)
    drawn = {s.attempt_id: (attempts[s.attempt_id].variant, seeds[s.attempt_id])
             if s.attempt_id in attempts else (session.variant, LEGACY_SEED) for s in seats}
    graders: dict[tuple[int, int], live.Grader] = {}
    for variant, seed in set(drawn.values()):
        mine = in_variant(loaded, variant)
        graders[variant, seed] = live.Grader(mine, SimTruths(mine, seed))
    return {attempt_id: graders[pair] for attempt_id, pair in drawn.items()}


def _read_room(store, session: LiveSession, loaded) -> tuple:
    """(seats, answers, steps, graders): what the room's reports are made of, read from the store."""
    seats = store.live_seats(session.id)
    return seats, store.live_answers(session.id), store.live_steps(session.id), seat_graders(store, session, seats, loaded)


@dataclass(frozen=True)
class RoomReport:
    """What the room shows of one question, for nobody in particular (live.for_viewer marks a viewer's own)."""
    room: live.NumericRoom | live.ChoiceRoom | None   # None for a notes question
    answers: dict   # attempt id -> question id -> answer, as read
    until: float | None   # the question's close: later lock-ins are left out
    strip: Strip | None   # a numeric question's strip, shared by every page
    graders: dict   # attempt id -> its live.Grader (the drill in its variant), for each seat read
    notes: tuple[int, int] = (0, 0)   # a notes question: (seats that wrote notes, seats)
    texts: dict = field(default_factory=dict)   # the seats' drill texts, made once (ui.live.seat.ClosedSeat.text)


def _report(question, session: LiveSession, read: tuple, *, closed: bool) -> RoomReport:
    seats, answers, steps, graders = read
    until = live.closed_at(steps).get(question.id) if closed else None
    if isinstance(question, NumericQuestion):
        room = live.numeric_room(question, session.part_id, seats, graders, answers, own_attempt=None, until=until)
        return RoomReport(room, answers, until, numeric_strip(room, show_truth=closed), graders)
    if isinstance(question, ChoiceQuestion):
        return RoomReport(live.choice_room(question, seats, answers, own_attempt=None, until=until), answers, until,
                          None, graders)
    wrote = sum(1 for s in seats if question.id in answers.get(s.attempt_id, {}))
    return RoomReport(None, answers, until, None, graders, (wrote, len(seats)))


_SHARED = SharedReads()   # per process: a session's row as of a step, a closed question's report


def session_at(store, session_id: int, step: int) -> LiveSession | None:
    """The session's row as of its latest step `step`, read once per process. Every move (an injection too) is
    a new step and the rest of the row never changes, so a step fixes the row: after a move the room's pages
    share one read. A read that finds a newer step (a move meanwhile) is returned, not kept under `step`."""
    return _SHARED.get(("session", store.path, session_id, step), lambda: store.live_session(session_id),
                       keep=lambda session: session.version == step)


def closed_report(store, session: LiveSession, present: int, question, loaded) -> RoomReport:
    """_report of a closed step, once per process: after a Close every page of the room draws the same answers
    at once, and a closed question takes no more lock-ins (LiveClosed), so one read, one grading and one strip
    serve them all; each page marks its own guess. Read-only for its callers. `present` keys a late join (the
    room's count changes). The first page builds it while the others wait for it, not build it again."""
    return _SHARED.get(("closed", store.path, session.id, session.version, present, question.id),
                       lambda: _report(question, session, _read_room(store, session, loaded), closed=True))


def room_distribution(store, session: LiveSession, loaded, question, *, own_attempt: int | None,
                       present: int, footer: str = "", lead: str = "") -> None:
    """The room's locked answers to `question`: as they stand now while it is open, as of its close after.

    `lead` (markdown, no user text), the title, the counts and `footer` are one element and the chart another:
    after a Close every page of the room draws this at once, and each element is a message the server builds and
    sends to every page."""
    closed = session.state != OPEN
    if closed:
        report = closed_report(store, session, present, question, loaded)
    else:
        report = _report(question, session, _read_room(store, session, loaded), closed=False)
    room = live.for_viewer(report.room, report.answers, own_attempt, until=report.until) if report.room else None
    chart = None
    if isinstance(room, live.NumericRoom):
        hits, ranges = report.room.ranges_held   # the room's, the same for every viewer: counted once a report
        counts = (f"{len(room.guesses)} {'guess' if len(room.guesses) == 1 else 'guesses'} of {room.seats} in the "
                  "room" + (f", {room.skipped} skipped" if room.skipped else "")
                  + (f" · {hits} of {ranges} ranges held the truth" if ranges and closed else ""))
        if room.guesses:
            chart = numeric_figure(room, show_truth=closed, strip=report.strip)
    elif isinstance(room, live.ChoiceRoom):
        counts = f"{room.answered} answers of {room.seats} in the room"
        if room.answered:
            chart = choice_figure(room, show_right=closed)
    else:
        count, seats = report.notes
        counts = f"{count} of {seats} wrote notes; each rates their own against the worked answer."
    # Numbers and the page's own sentences only: no user text goes into this markdown.
    st.markdown((f"{lead}\n\n" if lead else "")
                + "  \n".join(["**The room's answers**", f":gray[{counts}]"] + ([f":gray[{footer}]"] if footer else [])))
    if chart is not None:
        st.plotly_chart(chart, key=_chart_key(question.id), width="stretch")


def render_scoreboard(store, session: LiveSession, loaded, steps, seats) -> None:
    """The room's ranking over the closed questions (drills.live.scoreboard), once a question has closed."""
    board = live.scoreboard(loaded, steps, seats, seat_graders(store, session, seats, loaded),
                            store.live_answers(session.id))
    if board and board[0].questions:
        st.markdown("**Scoreboard**")
        st.caption(live.score_rule())
        st.dataframe({"rank": [s.rank for s in board], "name": [s.handle for s in board],   # user text: a table
                      "points": [f"{s.points:.2f} of {s.questions}" for s in board],
                      "ranges held": ["—" if s.held is None else f"{s.hits} of {s.ranges}" for s in board]},
                     hide_index=True)
