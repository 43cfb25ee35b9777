"""The live room: candidates of a class answer the question the instructor opened, then see the room's answers.

The room's state is in the store (drills.store.live); a small fragment notices a move (LISTEN/NOTIFY on
PostgreSQL, the store's version on DuckDB) and reruns the page. Reports are drills.live's; figures ui.live.figures.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import streamlit as st

from drills import live
from drills.store.accounts import AccessRefused
from drills.store.throttle import Throttled
from drills.answers import InputError
from drills.store.live import (
    CLOSE,
    CLOSED,
    END,
    ENDED,
    HEARTBEAT_S,
    INJECT,
    NEXT,
    OPEN,
    PRESENT_S,
    REVEAL,
    REVEALED,
    WAITING,
    LiveRefused,
    LiveSession,
)
from drills.live_watch import watch_for
from drills.loader import LoadedDrill
from drills.records import Candidate, LockedAnswer
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.variants import in_variant
from sims.platform import SCENARIO_TITLES
from ui import keys
from ui.runtime import fragment_push
from ui.drill.attempt_view import AttemptView, SimTruths
from ui.context import fragment_run, get_catalogue, get_store
from ui.identity import account_or_sign_in, sign_in_configured, signed_in_account, signed_in_instructor
from ui.instructor.access import sign_in
from ui.live.clock import room_clock
from ui.live.figures import Strip, choice_figure, numeric_figure, numeric_strip
from ui.live.push import RoomPages
from ui.live.shared import SharedReads
from ui.drill.lockin import FINISHED, REFUSED, locked_line, render_question
from ui.drill.reveal import render_reveals
from ui.safe import escape_markdown
from ui.sims.embed import platform_query
from ui.drill.start import Visitor, anonymous_candidate

POLL_S = 0.5            # how often a page looks for a move: well inside the 1 s a closed question must take
PUSHED_POLL_S = HEARTBEAT_S   # ...where the process's listener reruns the room's pages itself: beats, and a fallback
WAITING_POLL_S = 2.0    # a candidate waiting for a session to start
TAKE_PART, RUN_ROOM = "Take part", "Run the room (instructors)"
ROOM_PARAM = "live"     # the room's link to its sim run carries the session, so a new tab follows the room too

K = keys.register("live", __name__)   # this module's keys (ui.keys holds only shared ones)
LIVE_ROLE = K("role")   # the live page: taking part, or running the room (instructors)
LIVE_CLASS = K("class")   # a signed-in candidate's pick among their classes
LIVE_HANDLE = K("handle")   # without a provider: the handle, cohort and resume code typed to join
LIVE_COHORT = K("cohort")
LIVE_CODE = K("code")
LIVE_CANDIDATE = K("candidate")   # the anonymous candidate row this session proved (drills.records.Candidate)
LIVE_NEW_CODE = K("new_code")   # a resume code just issued to that handle, shown once
LIVE_SEEN = K("seen")   # the room's version the console's last full run drew: a change reruns the page
LIVE_ASKED = K("asked")   # (session, step) this page's tick last asked its room part to redraw for
LIVE_DREW = K("drew")   # (session, step) a candidate's room part last drew, and its fragment (ui.runtime.fragment_push)
LIVE_REPORTED = K("reported")   # (session, question) lock-ins this session has told the room of
LIVE_CONSOLE_CLASS = K("console_class")   # the instructor's class picker
LIVE_DRILL = K("drill")   # the drill or single break a new live session runs
LIVE_SCENARIO = K("scenario")   # the platform-sim break the instructor may inject
LIVE_NOTE = K("note")   # why the instructor's last press was refused (shown once)
LIVE_BEAT = K("beat")   # when this page last told the store its seat is still here (store clock)
LIVE_ROOM = K("room")   # the live session this browser session sits in, for its sim pages to follow
LIVE_SIM_FOLLOWED = K("sim_followed")   # (session, scenario) the platform sim page last switched to


def _move_key(action: str) -> str:
    """The instructor console's button for one move of the room (next, close, reveal, end, inject)."""
    return K.item("move", action)


def _chart_key(question_id: str) -> str:
    """The room's distribution chart of one question."""
    return K.item("chart", question_id)


