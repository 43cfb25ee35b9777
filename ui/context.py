"""Process-wide resources (the store, the drill catalogue) and the current attempt.

One store per process via st.cache_resource (DuckDB file or PostgreSQL); the attempt comes from the URL.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import replace

import streamlit as st

from drills.store.accounts import may_open
from drills.backends import open_store
from drills.loader import Catalogue, LoadedDrill, content_dir, load_catalogue
from drills.schema import Drill
from drills.scope import ScopedDrills
from drills.store import (
    MIGRATIONS,
    Attempt,
    StoreCore,
    database_path,
    is_postgres_target,
)
from drills.variants import in_variant
from ui import keys, store_watch
from ui.faults import StoreFault, diagnose, is_store_fault, outage_fault, outage_span
from ui.identity import signed_in_account
from ui.runtime import fragment_push, seam

K = keys.register("context", __name__)   # this module's keys (ui.keys holds only shared ones)
ATTEMPT_READS = K.kept("attempt_reads")          # this run's reads of attempts by token (attempt_this_run)
STORE_OUTAGE_FRESH = K.kept("store_outage_fresh")  # the store failed in this very run or the one before: no second ask


@st.cache_resource(show_spinner=False)
def _store_for(target: str, schema_version: int) -> StoreCore:
    store = open_store(target)
    if is_postgres_target(target):
        store_watch.start(store)   # a server that stops answering is told to every open page (ui.store_watch)
    return store


# The stores opened so far, by the same key: a page run asks for the store a dozen times or more, and a dict
# read costs a microsecond where st.cache_resource's lookup (it hashes the call's arguments) costs ~150.
_OPENED: dict[tuple[str, int], StoreCore] = {}


def _store_key() -> tuple[str, int]:
    return database_path(), MIGRATIONS[-1][0]


def get_store() -> StoreCore:
    """The process's one store; the target is read from FAULTLINES_DB each time so tests can switch it.

    The latest migration number is part of the key, so a dev server that reloads drills/store/
    with a new migration opens (and migrates) a fresh store instead of querying missing tables.
    """
    key = _store_key()
    store = _OPENED.get(key)
    if store is None:
        store = _OPENED[key] = _store_for(*key)
    return store


def _forget_stores() -> None:
    """Drop the open stores: the next get_store() opens afresh."""
    _OPENED.clear()
    _store_for.clear()
    store_watch.stop_all()


def _store_watch() -> store_watch.StoreWatch | None:
    """The watch on this process's open store (None before it opened, and on DuckDB)."""
    store = _OPENED.get(_store_key())
    return None if store is None else store_watch.watching(store)


def known_down() -> BaseException | None:
    """Why the process's watch last failed to reach the store, while it still does not answer (else None)."""
    watch = _store_watch()
    return None if watch is None else watch.down


def fail_fast_when_down() -> None:
    """Raise a store fault at once while the watch knows the store is not answering: a press made then comes
    back "not locked in" straight away rather than after its call's whole deadline."""
    down = known_down()
    if down is not None:
        error = type(down)(str(down))   # a fresh one: the watch's is shared by every session's thread
        error.call_began = getattr(down, "call_began", None)
        raise error


def watch_this_page() -> None:
    """Have the server rerun the fragment running now when the store stops answering (ui.store_watch): its
    run then finds the store known down and draws the outage page, though nobody pressed anything."""
    watch = _store_watch()
    if watch is not None:
        watch.watch(fragment_push.this_fragment())


def watch_until_back() -> None:
    """Have the server rerun the outage page's check running now as soon as the store answers again."""
    watch = _store_watch()
    if watch is not None:
        watch.watch(fragment_push.this_fragment(), until_back=True)


# A failure is not cached by _store_for, so every call would try to open the store again; this
# remembers the verdict for 5 s (an unreachable host can take the connect timeout to fail), and a
# fixed store is picked up by the fault page's own check (or a reload) soon after.
@st.cache_resource(show_spinner=False, ttl=5)
def _fault_for(target: str, schema_version: int) -> StoreFault | None:
    try:
        _store_for(target, schema_version)
    except Exception as error:   # any way of failing to open becomes one plain page, never a traceback
        return diagnose(target, error)
    return None


