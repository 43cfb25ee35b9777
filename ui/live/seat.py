"""A candidate's part of the live room: the seat's question while it is open, the room's answers after it closes.

The room part is one st.fragment a move reruns alone (pushed by the process's listener, ui.live.push, or asked
for by the page's tick); after a Close it draws from what the process shares (ui.live.report).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import streamlit as st

from drills import live
from drills.store.live import CLOSED, ENDED, HEARTBEAT_S, OPEN, REVEALED, WAITING, LiveSession
from drills.loader import LoadedDrill
from drills.records import LockedAnswer
from drills.schema import ChoiceQuestion, NumericQuestion
from ui import keys
from ui.context import fragment_run, get_store
from ui.drill.attempt_view import AttemptView, SimTruths
from ui.drill.lockin import FINISHED, REFUSED, locked_line, render_question
from ui.drill.reveal import render_reveals
from ui.faults import is_store_fault
from ui.live import registry
from ui.live.common import LIVE_ROOM, POLL_S, PUSHED_POLL_S, WAITING_POLL_S, K, drill_of, question_of, scenario_link
from ui.live.join import seat_candidate
from ui.live.push import REDRAW_AFTER_S
from ui.live.report import closed_report, room_distribution, session_at
from ui.runtime import fragment_push
from ui.safe import escape_markdown

_LOG = logging.getLogger(__name__)
LIVE_ASKED = K("asked")   # (session, step) this page's tick last asked its room part alone to redraw for
LIVE_DREW = K("drew")   # (session, step) a candidate's room part last drew, and its fragment (ui.runtime.fragment_push)
LIVE_REPORTED = K("reported")   # (session, question) lock-ins this session has told the room of
LIVE_BEAT = K("beat")   # when this page last told the store its seat is still here (store clock)
LIVE_TICK_SAW = K("tick_saw")   # (session, step) the room was at when this page's tick last looked
LIVE_PUSHED = K("pushed")   # the session whose page's tick was set slow, the process pushing its moves

CLOSED_UNANSWERED = "This question closed before you locked in."   # a seat with no answer counted by the close


def render_candidate(store) -> None:
    candidate = seat_candidate(store)
    if candidate is None:
        return
    sessions = store.live_sessions(candidate.cohort)
    if not sessions:
        last = store.live_sessions(candidate.cohort, running=False)[:1]
        seat = next((s for s in store.live_seats(last[0].id) if s.candidate_id == candidate.id), None) if last else None
        if seat is not None:   # the session this candidate sat in has just ended: where their results are
            _room(store, last[0], seat)
        st.info("No live session is running in your class yet. This page joins it as soon as your instructor "
                "starts one.", icon=":material/hourglass_top:")
        _wait_for_a_session(candidate.cohort)
        return
    session = sessions[0]
    loaded = drill_of(session)
    seat = store.live_join(session.id, candidate, loaded.drill.time_box_min * 60)
    _room(store, session, seat)


def _wait_for_a_session(cohort: str) -> None:
    @st.fragment(run_every=WAITING_POLL_S)
    def tick() -> None:
        if get_store().live_sessions(cohort):
            st.rerun(scope="app")

    tick()


def _room(store, session: LiveSession, seat) -> None:
    st.session_state[LIVE_ROOM] = session.id
    _seat_part(session.id, seat)
    _seat_tick(session.id, seat)


@st.fragment
def _seat_part(session_id: int, seat) -> None:
    """Everything of the room on a candidate's page. A move reruns this part alone (pushed by the process's
    listener, or asked for by the page's tick), not the page: after a Close the whole room redraws at once."""
    store = get_store()
    page = fragment_push.this_fragment()
    pages = registry.pages(store.path)
    pages.seated(session_id, page, seat.candidate_id)
    try:
        if (fragment_run() and st.session_state.get(LIVE_PUSHED) == session_id
                and not registry.pushes(store, page.session_id if page else None)):
            # Pushed by a process whose listener dropped (RoomPages.dropped): its slow tick would find that late,
            # so the whole page runs now and ticks every POLL_S, beating for itself, until the push is back.
            st.rerun(scope="app")
        _draw_room_part(store, pages, page, session_id, seat)
    finally:
        pages.finished(session_id, page)   # the next page of the room waiting for its push is pushed