CLOSED_UNANSWERED = "This question closed before you locked in."   # a seat with no answer counted by the close

_PROCESS_LOCK = threading.Lock()
_WATCHES: dict[str, tuple] = {}   # store target -> (its watcher, the room pages it reruns): one per process


def _process_watch(target: str) -> tuple:
    """One watcher per process and store: a LISTEN thread on PostgreSQL (which reruns the room's pages after a
    move it heard), the store's own version on DuckDB. A plain dict, not st.cache_resource: every page run
    asks for it, and a cached function's call inspects its signature each time."""
    found = _WATCHES.get(target)
    if found is None:
        with _PROCESS_LOCK:
            found = _WATCHES.get(target)
            if found is None:
                pages = RoomPages()
                watch = watch_for(get_store())
                watch.on_move(pages.moved)
                found = _WATCHES[target] = (watch, pages)
    return found


def _watch(target: str):
    return _process_watch(target)[0]


def _pages(target: str) -> RoomPages:
    """The candidate pages of each room in this process, and the step each drew (ui.live.push)."""
    return _process_watch(target)[1]


def _heard(session_id: int) -> tuple:
    """What this process has heard of the room so far: taken before the run reads the store, so a move that
    lands while the page draws is one the fragment has not heard yet, and reruns for."""
    return _watch(get_store().path).version(session_id)


def _room_version(store, session_id: int) -> tuple:
    """The room's version: as this process's listener last read it (no query), else from the store."""
    known = _watch(store.path).room(session_id)
    return known if known is not None else store.live_version(session_id)


def _follow(session_id: int, drawn: tuple, heard: tuple) -> None:
    """The console: rerun the page when the room moves past what this run drew, counts and presence too.

    It also looks at presence every HEARTBEAT_S even when nothing was notified, since beats (and seats going
    quiet) are not notified."""
    store = get_store()
    watch = _watch(store.path)
    st.session_state[LIVE_SEEN] = (session_id, drawn, heard, store.clock())

    @st.fragment(run_every=POLL_S)
    def tick() -> None:
        seen = st.session_state.get(LIVE_SEEN)
        if seen is None or seen[0] != session_id:
            return
        now_s = store.clock()
        heard = watch.version(session_id)
        due = now_s - seen[3] >= HEARTBEAT_S
        if heard == seen[2] and not due:
            return   # PostgreSQL: nothing was notified, so no query at all
        now = store.live_version(session_id)
        st.session_state[LIVE_SEEN] = (session_id, seen[1], heard, now_s if due else seen[3])
        if now != seen[1]:
            st.rerun(scope="app")

    tick()


def _seat_tick(session_id: int, seat) -> None:
    """A candidate's page: beat every HEARTBEAT_S (present means seen lately), and redraw the room's part if a
    move was missed. Where the process's listener reruns the pages of a room itself (PostgreSQL), this is only
    the fallback and ticks slowly; on DuckDB it is how a page learns of a move, every POLL_S."""
    store = get_store()
    watch = _watch(store.path)
    every = PUSHED_POLL_S if watch.pushes else POLL_S

    @st.fragment(run_every=every)
    def tick() -> None:
        drew = st.session_state.get(LIVE_DREW)
        if drew is None or drew[0] != session_id:
            return
        now_s = store.clock()
        if now_s - st.session_state.get(LIVE_BEAT, float("-inf")) >= HEARTBEAT_S - every / 2:
            st.session_state[LIVE_BEAT] = now_s   # the tick nearest HEARTBEAT_S after the last beat
            store.live_heartbeat(session_id, seat.candidate_id)
        step = _room_version(store, session_id)[0]
        if step != drew[1]:   # the room moved and this page's part did not redraw (yet)
            asked = st.session_state.get(LIVE_ASKED)
            st.session_state[LIVE_ASKED] = (session_id, step)
            if drew[2] is None or asked == (session_id, step) or not fragment_push.rerun(drew[2]):
                st.rerun(scope="app")   # no part to rerun, or asking for it once already did not redraw it

    tick()


