"""What to tell people when the attempt store cannot open, or fails later: one plain page, never a traceback.

diagnose() turns the exception into words (which file or server, what went wrong, what to do); pages
that need the store show that page, and the simulations and labs carry on without it. A store that fails
after start-up (is_store_fault) gives the outage page instead: answers locked before are safe, and the
page checks again by itself until the store answers. The process remembers when it first met the outage,
and once the store answers again gives the attempts that ran through it their time back (outage_span(...).over).
"""
from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import duckdb
import streamlit as st

from drills.store import DB_ENV, is_postgres_target
from ui import keys

K = keys.register("faults", __name__)
# Set by a whole run that draws a fault page, whose caller has just asked the store (or just met the fault):
# the check fragment drawn in that same run does not ask again. On a hung server each ask takes the store's
# whole deadline, and asking twice made a refused press wait 8.6 s for its page instead of 4.5.
ASKED_THIS_RUN = K("asked_this_run")


@dataclass(frozen=True)
class StoreFault:
    kind: str            # locked, corrupt, read_only, missing, unreachable, other
    where: str           # the file path, or the PostgreSQL URL without its password
    headline: str        # one sentence: what is wrong
    steps: tuple[str, ...]   # what to do, in order
    detail: str          # the first line of the underlying error, for whoever fixes it


def redact_url(url: str) -> str:
    """The URL without a password, in the user part or in a password= parameter."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name, has_password, _ = user.partition(":")
        netloc = f"{name}:***@{host}" if has_password else netloc
    query = urlencode([(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="/*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_SEVERAL_PROCESSES = ("To run several app processes on one store, use PostgreSQL "
                      "(README, \"Serving a class\").")
_OTHER_PATH = f"To use another file instead, set {DB_ENV} to its path and restart the app."


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def diagnose(target: str, error: BaseException) -> StoreFault:
    """Name the fault behind `error`, raised while opening the store at `target`."""
    detail = _first_line(error)
    if is_postgres_target(target):
        where = redact_url(target)
        detail = detail.replace(target, where)
        lowered = detail.lower()
        reached = not any(sign in lowered for sign in ("connection failed", "connection refused", "timeout",
                                                        "could not connect", "no such file", "could not translate"))
        return StoreFault(
            "other" if reached else "unreachable", where,
            "The PostgreSQL server answered but the store could not be opened there." if reached
            else "The PostgreSQL server that keeps the attempts cannot be reached.",
            ("Check that the server is running and accepts connections at this address "
             "(host, port or socket directory, database name, user).",
             f"Fix {DB_ENV} if the URL is wrong, then reload this page.",
             f"To use the embedded DuckDB file instead, unset {DB_ENV} and restart the app."),
            detail)
    lowered = detail.lower()
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        holder = re.search(r"held in (.+?) \(PID (\d+)\)", detail)
        who = f"process {holder.group(2)} ({holder.group(1)})" if holder else "another process"
        return StoreFault(
            "locked", target, f"The store file is open for writing in {who}; DuckDB lets one process write a file.",
            (f"Stop {who} (often another `streamlit run` or `python -m drills.demo` on the same file), "
             "then reload this page.", _SEVERAL_PROCESSES, _OTHER_PATH),
            detail)
    if "not a valid duckdb database" in lowered or "corrupt" in lowered or "checksum" in lowered:
        return StoreFault(
            "corrupt", target, "The store file exists but is not a readable DuckDB database (damaged or another kind of file).",
            ("Move the file aside (for example rename it to end in .broken) so a fresh store is created, "
             "or put back a copy from a backup, then reload this page.", _OTHER_PATH),
            detail)
    if isinstance(error, PermissionError) or "permission denied" in lowered or "read-only" in lowered:
        return StoreFault(
            "read_only", target, "The app may not write the store file or its directory.",
            ("Make the directory and the file writable for the user that runs the app, then reload this page.",
             _OTHER_PATH),
            detail)
    if isinstance(error, (FileNotFoundError, NotADirectoryError, FileExistsError)) or "no such file" in lowered:
        return StoreFault(
            "missing", target, "The directory for the store file does not exist and cannot be created.",
            ("Create the directory (or fix the path), then reload this page.", _OTHER_PATH),
            detail)
    return StoreFault(
        "other", target, "The attempt store could not be opened.",
        ("Read the error below; fix its cause and reload this page.", _OTHER_PATH), detail)


def show_store_fault(fault: StoreFault, *, store_back: Callable[[], bool] | None = None) -> None:
    """The whole page for a store that cannot open (no user text here: paths, URLs and our own words).

    With `store_back`, the page also checks by itself every RETRY_EVERY_S and reruns the app once it opens.
    """
    st.title("Attempts cannot be saved right now")
    st.error(fault.headline, icon=":material/dangerous:")
    st.markdown("**Store:**")
    st.code(fault.where, language=None)
    st.markdown("**What to do:**")
    st.markdown("\n".join(f"{number}. {step}" for number, step in enumerate(fault.steps, start=1)))
    st.caption("The error, for whoever looks after the server:")
    st.code(fault.detail, language=None)
    st.info("The simulations and labs in the menu do not need the store and still work.", icon=":material/science:")
    if store_back is not None:
        _check_again(store_back)


# -- a store that fails after start-up -------------------------------------------------------------------
RETRY_EVERY_S = 3.0   # how often the outage page asks the store again
_DUCKDB_FAULTS = (duckdb.IOException, duckdb.PermissionException, duckdb.FatalException, duckdb.InternalException,
                  duckdb.ConnectionException, duckdb.OutOfMemoryException)


def is_store_fault(error: BaseException) -> bool:
    """Whether `error` says the store itself is unavailable (server gone, file unwritable or damaged).

    Not a mistake in our SQL or a refusal (a finished attempt, a write conflict): those stay errors.
    """
    if isinstance(error, _DUCKDB_FAULTS):
        return True
    if isinstance(error, duckdb.TransactionException):   # one writer per file: only a commit the disk refused
        return "failed to commit" in str(error).lower()
    psycopg = sys.modules.get("psycopg")   # loaded only when the store is on PostgreSQL
    return psycopg is not None and isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError))


def outage_fault(target: str, error: BaseException) -> StoreFault:
    """The fault behind a store call that failed after the store had opened."""
    opened = diagnose(target, error)
    headline = ("The PostgreSQL server that keeps the attempts cannot be reached right now."
                if is_postgres_target(target) else "The store file cannot be written or read right now.")
    return replace(opened, kind="unreachable" if is_postgres_target(target) else opened.kind, headline=headline)


class OutageSpan:
    """When this process first met the store unreachable, until the store answers again: shared by every
    session of the process, so the outage is given back once per process (and the store, holding each attempt,
    gives nothing twice when other processes saw the same outage)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.down_at: float | None = None

    def began(self, at: float) -> None:
        with self._lock:
            if self.down_at is None:
                self.down_at = at

    def over(self, store, at: float) -> int:
        """Give the outage back (store.give_back_outage); a store that fails again keeps it for next time."""
        with self._lock:
            if self.down_at is None:
                return 0
            try:
                granted = store.give_back_outage(self.down_at, at)
            except Exception as error:
                if not is_store_fault(error):
                    raise
                return 0
            self.down_at = None
            return granted


