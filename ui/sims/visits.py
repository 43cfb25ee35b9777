"""Record a simulation page opened while the candidate's attempt still has questions that page answers.

Exploring the model first is allowed, but the instructor's timeline flags it, like a reveal before lock-in.
"""
from __future__ import annotations

import streamlit as st

from drills.disclosure import graded_seed_of, open_questions_answered_by, question_seed
from drills.records import EventKind
from sims.presets import PRESETS
from ui import keys
from drills.store.accounts import Learner, account_learner, anonymous_learner
from ui.context import current_token, get_catalogue, get_store, store_fault
from ui.identity import signed_in_account
from ui.sims.embed import page_models

K = keys.register("sim_visits", __name__)   # this module's keys (ui.keys holds only shared ones)
VISITS = K.kept("sim_visits")            # sim pages already recorded as opened during this session's attempt
GRADED_OPEN = K("graded_open")           # this run's open questions graded against the page's models
CLOSED_SEEDS = K("closed_seeds")         # the seeds of their graded runs: this page will not run them

_PRESET_MODELS = {preset_id: preset.model for preset_id, preset in PRESETS.items()}


def _learners(store) -> list[Learner]:
    """Whoever this session is: the signed-in account, a handle proven with its resume code, and the owner of
    each attempt this session holds (its token in the URL, or one started or resumed in this session)."""
    learners = []
    account = signed_in_account(store)
    if account is not None:
        learners.append(account_learner(account))
    proven = st.session_state.get(keys.HISTORY_HANDLE)
    if isinstance(proven, Learner):
        learners.append(proven)
    for token in dict.fromkeys([current_token(), *st.session_state.get(keys.MY_ATTEMPTS, ())]):
        attempt = store.attempt_by_token(token) if token else None
        if attempt is not None:
            learners.append(Learner(attempt.account_id, None, "", "") if attempt.account_id is not None
                            else anonymous_learner(attempt.handle, attempt.cohort))
    return list(dict.fromkeys(learners))


def _attempts_to_flag(store, models) -> list:
    """The open attempts a sim visit counts against: every open attempt of whoever this session is (``_learners``),
    whichever tab, session or browser each was started in. A stranger's session finds none of them."""
    attempts = {a.id: a for learner in _learners(store) for a in store.learner_attempts(learner)
                if a.finished_at is None}
    return list(attempts.values())


def record_sim_visit(url_path: str) -> None:
    """Called by the frame with the page about to run; cheap and silent on every page that is not a sim.

    It also notes, for this run, which open questions grade against this page's models
    (``graded_questions_open``) and the seeds of their graded runs (``closed_seeds``): the page runs none of them.
    """
    st.session_state[GRADED_OPEN] = ()
    st.session_state[CLOSED_SEEDS] = frozenset()
    models = page_models(url_path)
    if not models or store_fault() is not None:
        return
    store = get_store()
    seen = st.session_state.setdefault(VISITS, set())
    graded: list[str] = []
    closed: set[int] = set()
    for attempt in _attempts_to_flag(store, models):
        loaded = get_catalogue().drills.get(attempt.drill_id)
        if loaded is None:
            continue
        questions = open_questions_answered_by(loaded.drill, models, store.answers(attempt.id), _PRESET_MODELS)
        graded.extend(questions)
        if questions:
            seed = graded_seed_of(store, attempt, loaded.drill)
            closed.update(question_seed(seed, question_id) for question_id in questions)
        st.session_state[GRADED_OPEN] = tuple(graded)
        st.session_state[CLOSED_SEEDS] = frozenset(closed)
        visit = (attempt.id, url_path, tuple(questions))
        if not questions or visit in seen:    # once per page and set of open questions, not on every rerun
            continue
        store.log_event(attempt.id, EventKind.SIM_OPENED, None, {"page": url_path, "questions": questions})
        seen.add(visit)


def graded_questions_open() -> tuple[str, ...]:
    """The open questions this run's sim page would answer (set by the frame's ``record_sim_visit``)."""
    return st.session_state.get(GRADED_OPEN, ())


def closed_seeds() -> frozenset[int]:
    """The seeds of those questions' graded runs: this run's sim page runs none of them."""
    return st.session_state.get(CLOSED_SEEDS, frozenset())


def attribution_note(url_path: str) -> str | None:
    """What a sim page says when its visits cannot be put on anyone's timeline (nobody signed in, no attempt
    in this tab), so a candidate is not misled into thinking it is private or that it is recorded."""
    if not page_models(url_path) or store_fault() is not None:
        return None
    if signed_in_account(get_store()) is not None or current_token() or st.session_state.get(keys.HISTORY_HANDLE):
        return None
    return ("Not signed in, and no drill open in this tab: a visit here cannot be attributed to anyone, so it is "
            "not recorded. With sign-in, every simulation you open while your questions are open goes on your "
            "attempt's timeline, in any tab. Each drill question is graded against a run of its own, whose seed "
            "shows only once it is locked in, so no seed here is known to be one.")