def _drill_title(drill_id: str) -> str:
    drills = get_catalogue().drills
    return drills[drill_id].drill.title if drill_id in drills else drill_id


def _loaded(session: LiveSession):
    return get_catalogue().drills[session.drill_id]


# -- candidates ------------------------------------------------------------------------------------------------
def _anonymous_seat_candidate(store) -> Candidate | None:
    """Without a provider: a handle in the class's cohort, proven with its resume code as on the catalogue."""
    proven = st.session_state.get(LIVE_CANDIDATE)
    if isinstance(proven, Candidate):
        return proven
    slot = st.empty()   # the form goes once joined: the room's runs that follow redraw only the room's part
    with slot.container():
        st.markdown("Type your handle and your class's cohort code to join its live session.")
        with st.form("live_join", enter_to_submit=True):
            cols = st.columns([2, 1, 1])
            handle = cols[0].text_input("Your handle", max_chars=40, key=LIVE_HANDLE)
            cohort = cols[1].text_input("Cohort code", max_chars=40, key=LIVE_COHORT)
            code = cols[2].text_input("Resume code (handle used before)", type="password", max_chars=20,
                                      key=LIVE_CODE)
            go = st.form_submit_button("Join the room", type="primary")
    if not go:
        return None
    if not (cohort or "").strip():
        st.error("Type your class's cohort code: a live session belongs to a class.", icon="⚠️")
        return None
    try:
        candidate, new_code = anonymous_candidate(store, Visitor(None, cohort, handle, code))
    except (InputError, AccessRefused, Throttled) as problem:
        st.error(str(problem), icon="⚠️")
        return None
    st.session_state[LIVE_CANDIDATE] = candidate
    slot.empty()
    if new_code:
        st.session_state[LIVE_NEW_CODE] = (candidate.handle, new_code)
    return candidate


def _account_seat_candidate(store) -> Candidate | None:
    account = account_or_sign_in(store, "Sign in to join your class's live session.", key=keys.JOIN_SIGN_IN)
    if account is None:
        return None
    classes = dict(store.account_cohorts(account.id))
    if not classes:
        st.info("You have not joined a class yet. Open your instructor's join link first.", icon="🏫")
        return None
    cohort = st.selectbox("Class", list(classes), key=LIVE_CLASS,
                          format_func=lambda c: f"{(store.class_info(c).title if store.class_info(c) else c)} "
                                                f"— as {classes[c]}")
    return store.account_candidate(account, cohort)


def render_candidate(store) -> None:
    candidate = _account_seat_candidate(store) if sign_in_configured() else _anonymous_seat_candidate(store)
    if candidate is None:
        return
    issued = st.session_state.get(LIVE_NEW_CODE)
    if issued and issued[0] == candidate.handle:
        st.success(f"Your resume code for “{escape_markdown(issued[0])}” is **{issued[1]}**. Note it: it is the only "
                   "way to use this handle again.", icon="🔑")
    sessions = store.live_sessions(candidate.cohort)
    if not sessions:
        last = store.live_sessions(candidate.cohort, running=False)[:1]
        seat = next((s for s in store.live_seats(last[0].id) if s.candidate_id == candidate.id), None) if last else None
        if seat is not None:   # the session this candidate sat in has just ended: where their results are
            _room(store, last[0], seat)
        st.info("No live session is running in your class yet. This page joins it as soon as your instructor "
                "starts one.", icon="⏳")
        _wait_for_a_session(candidate.cohort)
        return
    session = sessions[0]
    loaded = _loaded(session)
    seat = store.live_join(session.id, candidate, loaded.drill.time_box_min * 60)
    _room(store, session, seat)


def _wait_for_a_session(cohort: str) -> None:
    @st.fragment(run_every=WAITING_POLL_S)
    def tick() -> None:
        if get_store().live_sessions(cohort):
            st.rerun(scope="app")

    tick()