def store_fault() -> StoreFault | None:
    """Why the store cannot open (None when it is open): the frame shows it instead of pages that need it."""
    key = _store_key()
    if key in _OPENED:
        return None   # it opened in this process (as _fault_for would find), so no lookup is needed
    return _fault_for(*key)


def store_opens() -> bool:
    """Whether the store that could not open does now (the start-up fault page's check)."""
    return store_fault() is None


def store_answers() -> bool:
    """Whether the open store takes a write now (the outage page's check: a read may pass on a file that
    refuses commits).

    A DuckDB connection that a fault invalidated stays broken, so on a DuckDB fault the store is closed and
    opened afresh on the next call; a PostgreSQL pool replaces its dead connections itself.
    """
    try:
        store = get_store()
    except Exception:   # noqa: BLE001 (it cannot even open now, a file damaged since: not back yet)
        return False
    if known_down() is not None:
        return False   # the watch's last probe went unanswered: asking again would only wait out a deadline
    try:
        store.check_writes()
    except Exception as error:
        if not is_store_fault(error):
            raise
        if not is_postgres_target(store.path):
            _forget_stores()
            try:
                store.close()
            except Exception:   # noqa: BLE001 (a broken connection may refuse to close; it is dropped anyway)
                pass
        return False
    outage_span(store.path).over(store, now())   # the attempts that ran through the outage get its time back, once
    return True


def note_store_outage(error: BaseException, refused: str | None = None) -> None:
    """Remember for this session that a store call failed: the frame shows the outage page until it answers.

    `refused` says what the failed call did not store (a Lock in), for that page to say so.
    """
    # From the call it held up (PostgreSQL's say when), or the last probe the store answered (ui.store_watch).
    outage_span(database_path()).began(getattr(error, "call_began", None) or now())
    st.session_state[keys.STORE_OUTAGE] = (outage_fault(database_path(), error), refused)
    st.session_state[STORE_OUTAGE_FRESH] = True   # the page drawn next need not ask again at once


def store_outage() -> tuple[StoreFault, str | None] | None:
    """The outage this session met and what it refused, if the store still does not answer (cleared once it does)."""
    outage = st.session_state.get(keys.STORE_OUTAGE)
    if outage is None:
        down = known_down()   # unasked, the watch found the store not answering: this run is the outage page
        if down is None:
            return None
        note_store_outage(down)
        return st.session_state[keys.STORE_OUTAGE]
    if not st.session_state.pop(STORE_OUTAGE_FRESH, False) and store_answers():
        del st.session_state[keys.STORE_OUTAGE]
        return None
    return outage


@contextmanager
def store_guard():
    """Page code that meets a store fault reruns as the outage page (never a traceback), as does page code
    that starts while the process's watch knows the store is not answering (it would only wait out a deadline)."""
    down = None if keys.STORE_OUTAGE in st.session_state else known_down()
    if down is not None:
        note_store_outage(down)
        st.rerun()
    try:
        yield
    except Exception as error:
        if not is_store_fault(error):
            raise
        note_store_outage(error)
        st.rerun()


@st.cache_resource(show_spinner=False, max_entries=4)
def _catalogue_for(signature: tuple) -> Catalogue:
    catalogue = load_catalogue()
    # Attempts of a single break or of the essentials path name a scoped id (one_tenant~break2).
    return replace(catalogue, drills=ScopedDrills(catalogue.drills))


CATALOGUE_RECHECK_S = 1.0   # how stale the content files' check may be: a page run asks for the catalogue often
_CHECKED: dict[tuple[str, int], tuple[float, Catalogue]] = {}


def get_catalogue() -> Catalogue:
    """The drills, reloaded when a content file changes (authors see edits without a restart, within a second).

    The schema class is part of the key too: when the dev server reloads drills/schema.py,
    drills built from the old classes would no longer pass isinstance checks. The files are looked at once a
    second at most (a glob and a stat per file, on every call, was most of the call's cost).
    """
    folder = content_dir()
    key = (str(folder), id(Drill))
    at = time.monotonic()
    checked = _CHECKED.get(key)
    if checked is not None and at - checked[0] < CATALOGUE_RECHECK_S:
        return checked[1]
    files = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.yaml")))
    catalogue = _catalogue_for((files, id(Drill)))
    _CHECKED[key] = (at, catalogue)
    return catalogue


def now() -> float:
    return time.time()


