"""Process-wide resources (the store, the drill catalogue) and the current attempt.

One DuckDB connection per process via st.cache_resource; the attempt comes from the URL.
"""
from __future__ import annotations

import time

import streamlit as st

from drills.loader import Catalogue, LoadedDrill, content_dir, load_catalogue
from drills.schema import Drill
from drills.store import MIGRATIONS, Attempt, AttemptStore, database_path
from ui import keys


@st.cache_resource(show_spinner=False)
def _store_for(path: str, schema_version: int) -> AttemptStore:
    return AttemptStore(path)


def get_store() -> AttemptStore:
    """The process's one store; the path is read from FAULTLINES_DB each time so tests can switch it.

    The latest migration number is part of the key, so a dev server that reloads drills/store.py
    with a new migration opens (and migrates) a fresh store instead of querying missing tables.
    """
    return _store_for(database_path(), MIGRATIONS[-1][0])


@st.cache_resource(show_spinner=False, max_entries=4)
def _catalogue_for(signature: tuple) -> Catalogue:
    return load_catalogue()


def get_catalogue() -> Catalogue:
    """The drills, reloaded when a content file changes (authors see edits without a restart).

    The schema class is part of the key too: when the dev server reloads drills/schema.py,
    drills built from the old classes would no longer pass isinstance checks.
    """
    files = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(content_dir().glob("*.yaml")))
    return _catalogue_for((files, id(Drill)))


def now() -> float:
    return time.time()


def current_token() -> str | None:
    """The attempt token from the URL, falling back to the one this browser session last used."""
    token = st.query_params.get(keys.ATTEMPT_TOKEN)
    if token:
        st.session_state[keys.ATTEMPT_TOKEN] = token
        return token
    return st.session_state.get(keys.ATTEMPT_TOKEN)


def current_attempt() -> tuple[Attempt, LoadedDrill] | None:
    token = current_token()
    if not token:
        return None
    attempt = get_store().attempt_by_token(token)
    if attempt is None:
        return None
    loaded = get_catalogue().drills.get(attempt.drill_id)
    if loaded is None:
        return None
    if st.query_params.get(keys.ATTEMPT_TOKEN) != token:
        st.query_params[keys.ATTEMPT_TOKEN] = token
    return attempt, loaded


def require_attempt(title: str, explanation: str) -> tuple[Attempt, LoadedDrill]:
    """The current attempt, or an explanation and a way back to the catalogue (stops the page)."""
    found = current_attempt()
    if found is None:
        st.title(title)
        st.info(explanation)
        st.page_link("pages/home.py", label="Go to the catalogue", icon="🏠")
        st.stop()
    return found


def remember_attempt(token: str) -> None:
    """Keep the token in the URL and in this session's list of attempts to resume."""
    st.session_state[keys.ATTEMPT_TOKEN] = token
    mine = st.session_state.setdefault(keys.MY_ATTEMPTS, [])
    if token not in mine:
        mine.append(token)
    st.query_params[keys.ATTEMPT_TOKEN] = token