def _question_of(loaded, session: LiveSession):
    return loaded.drill.question(session.question_id) if session.question_id else None


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
    drawn = _pages(store.path).drawing(session_id, page, lambda: _room_version(store, session_id))
    last = st.session_state.get(LIVE_DREW)
    if last is None or last[0] != session_id:
        st.session_state[LIVE_DREW] = (session_id, None, page)   # the tick's to redraw until a draw completes
    _draw_seat_part(store, session_id, seat, drawn)
    # Only a draw that ran to its end counts as drawn: a run cut short leaves the step unseen, so the page's
    # tick redraws the part instead of taking a half-drawn room for the current one.
    st.session_state[LIVE_DREW] = (session_id, drawn[0], page)


def _draw_seat_part(store, session_id: int, seat, drawn: tuple) -> None:
    session = _session_at(store, session_id, drawn[0])   # as of the step drawn: a later move reruns the part
    if session.state == ENDED and fragment_run():
        st.rerun(scope="app")   # the page around the room changes too (where to wait for the next session)
    loaded = _loaded(session)
    st.caption(f"Live: {escape_markdown(loaded.drill.title)} · you are "
               f"{escape_markdown(seat.handle)} · {drawn[1]} in the room")
    _scenario_link(session)
    _late_locks(loaded, session)
    if session.state == ENDED:
        st.success("The session has ended. Your answers are an attempt of your class, with its results.", icon="🏁")
        st.page_link("pages/results.py", label="See your results", icon="📊",
                     query_params={keys.ATTEMPT_TOKEN: store.attempt_by_id(seat.attempt_id).token})
        return
    if session.state == WAITING:
        st.info("You are in the waiting room. The first question opens when your instructor opens it.", icon="⏳")
        return
    question = _question_of(loaded, session)
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
    if shared:
        shared.draw(question)
    elif question.id in view.answers:   # never the form: the question is closed
        render_question(shown, question, part.id)
    else:
        st.caption(CLOSED_UNANSWERED)
    _room_distribution(store, session, loaded, question, own_attempt=seat.attempt_id, present=drawn[1],
                       footer="" if revealed else "The worked answer opens for everyone when your instructor "
                                                  "reveals it.")
    if revealed:
        _worked_answer(shown, loaded, question)


@dataclass(frozen=True)
class ClosedSeat:
    """A seat's own part of a closed question, drawn from the room's report the process shares (_closed_report)
    instead of the seat's own reads: a closed question takes no more lock-ins, so its answer there is final."""
    loaded: LoadedDrill   # the seat's drill in its variant and its simulations' runs, as AttemptView.load
    sim_values: SimTruths   # builds them (here the report's grader's, so the runs are once per process)
    answer: LockedAnswer | None   # the seat's answer to the closed question, None if it locked none in time

    text = AttemptView.text   # a drill text in the seat's variant: the view's one rule (no model run unless read)

    def draw(self, question) -> None:
        """The locked answer as render_question shows it once locked (the prompt, then the guess), in one block."""
        if self.answer is None:
            st.caption(CLOSED_UNANSWERED)
            return
        with st.container(border=True):
            st.markdown(f"**{self.text(question.prompt)}**\n\n{locked_line(question, self.answer, self.text)}")


def _closed_seat(store, session: LiveSession, loaded, question, seat, *, present: int) -> ClosedSeat | None:
    """The seat's closed question from the shared report when it draws as a plain locked line (a number without
    a simulation, or a choice; locked without hints, not skipped), else None: the page reads its own view."""
    plain = isinstance(question, ChoiceQuestion) or (isinstance(question, NumericQuestion) and not question.sim)
    if session.state != CLOSED or not plain:
        return None
    report = _closed_report(store, session, present, question, loaded)
    grader = report.graders.get(seat.attempt_id)
    answer = live.counted(report.answers, seat.attempt_id, question.id, report.until)
    if grader is None or (answer is not None and (answer.skipped or answer.hint_cost)):
        return None
    return ClosedSeat(grader.loaded, grader.sim_values, answer)


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
                     icon="🔒")


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


def _scenario_link(session: LiveSession) -> None:
    if session.scenario in SCENARIO_TITLES:
        st.info(f"Your instructor injected a break into the platform simulation: "
                f"{SCENARIO_TITLES[session.scenario]}.", icon="💥")
        st.page_link("pages/sim_platform.py", label="Open the simulation run", icon="🏭",
                     query_params={**platform_query(session.scenario, {}), ROOM_PARAM: str(session.id)})