_SPANS: dict[str, OutageSpan] = {}
_SPANS_LOCK = threading.Lock()


def outage_span(target: str) -> OutageSpan:
    """The outage span of the store at `target` in this process: one per store, since a process that switches
    stores (the tests do) must not give one store's outage back to another's attempts."""
    with _SPANS_LOCK:
        return _SPANS.setdefault(target, OutageSpan())

OUTAGE_TITLE = "Saving is paused: the attempt store is unreachable"
OUTAGE_TEXT = ("Every answer you locked in before is safe. Nothing new can be saved until the store answers again; "
               "this page checks every few seconds and brings your drill back on its own, so there is no need "
               "to reload. The time this costs you is given back to your time box once the store answers.")


def show_store_outage(fault: StoreFault, refused: str | None, *, store_back: Callable[[], bool],
                      on_check: Callable[[], None] = lambda: None) -> None:
    """The page while the store is down: one plain message, and a check every RETRY_EVERY_S that reruns the
    app once `store_back()` is true. `refused` names a Lock in this press did not store (our words only).
    `on_check()` is called in each run of the check (the store watch puts it on its list of pages to tell)."""
    st.title(OUTAGE_TITLE)
    st.warning(OUTAGE_TEXT, icon=":material/hourglass_top:")
    if refused:
        st.error(refused, icon=":material/lock:")
    st.caption(f"For whoever looks after the server: {fault.headline} Store: {fault.where}. Error: {fault.detail}")
    st.session_state[ASKED_THIS_RUN] = True   # the frame's store_outage() asked, or the fault was met, this run
    _check_again(store_back, on_check)


@st.fragment(run_every=RETRY_EVERY_S)
def _check_again(store_back: Callable[[], bool], on_check: Callable[[], None] = lambda: None) -> None:
    """Ask `store_back()` every RETRY_EVERY_S; once it is true, the whole app runs again (the page comes back)."""
    on_check()
    if not st.session_state.pop(ASKED_THIS_RUN, False) and store_back():
        st.rerun(scope="app")
    st.caption(f"Checked again at {time.strftime('%H:%M:%S', time.gmtime())} UTC: still unavailable. "
               "This page retries on its own.")
