"""Record a simulation page opened while the candidate's attempt still has questions that page answers.

Exploring the model first is allowed, but the instructor's timeline flags it, like a reveal before lock-in.
"""
from __future__ import annotations

import streamlit as st

from drills.disclosure import open_questions_answered_by
from drills.records import EventKind
from sims.presets import PRESETS
from ui import keys
from ui.context import current_token, get_catalogue, get_store
from ui.sim_embed import page_models

_PRESET_MODELS = {preset_id: preset.model for preset_id, preset in PRESETS.items()}


def record_sim_visit(url_path: str) -> None:
    """Called by the frame with the page about to run; cheap and silent on every page that is not a sim."""
    models = page_models(url_path)
    token = current_token() if models else None   # the token only: a sim page's URL never gains ?attempt=
    if not token:
        return
    store = get_store()
    attempt = store.attempt_by_token(token)
    loaded = get_catalogue().drills.get(attempt.drill_id) if attempt is not None else None
    if loaded is None or attempt.finished_at is not None:
        return
    questions = open_questions_answered_by(loaded.drill, models, store.answers(attempt.id), _PRESET_MODELS)
    seen = st.session_state.setdefault(keys.SIM_VISITS, set())
    visit = (attempt.id, url_path, tuple(questions))
    if not questions or visit in seen:    # once per page and set of open questions, not on every rerun
        return
    store.log_event(attempt.id, EventKind.SIM_OPENED, None, {"page": url_path, "questions": questions})
    seen.add(visit)