def _may_follow(store, session: LiveSession) -> bool:
    """A room's link (a new tab) is followed only for a signed-in seat of it, or an instructor of its class: an
    id typed into the URL shows nothing of another class's room."""
    account = signed_in_account(store)
    if account is None:
        return False
    if store.live_account_seated(session.id, account.id):
        return True
    instructor = signed_in_instructor(store)
    return instructor is not None and session.cohort in {c.cohort for c in store.classes_for(instructor.email)}


def follow_the_room() -> None:
    """On the platform sim page: if this browser sits in a live room (or came by the room's link), switch the
    page to the break its instructor injects, by itself. Call before the scenario picker is drawn.

    Each injection is followed once, so a candidate may still pick another scenario until the next one."""
    store = get_store()
    room = st.session_state.get(LIVE_ROOM)
    if room is None and str(st.query_params.get(ROOM_PARAM, "")).isdigit():
        linked = store.live_session(int(st.query_params[ROOM_PARAM]))
        if linked is None or not _may_follow(store, linked):
            st.caption("This link follows a live room. Open it from the room's page, or sign in with the account "
                       "that holds a seat there, and the simulation will follow the room.")
            return
        room = st.session_state[LIVE_ROOM] = linked.id
    if room is None:
        return
    session = store.live_session(room)
    if session is None or session.state == ENDED:
        return
    if session.scenario in SCENARIO_TITLES and st.session_state.get(LIVE_SIM_FOLLOWED) != (room, session.scenario):
        st.session_state[LIVE_SIM_FOLLOWED] = (room, session.scenario)
        st.session_state[keys.PLATFORM_SCENARIO] = session.scenario
    if session.scenario in SCENARIO_TITLES:
        st.info(f"Following your live room: your instructor injected {SCENARIO_TITLES[session.scenario]}.", icon="💥")
    watch = _watch(store.path)
    heard = watch.version(room)

    @st.fragment(run_every=POLL_S)
    def tick() -> None:
        nonlocal heard
        now = watch.version(room)
        if now == heard:
            return
        heard = now
        latest = store.live_session(room)
        if latest is not None and latest.scenario != session.scenario:
            st.rerun(scope="app")

    tick()


def _graders(store, session: LiveSession, seats, loaded) -> dict[int, live.Grader]:
    """Each seat graded in its own attempt's variant; the class's attempts read in one query, a grader per variant.
    A variant's simulations run only if a question graded needs one (SimTruths), once per process (cached)."""
    variants = {a.id: a.variant for a in store.attempts(cohort=session.cohort, drill_id=session.drill_id)}
    by_variant: dict[int, live.Grader] = {}
    for variant in {variants.get(s.attempt_id, session.variant) for s in seats}:
        mine = in_variant(loaded, variant)
        by_variant[variant] = live.Grader(mine, SimTruths(mine))
    return {s.attempt_id: by_variant[variants.get(s.attempt_id, session.variant)] for s in seats}


def _read_room(store, session: LiveSession, loaded) -> tuple:
    """(seats, answers, steps, graders): what the room's reports are made of, read from the store."""
    seats = store.live_seats(session.id)
    return seats, store.live_answers(session.id), store.live_steps(session.id), _graders(store, session, seats, loaded)


@dataclass(frozen=True)
class RoomReport:
    """What the room shows of one question, for nobody in particular (live.for_viewer marks a viewer's own)."""
    room: live.NumericRoom | live.ChoiceRoom | None   # None for a notes question
    answers: dict   # attempt id -> question id -> answer, as read
    until: float | None   # the question's close: later lock-ins are left out
    strip: Strip | None   # a numeric question's strip, shared by every page
    graders: dict   # attempt id -> its live.Grader (the drill in its variant), for each seat read
    notes: tuple[int, int] = (0, 0)   # a notes question: (seats that wrote notes, seats)


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