def _draw_room_part(store, pages, page, session_id: int, seat) -> None:
    drawn = pages.drawing(session_id, page, lambda: registry.room_version(store, session_id))
    last = st.session_state.get(LIVE_DREW)
    if last is None or last[0] != session_id:
        st.session_state[LIVE_DREW] = (session_id, None, page)   # the tick's to redraw until a draw completes
    try:
        session = session_at(store, session_id, drawn[0])   # as of the step drawn: a later move reruns the part
        _draw_seat_part(store, session, seat, drawn)
    except Exception as error:
        if not is_store_fault(error):
            raise
        # A store too busy to answer (a pool timeout while a whole room draws at once) is a state, not an error
        # box: nothing is recorded as drawn, so the part is drawn again (pushed, else by the page's tick).
        _LOG.warning("live room %s: the room part could not read the store: %s", session_id, error)
        st.info("The room is busy: your locked answers are safe, and this part draws again in a few seconds.",
                icon=":material/hourglass_top:")
        # Ask for this part again (after this run), not the whole page: the pool's own wait spaces the tries.
        pages.drew(session_id, page, -1)
        pages.moved(session_id, drawn)
        return
    # Only a draw that ran to its end counts as drawn, and as of the row it drew: a run cut short, or one whose
    # read of the session was older than the move the listener heard, leaves the move unseen, so a push (at
    # once, for an older read) or the page's tick redraws the part instead of taking an older room for current.
    if session.version != drawn[0]:
        _LOG.warning("live room %s: page %s read the session at step %s after hearing step %s; pushed again",
                     session_id, page.session_id if page else None, session.version, drawn[0])
        pages.drew(session_id, page, session.version)
        pages.moved(session_id, drawn)   # this page is behind what was heard: its part runs again after this run
    st.session_state[LIVE_DREW] = (session_id, session.version, page)


def _draw_seat_part(store, session: LiveSession, seat, drawn: tuple) -> None:
    if session.state == ENDED and fragment_run():
        st.rerun(scope="app")   # the page around the room changes too (where to wait for the next session)
    loaded = drill_of(session)
    st.caption(f"Live: {escape_markdown(loaded.drill.title)} · you are "
               f"{escape_markdown(seat.handle)} · {drawn[1]} in the room")
    scenario_link(session)
    _late_locks(loaded, session)
    if session.state == ENDED:
        st.success("The session has ended. Your answers are an attempt of your class, with its results.", icon=":material/flag:")
        st.page_link("pages/results.py", label="See your results", icon=":material/bar_chart:",
                     query_params={keys.ATTEMPT_TOKEN: store.attempt_by_id(seat.attempt_id).token})
        return
    if session.state == WAITING:
        st.info("You are in the waiting room. The first question opens when your instructor opens it.", icon=":material/hourglass_top:")
        return
    question = question_of(loaded, session)
    part = loaded.drill.part(session.part_id)
    st.subheader(f"Question {session.step_no + 1} of {len(live.questions_in_order(loaded))} · {part.title}")
    shared = _closed_seat(store, session, loaded, question, seat, present=drawn[1])
    view = None if shared else AttemptView.load(store, store.attempt_by_id(seat.attempt_id), loaded)
    if part.body:
        with st.expander("The scenario", expanded=session.state == OPEN):
            st.markdown((shared or view).text(part.body))
    if session.state == OPEN:
        render_question(view, question, part.id)
        _report_lock(store, session, view, question.id)
        if question.id in view.answers:
            st.caption("Locked in. The room's answers show when the instructor closes the question, or once "
                       "everyone here has locked in.")
        return
    revealed = session.state == REVEALED
    shown = replace(view, disclosed=view.disclosed | {question.id}) if revealed else view
    footer = "" if revealed else "The worked answer opens for everyone when your instructor reveals it."

    def room(lead: str = "") -> None:   # the room's answers, in the card of the seat's own answer
        room_distribution(store, session, loaded, question, own_attempt=seat.attempt_id, present=drawn[1],
                           footer=footer, lead=lead)

    if shared is None and question.id in view.answers:   # never the form: the question is closed
        render_question(shown, question, part.id, then=room)
    else:   # the lead and the room's answers in one element: at a Close every page of the room draws this card
        with st.container(border=True):
            room(shared.lead(question) if shared else _unanswered(view.text, question))
    if revealed:   # never with `shared`, which is only while closed
        _worked_answer(shown, loaded, question)