def current_token() -> str | None:
    """The attempt token from the URL, falling back to the one this browser session last used.

    None while the store cannot open: no attempt can be read, so nothing asks the store for one.
    """
    if store_fault() is not None:
        return None
    token = st.query_params.get(keys.ATTEMPT_TOKEN)
    if token:
        st.session_state[keys.ATTEMPT_TOKEN] = token
        return token
    return st.session_state.get(keys.ATTEMPT_TOKEN)


def fragment_run() -> bool:
    """Whether this script run is a fragment's own (a widget inside it fired), not the whole page's."""
    return seam.fragment_run()


def attempt_this_run(token: str) -> Attempt | None:
    """The attempt behind `token`, read once per script run: the clocks, their fragment and the page share it.

    A run is told apart by the key the seam gives for it (Streamlit's cursor table, made afresh for every run, a
    fragment's own run too), so a later run, or a fragment ticking alone, reads the store again; without one
    (plain mode, no script run) every call reads the store.
    """
    run = seam.run_key()
    if run is None:
        return get_store().attempt_by_token(token)
    kept, read = st.session_state.get(ATTEMPT_READS, (None, {}))
    if kept is not run:
        read = {}
        st.session_state[ATTEMPT_READS] = (run, read)
    if token not in read:
        read[token] = get_store().attempt_by_token(token)
    return read[token]


def current_attempt() -> tuple[Attempt, LoadedDrill] | None:
    token = current_token()
    if not token:
        return None
    attempt = attempt_this_run(token)
    if attempt is None or not may_open(attempt.account_id, viewer()):
        return None
    loaded = get_catalogue().drills.get(attempt.drill_id)
    if loaded is None:
        return None
    if st.query_params.get(keys.ATTEMPT_TOKEN) != token:
        st.query_params[keys.ATTEMPT_TOKEN] = token
    return attempt, in_variant(loaded, attempt.variant)


def require_attempt(title: str, explanation: str) -> tuple[Attempt, LoadedDrill]:
    """The current attempt, or an explanation and a way back to the catalogue (stops the page)."""
    found = current_attempt()
    if found is None:
        token = current_token()
        attempt = get_store().attempt_by_token(token) if token else None
        if attempt is not None and not may_open(attempt.account_id, viewer()):
            title, explanation = ("This attempt belongs to another account",
                                  "It was started by a signed-in account, and only that account can open it: its "
                                  "link alone is not enough. Sign in as its owner (Sign in in the sidebar), or start "
                                  "a drill of your own from the catalogue.")
        elif token and attempt is None:
            title, explanation = ("Attempt link not recognised",
                                  "No attempt matches this link. Check that it was copied whole, or open My history "
                                  "with your handle and resume code to find every attempt you made.")
        elif attempt is not None:
            title, explanation = ("This drill is no longer offered",
                                  f"The attempt belongs to “{attempt.drill_id}”, which the catalogue no longer "
                                  "lists; its answers are kept, and an instructor can still see them.")
        st.title(title)
        st.info(explanation)
        st.page_link("pages/home.py", label="Go to the catalogue", icon=":material/home:")
        st.stop()
    return found


def viewer():
    """The signed-in account looking at this page (None: nobody signed in)."""
    return signed_in_account(get_store())


def field_in_url(state_key: str, param: str, max_chars: int) -> dict:
    """Keep a text field's value in the URL, so a reload or a bookmark brings it back.

    Call before drawing the field and pass the result to it: on a new session the field starts from the URL,
    and each change is written back (an empty field drops the parameter).
    """
    if state_key not in st.session_state and st.query_params.get(param):
        st.session_state[state_key] = st.query_params[param][:max_chars]

    def to_url() -> None:
        value = (st.session_state.get(state_key) or "").strip()
        if value:
            st.query_params[param] = value
        else:
            st.query_params.pop(param, None)

    return {"key": state_key, "max_chars": max_chars, "on_change": to_url}


def remember_attempt(token: str) -> None:
    """Keep the token in the URL and in this session's list of attempts to resume."""
    st.session_state[keys.ATTEMPT_TOKEN] = token
    mine = st.session_state.setdefault(keys.MY_ATTEMPTS, [])
    if token not in mine:
        mine.append(token)
    st.query_params[keys.ATTEMPT_TOKEN] = token