def _session_at(store, session_id: int, step: int) -> LiveSession | None:
    """The session's row as of its latest step `step`, read once per process. Every move (an injection too) is
    a new step and the rest of the row never changes, so a step fixes the row: after a move the room's pages
    share one read. A read that finds a newer step (a move meanwhile) is returned, not kept under `step`."""
    return _SHARED.get(("session", store.path, session_id, step), lambda: store.live_session(session_id),
                       keep=lambda session: session.version == step)


def _closed_report(store, session: LiveSession, present: int, question, loaded) -> RoomReport:
    """_report of a closed step, once per process: after a Close every page of the room draws the same answers
    at once, and a closed question takes no more lock-ins (LiveClosed), so one read, one grading and one strip
    serve them all; each page marks its own guess. Read-only for its callers. `present` keys a late join (the
    room's count changes). The first page builds it while the others wait for it, not build it again."""
    return _SHARED.get(("closed", store.path, session.id, session.version, present, question.id),
                       lambda: _report(question, session, _read_room(store, session, loaded), closed=True))


def _room_distribution(store, session: LiveSession, loaded, question, *, own_attempt: int | None,
                       present: int, footer: str = "") -> None:
    """The room's locked answers to `question`: as they stand now while it is open, as of its close after.

    The title, the counts and `footer` are one element and the chart another: after a Close every page of the
    room draws this at once, and each element is a message the server builds and sends to every page."""
    closed = session.state != OPEN
    if closed:
        report = _closed_report(store, session, present, question, loaded)
    else:
        report = _report(question, session, _read_room(store, session, loaded), closed=False)
    room = live.for_viewer(report.room, report.answers, own_attempt, until=report.until) if report.room else None
    chart = None
    if isinstance(room, live.NumericRoom):
        hits, ranges = room.ranges_held
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
    st.markdown("  \n".join(["**The room's answers**", f":gray[{counts}]"] + ([f":gray[{footer}]"] if footer else [])))
    if chart is not None:
        st.plotly_chart(chart, key=_chart_key(question.id), width="stretch")


# -- the instructor's console ----------------------------------------------------------------------------------
def _drill_choices() -> dict[str, str]:
    """Every whole drill and each of its single breaks: id -> label."""
    drills = get_catalogue().drills
    out = {}
    for drill_id in drills:
        title = drills[drill_id].drill.title
        out[drill_id] = f"{title} (whole drill)"
        for scope in drills.offers(drill_id)[0]:
            if scope.id != "essentials":
                out[f"{drill_id}~{scope.id}"] = f"{title} — {scope.label}"
    return out


def render_console(store) -> None:
    instructor = sign_in(store)
    if instructor is None:
        return
    classes = store.classes_for(instructor.email)
    if not classes:
        st.info("You have no classes yet. Make one on the Scoreboard page; its members can then join a live "
                "session here.", icon="🏫")
        return
    titles = {c.cohort: c.title for c in classes}
    cohort = st.selectbox("Class", list(titles), format_func=lambda c: f"{titles[c]} ({c})",
                          key=LIVE_CONSOLE_CLASS)
    running = store.live_sessions(cohort)
    if not running:
        choices = _drill_choices()
        with st.form("live_start"):
            drill_id = st.selectbox("Run live", list(choices), format_func=choices.get, key=LIVE_DRILL)
            go = st.form_submit_button("Start the live session", type="primary")
        if go:
            store.start_live_session(cohort, drill_id, instructor.name)
            st.rerun()
        return
    _console(store, running[0], instructor.name)


def _press(store, session: LiveSession, action: str, actor: str) -> None:
    # The picked scenario as of the press (read here, not bound at drawing time: a pick and a press can
    # reach the server in one run).
    scenario = st.session_state.get(LIVE_SCENARIO) if action == INJECT else None
    try:
        store.live_move(session.id, action, seen_version=session.version,
                        questions=live.questions_in_order(_loaded(session)), actor=actor, scenario=scenario)
    except LiveRefused as problem:
        st.session_state[LIVE_NOTE] = str(problem)