@dataclass(frozen=True)
class ClosedSeat:
    """A seat's own part of a closed question, drawn from the room's report the process shares (closed_report)
    instead of the seat's own reads: a closed question takes no more lock-ins, so its answer there is final."""
    loaded: LoadedDrill   # the seat's drill in its variant and its simulations' runs, as AttemptView.load
    sim_values: SimTruths   # builds them (here the report's grader's, so the runs are once per process)
    answer: LockedAnswer | None   # the seat's answer to the closed question, None if it locked none in time
    texts: dict   # (id of the variant's drill, template) -> its text: the report's, shared by the room's pages

    def text(self, template: str) -> str:
        """A drill text in the seat's variant, by the view's one rule (no model run unless read), made once per
        variant for the whole room (the report keeps the drills, so an id stays theirs while it is kept)."""
        key = (id(self.loaded), template)
        found = self.texts.get(key)
        if found is None:
            found = self.texts[key] = AttemptView.text(self, template)
        return found

    def lead(self, question) -> str:
        """The locked answer as render_question shows it once locked (the prompt, then the guess), as markdown."""
        if self.answer is None:
            return _unanswered(self.text, question)
        return _with_prompt(self.text, question, locked_line(question, self.answer, self.text))


def _unanswered(text, question) -> str:
    """A closed question the seat did not lock in, as markdown: which question, and that it closed first."""
    return _with_prompt(text, question, f":gray[{CLOSED_UNANSWERED}]")


def _with_prompt(text, question, line: str) -> str:
    """The question's prompt in bold, then `line` (markdown), as a closed seat's card leads."""
    return f"**{text(question.prompt)}**\n\n{line}"


def _closed_seat(store, session: LiveSession, loaded, question, seat, *, present: int) -> ClosedSeat | None:
    """The seat's closed question from the shared report when it draws as a plain locked line (a number without
    a simulation, or a choice; locked without hints, not skipped), else None: the page reads its own view."""
    plain = isinstance(question, ChoiceQuestion) or (isinstance(question, NumericQuestion) and not question.sim)
    if session.state != CLOSED or not plain:
        return None
    report = closed_report(store, session, present, question, loaded)
    grader = report.graders.get(seat.attempt_id)
    answer = live.counted(report.answers, seat.attempt_id, question.id, report.until)
    if grader is None or (answer is not None and (answer.skipped or answer.hint_cost)):
        return None
    return ClosedSeat(grader.loaded, grader.sim_values, answer, report.texts)


def _late_locks(loaded, session: LiveSession) -> None:
    """A Lock in pressed on a form left from before the close: the store refused it (LiveClosed); say so here,
    since the page no longer draws that form. The open question's own outcome is render_question's to show.
    Only the questions opened so far had a form (a missing key costs the session state a raised KeyError)."""
    for question_id, _ in live.questions_in_order(loaded)[:session.step_no + 1]:
        if session.state == OPEN and question_id == session.question_id:
            continue
        outcome = st.session_state.pop(keys.lock_outcome(question_id), None)
        if outcome is not None and outcome[0] in (REFUSED, FINISHED):
            prompt = loaded.text(loaded.drill.question(question_id).prompt)
            st.error(f"Your Lock in for “{prompt}” came after the question closed, so it was not counted.",
                     icon=":material/lock:")


def _report_lock(store, session: LiveSession, view: AttemptView, question_id: str) -> None:
    """Once per lock-in: tell the room, which closes the question if this was the last seat to lock in."""
    reported = st.session_state.setdefault(LIVE_REPORTED, set())
    mark = (session.id, question_id)
    if question_id in view.answers and mark not in reported:
        reported.add(mark)
        if store.live_locked(session.id):
            st.rerun(scope="fragment" if fragment_run() else "app")   # this lock-in closed the question


def _worked_answer(view: AttemptView, loaded, question) -> None:
    """The part's worked answer, once the revealed question is the last of its part the room takes."""
    order = live.questions_in_order(loaded)
    part_id = dict(order)[question.id]
    last_of_part = [qid for qid, pid in order if pid == part_id][-1]
    part = loaded.drill.part(part_id)
    if question.id == last_of_part and part.reveal:
        shown = replace(view, reveals={**view.reveals, **{(part.id, s.stage): 0.0 for s in part.reveal}})
        render_reveals(shown, part, True)


