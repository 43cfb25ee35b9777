"""Record a simulation page opened while the candidate's attempt still has questions that page answers.

Exploring the model first is allowed, but the instructor's timeline flags it, like a reveal before lock-in.
"""
from __future__ import annotations

import streamlit as st

from drills.disclosure import open_questions_answered_by
from drills.records import EventKind
from sims.presets import PRESETS
from ui import keys
from drills.store.accounts import account_learner
from ui.context import current_token, get_catalogue, get_store, store_fault
from ui.identity import signed_in_account
from ui.sims.embed import page_models

K = keys.register("sim_visits", __name__)   # this module's keys (ui.keys holds only shared ones)
VISITS = K.kept("sim_visits")            # sim pages already recorded as opened during this session's attempt
GRADED_OPEN = K("graded_open")           # this run's open questions graded against the page's models

_PRESET_MODELS = {preset_id: preset.model for preset_id, preset in PRESETS.items()}


def _attempts_to_flag(store, models) -> list:
    """The open attempts a sim visit counts against: every open attempt of the signed-in account, whichever tab
    or session it was started in; without sign-in only the attempt this tab knows by its token."""
    account = signed_in_account(store)
    if account is not None:
        return [a for a in store.learner_attempts(account_learner(account)) if a.finished_at is None]
    token = current_token()   # the token only: a sim page's URL never gains ?attempt=
    attempt = store.attempt_by_token(token) if token else None
    return [attempt] if attempt is not None and attempt.finished_at is None else []


def record_sim_visit(url_path: str) -> None:
    """Called by the frame with the page about to run; cheap and silent on every page that is not a sim.

    It also notes, for this run, which open questions grade against this page's models
    (``graded_questions_open``): while there are any, the page keeps the graded seed closed.
    """
    st.session_state[GRADED_OPEN] = ()
    models = page_models(url_path)
    if not models or store_fault() is not None:
        return
    store = get_store()
    seen = st.session_state.setdefault(VISITS, set())
    graded: list[str] = []
    for attempt in _attempts_to_flag(store, models):
        loaded = get_catalogue().drills.get(attempt.drill_id)
        if loaded is None:
            continue
        questions = open_questions_answered_by(loaded.drill, models, store.answers(attempt.id), _PRESET_MODELS)
        graded.extend(questions)
        st.session_state[GRADED_OPEN] = tuple(graded)
        visit = (attempt.id, url_path, tuple(questions))
        if not questions or visit in seen:    # once per page and set of open questions, not on every rerun
            continue
        store.log_event(attempt.id, EventKind.SIM_OPENED, None, {"page": url_path, "questions": questions})
        seen.add(visit)


def graded_questions_open() -> tuple[str, ...]:
    """The open questions this run's sim page would answer (set by the frame's ``record_sim_visit``)."""
    return st.session_state.get(GRADED_OPEN, ())


def attribution_note(url_path: str) -> str | None:
    """What a sim page says when its visits cannot be put on anyone's timeline (nobody signed in, no attempt
    in this tab), so a candidate is not misled into thinking it is private or that it is recorded."""
    if not page_models(url_path) or store_fault() is not None:
        return None
    if signed_in_account(get_store()) is not None or current_token():
        return None
    return ("Not signed in, and no drill open in this tab: a visit here cannot be attributed to anyone, so it is "
            "not recorded. With sign-in, every simulation you open while your questions are open goes on your "
            "attempt's timeline, in any tab.")