def _console(store, session: LiveSession, actor: str) -> None:
    heard = _heard(session.id)
    drawn = store.live_version(session.id)
    session = store.live_session(session.id)
    loaded = _loaded(session)
    order = live.questions_in_order(loaded)
    seats = store.live_seats(session.id)
    now = store.clock()
    here = [s for s in seats if s.present(now)]
    st.subheader(f"Live: {_drill_title(session.drill_id)}")
    _follow(session.id, drawn, heard)
    if session.state == OPEN and drawn[1] and drawn[1] == drawn[2] and store.live_locked(session.id, notify=False):
        st.rerun()   # the last seat still missing left the room: everyone present has locked in
    note = st.session_state.pop(LIVE_NOTE, None)
    if note:
        st.warning(escape_markdown(note), icon="⚠️")
    steps = store.live_steps(session.id)
    cols = st.columns([1, 1, 1, 1.3])
    with cols[3]:
        room_clock(store, loaded, steps)   # the instructor's clock: the room keeps it, seats have none
    cols[0].metric("In the room", len(here), help=f"{len(seats)} joined; present means their page was seen in "
                                                    f"the last {PRESENT_S:.0f} s")
    # A quarter of the console's width: "question 8 of 8" was cut to "question 8 …" beside the clock.
    cols[1].metric("Question", "not yet" if session.state == WAITING else f"{session.step_no + 1} of {len(order)}")
    state_words = {WAITING: "waiting", OPEN: "open", CLOSED: "closed" + (" (all locked in)" if session.reason else ""),
                   REVEALED: "answer revealed", ENDED: "ended"}
    cols[2].metric("Question is", state_words[session.state])
    with st.expander(f"Who is here ({len(here)})"):
        st.dataframe({"name": [s.handle for s in seats],   # user text: a table, never HTML
                      "present": ["here" if s.present(now) else "away" for s in seats]}, hide_index=True)
    with st.container(horizontal=True):
        last = session.step_no + 1 >= len(order)
        st.button("Open the first question" if session.state == WAITING else "Next question", key=_move_key(NEXT),
                  type="primary", disabled=session.state in (OPEN, ENDED) or last,
                  on_click=_press, args=(store, session, NEXT, actor))
        st.button("Close the question", key=_move_key(CLOSE), disabled=session.state != OPEN,
                  on_click=_press, args=(store, session, CLOSE, actor))
        st.button("Reveal the answer", key=_move_key(REVEAL), disabled=session.state != CLOSED,
                  on_click=_press, args=(store, session, REVEAL, actor))
        st.button("End the session", key=_move_key(END), disabled=session.state == ENDED,
                  on_click=_press, args=(store, session, END, actor))
    with st.container(horizontal=True, vertical_alignment="bottom"):
        st.selectbox("Inject a break into the platform simulation", list(SCENARIO_TITLES),
                                format_func=SCENARIO_TITLES.get, key=LIVE_SCENARIO)
        st.button("Inject for the room", key=_move_key(INJECT), disabled=session.state == ENDED,
                  on_click=_press, args=(store, session, INJECT, actor))
    _scenario_link(session)
    question = _question_of(loaded, session)
    if question is not None and session.state != ENDED:
        st.markdown(f"**{loaded.text(question.prompt)}**")
        if session.state == OPEN:
            st.caption(f"{drawn[2]} of {drawn[1]} present locked in")
        _room_distribution(store, session, loaded, question, own_attempt=None, present=drawn[1])
    board = live.scoreboard(loaded, steps, seats, _graders(store, session, seats, loaded),
                            store.live_answers(session.id))
    if board and board[0].questions:
        st.markdown("**Scoreboard** — accuracy over the closed questions, then how often ranges held; never speed")
        st.dataframe({"rank": [s.rank for s in board], "name": [s.handle for s in board],
                      "accuracy": [f"{s.accuracy:.0%}" for s in board],
                      "ranges held": ["—" if s.held is None else f"{s.hits} of {s.ranges}" for s in board]},
                     hide_index=True)


def render_live_page() -> None:
    store = get_store()
    instructor = sign_in_configured() and signed_in_instructor(store) is not None
    role = st.segmented_control("You are here to", [TAKE_PART, RUN_ROOM], key=LIVE_ROLE,
                                default=RUN_ROOM if instructor else TAKE_PART)
    if role == RUN_ROOM:
        render_console(store)
    else:
        render_candidate(store)