def _seat_tick(session_id: int, seat) -> None:
    """A candidate's page: beat every HEARTBEAT_S (present means seen lately), and redraw the room's part if a
    move was missed. Where the process's listener reruns the room's part itself (PostgreSQL), this is only the
    fallback and ticks slowly; without the push (DuckDB, the plain mode, a push that failed or never drew) it is
    how a page learns of a move, every POLL_S, inside the 1 s a move must take to reach the room."""
    store = get_store()
    drew = st.session_state.get(LIVE_DREW)
    page = drew[2] if drew is not None and drew[0] == session_id else None
    pushed = registry.pushes(store, page.session_id if page else None)
    every = PUSHED_POLL_S if pushed else POLL_S
    st.session_state[LIVE_PUSHED] = session_id if pushed else None

    @st.fragment(run_every=every)
    def tick() -> None:
        try:
            look()
        except Exception as error:   # a busy store: nothing to show, the next tick looks again
            if not is_store_fault(error):
                raise
            _LOG.warning("live room %s: a page's tick could not read the store: %s", session_id, error)

    def look() -> None:
        drew = st.session_state.get(LIVE_DREW)
        if drew is None or drew[0] != session_id:
            return
        now_s = store.clock()
        beaten = pushed and registry.pages(store.path).beating(session_id, page.session_id)
        if not beaten and now_s - st.session_state.get(LIVE_BEAT, float("-inf")) >= HEARTBEAT_S - every / 2:
            st.session_state[LIVE_BEAT] = now_s   # the tick nearest HEARTBEAT_S after the last beat
            store.live_heartbeat(session_id, seat.candidate_id)   # not beaten by the process (ui.live.push)
        if pushed:
            registry.pages(store.path).seated(session_id, page, seat.candidate_id)   # back after a reconnect
        if not fragment_run():
            st.session_state[LIVE_TICK_SAW] = (session_id, drew[1])   # the page's own run drew the part with it
            return   # drawn inline in the page's own run, just after the part: nothing can be missed yet
        if page is not None and pushed != registry.pushes(store, page.session_id):
            # The push stopped (the listener lost its connection, a push failed): poll now. Or it is back (the
            # listener connected again): tick slowly again. The page's own run sets the tick's speed.
            st.rerun(scope="app")
        step = registry.room_version(store, session_id)[0]
        saw = st.session_state.get(LIVE_TICK_SAW)
        if step == drew[1]:
            if page is not None and not pushed and saw is not None and saw[0] == session_id and saw[1] != step:
                # The room moved since this tick last looked, and the part drew the move in a run this tick asked
                # for. A run the server finished can still fail to reach the browser (the bench's 200-seat room
                # lost 2 of 200 so, with nothing left to notice it): the part is drawn once more, so a lost draw
                # costs the seat a tick or two, never the move. Not while the move is fresh, nor while this
                # process still has pages of the room to draw it on. (A pushed move's one more draw is the
                # process's own: RoomPages._recheck_due.)
                pages = registry.pages(store.path)
                if pages.drawn_for(session_id, page.session_id) < REDRAW_AFTER_S or not pages.settled(session_id):
                    return   # looked at again on the next tick
                fragment_push.rerun(page)
            st.session_state[LIVE_TICK_SAW] = (session_id, step)
            return
        st.session_state[LIVE_TICK_SAW] = (session_id, step)
        if pushed:
            pages = registry.pages(store.path)
            if pages.in_flight(session_id, page.session_id):
                return   # pushed moments ago, and retried by the listener: its run is on the way
            _LOG.warning("live room %s: page %s drew step %s, the room is at %s, and no push is on the way: "
                         "it polls from now on", session_id, page.session_id, drew[1], step)
            pages.lose(page.session_id)
        elif page is not None and not registry.plain_streamlit() and st.session_state.get(LIVE_ASKED) != (
                session_id, step):
            st.session_state[LIVE_ASKED] = (session_id, step)   # polling (DuckDB): redraw the part alone, once
            if fragment_push.rerun(page):
                return
        st.rerun(scope="app")   # redraw the room now, not on a later tick; a page that lost a push then polls

    tick()
