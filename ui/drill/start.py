"""The catalogue's "who are you" and Start: a signed-in account in one of its classes, or an anonymous handle.

A handle nobody has used is claimed with a new resume code; a handle in use opens only with its code; a class
that requires sign-in takes only signed-in accounts. A join link (?join=) enrols a signed-in account in a class.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

import streamlit as st

from drills import answers as checks
from drills.disclosure import start_graded
from drills.store.accounts import Account, AccessRefused, ClassInfo, Learner, account_learner, handle_named
from drills.store.throttle import Throttled
from drills.records import Candidate
from drills.scope import scoped_id
from drills.variants import variant_for
from ui import keys
from ui.context import field_in_url, get_catalogue, remember_attempt
from ui.clients import current_client
from ui.identity import WayBack, sign_in_button, sign_in_configured, signed_in_account
from ui.safe import escape_markdown

K = keys.register("start", __name__)   # this module's keys (ui.keys holds only shared ones)
HANDLE_INPUT = K.kept("candidate_handle")  # the catalogue's "who are you" inputs
COHORT_INPUT = K.kept("candidate_cohort")
HANDLE_PARAM = K.kept("handle")          # ?handle= and ?cohort=: the catalogue's inputs survive a reload
COHORT_PARAM = K.kept("cohort")
JOIN_NAME = K.kept("join::name")         # the display name typed when joining a class
HANDLE_CODE = K.kept("candidate_code")   # the catalogue: the resume code of a handle already in use
CLASS_PICK = K.kept("class_pick")        # the catalogue: which of the account's classes an attempt counts for
CATALOGUE_SIGN_IN = K.kept("catalogue::sign_in")  # the catalogue: Sign in with the provider
LINKED_CLASS = K("linked_class")          # (join code, ClassInfo): the class this session's join link named

PERSONAL = ""   # the class picker's value for practice outside any class


@dataclass
class Visitor:
    """What the catalogue knows of who is about to start: an account and its class, or a typed handle."""

    account: Account | None
    cohort: str = ""
    handle: str = ""
    code: str = ""
    problem: object = None     # an st.empty() beside the inputs, where a refused start explains itself
    learner: Learner | None = None   # whose review schedule and scores suggest what is next (signed in or proven)


def _linked_class(store, code: str) -> ClassInfo | None:
    """The class the join link names, looked up once per session and code (each look-up is a throttled try);
    None, with the reason shown, when there is none or the tries are used up."""
    kept = st.session_state.get(LINKED_CLASS)
    if isinstance(kept, tuple) and kept[0] == code:
        return kept[1]
    try:
        found = store.class_by_join_code(code, current_client(store))
    except Throttled as wait:
        st.error(f"{wait} Join links that match no class are counted per browser and network.", icon=":material/block:")
        return None
    if found is None:
        st.error("This join link matches no class. Check that it was copied whole, or ask your instructor "
                 "for a new one.", icon=":material/warning:")
        return None
    st.session_state[LINKED_CLASS] = (code, found)
    return found


def _invite_signed_out(store, code: str) -> None:
    """A join link opened signed out: sign in (and come back to this link), or, in a class that lets anonymous
    handles take part, practise under a handle with the class's cohort code filled in."""
    found = _linked_class(store, code)
    if found is None:
        return
    with st.container(border=True):
        if not found.requires_sign_in:
            st.markdown(f"**You were invited to the class “{escape_markdown(found.title)}”.** Type a handle "
                        f"below: its cohort code `{found.cohort}` is filled in, so your attempts count for it"
                        + (", or sign in to keep them under your account." if sign_in_configured() else "."))
            if not st.session_state.get(COHORT_INPUT):
                st.session_state[COHORT_INPUT] = found.cohort
                st.query_params[COHORT_PARAM] = found.cohort
        else:
            st.markdown("**You were invited to join a class.** Sign in first: your attempts then count for that "
                        "class, from any browser.")
            if not sign_in_configured():
                st.warning("This server has no sign-in provider configured, so classes cannot be joined "
                           "here. Ask your instructor for a cohort code instead.", icon=":material/lock:")
        if sign_in_configured():
            sign_in_button("Sign in to join", key=keys.JOIN_SIGN_IN, way_back=WayBack(join=code))


def _join_from_link(store, account: Account | None) -> None:
    """Enrol the signed-in account in the class its ?join= link names, asking for a display name once."""
    code = st.query_params.get(keys.JOIN_PARAM)
    if not code:
        return
    if account is None:
        _invite_signed_out(store, code)
        return
    found = _linked_class(store, code)
    if found is None:
        return
    joined = dict(store.account_cohorts(account.id))
    if found.cohort in joined:
        st.session_state[CLASS_PICK] = found.cohort
        st.query_params.pop(keys.JOIN_PARAM, None)
        return
    with st.container(border=True):
        st.markdown(f"**Join the class “{escape_markdown(found.title)}”**")
        with st.form("join_class", enter_to_submit=True):
            name = st.text_input("Your name in this class (shown to your instructor and unique in the class)",
                                 value=(account.name or "")[:checks.MAX_HANDLE], max_chars=checks.MAX_HANDLE,
                                 key=JOIN_NAME)
            go = st.form_submit_button("Join", type="primary")
        if not go:
            return
        try:
            store.account_candidate(account, found.cohort, checks.handle_entry(name))
        except (checks.InputError, AccessRefused) as problem:
            st.error(str(problem), icon=":material/warning:")
            return
        st.session_state[CLASS_PICK] = found.cohort
        st.query_params.pop(keys.JOIN_PARAM, None)
        st.rerun()


def who_are_you(store) -> Visitor:
    """Draw the catalogue's identity section and say who would start a drill now."""
    account = signed_in_account(store)
    _join_from_link(store, account)
    if account is not None:
        classes = dict(store.account_cohorts(account.id))
        titles = {cohort: (store.class_info(cohort).title if store.class_info(cohort) else cohort)
                  for cohort in classes}
        st.markdown(f"Signed in as **{escape_markdown(account.email or account.name)}**.")
        cohort = PERSONAL
        if classes:
            options = [PERSONAL, *classes]
            if st.session_state.get(CLASS_PICK) not in options:
                st.session_state[CLASS_PICK] = options[-1]
            cohort = st.selectbox("Your attempts count for", options, key=CLASS_PICK,
                                  format_func=lambda c: "my own practice (no class)" if c == PERSONAL else
                                  f"{titles[c]} — as {classes[c]}")
        else:
            st.caption("Your attempts are your own practice. Your instructor's join link puts them on a class's "
                       "board.")
        return Visitor(account, cohort, problem=st.empty(), learner=account_learner(account))
    if sign_in_configured():
        join = st.query_params.get(keys.JOIN_PARAM)
        sign_in_button("Sign in with your account", key=CATALOGUE_SIGN_IN, way_back=WayBack(join=join) if join else None)
        st.caption("Sign in to keep your attempts under your account, see them from any browser, and join your "
                   "class. Or practise anonymously below with a handle and its resume code.")
    identity = st.columns([2, 1, 1])
    handle = identity[0].text_input("Your handle", placeholder="e.g. ada",
                                    help="Shown to your instructor; letters, digits, spaces, dots, dashes or "
                                         "underscores. The first drill under a new handle gives you its resume code.",
                                    **field_in_url(HANDLE_INPUT, HANDLE_PARAM, checks.MAX_HANDLE))
    cohort = identity[1].text_input("Cohort code (optional)",
                                    help="Your instructor gives you this so your attempt shows on their board.",
                                    **field_in_url(COHORT_INPUT, COHORT_PARAM, checks.MAX_COHORT))
    # Staged on every keystroke, without a rerun: Streamlit 1.67 commits a field when it loses focus, but not
    # when focus goes to its own Show password toggle (where Tab lands), and never later, so a code typed, then
    # tabbed away from, reached the Start press empty ("The handle … is in use").
    code = identity[2].text_input("Resume code, if used before", type="password", max_chars=20,
                                  key=HANDLE_CODE, placeholder="e.g. K7QM-3XHD", live="0ms", on_change="ignore",
                                  help="Only for a handle you have used before: its code proves it is yours.")
    problem = st.empty()
    proven = st.session_state.get(keys.HISTORY_HANDLE)
    learner = proven if isinstance(proven, Learner) and proven.handle == handle.strip() else None
    return Visitor(None, cohort, handle, code, problem, learner)


def anonymous_candidate(store, visitor: Visitor) -> tuple[Candidate, str | None]:
    """The candidate row a typed handle starts under, and its new resume code when this claims the handle.

    Raises InputError, AccessRefused or Throttled with the reason a start is refused; nothing is stored then."""
    handle, cohort = checks.handle_entry(visitor.handle), checks.cohort_entry(visitor.cohort)
    found = store.class_info(cohort) if cohort else None
    if found is not None and found.requires_sign_in and sign_in_configured():
        raise AccessRefused(f"The class “{found.title}” asks everyone to sign in: press Sign in above.")
    status = store.handle_status(handle, cohort)

    def named() -> str:   # handles compare as people read them; read only for a refusal's message
        return handle_named(handle, store.stored_handle(handle, cohort))

    if status == "account":
        raise AccessRefused(f"{named()} is a signed-in member's name in this cohort: pick another handle.")
    if status == "closed":
        raise AccessRefused(f"The handle {named()} was used before resume codes existed, so nobody can prove it is "
                            "theirs: pick another handle.")
    if status == "free":
        claimed = store.claim_candidate(handle, cohort)   # the row it took up, from the claim's own transaction
        if claimed is None:
            raise AccessRefused(f"Someone has just taken the handle {named()}: pick another.")
        return claimed[0], claimed[1]
    elif not visitor.code.strip():
        raise AccessRefused(f"The handle {named()} is in use. If it is yours, type its resume code beside it; "
                            "otherwise pick another handle.")
    elif not store.check_resume_code(handle, visitor.code, cohort, client=current_client(store)):
        raise AccessRefused(f"That resume code is not the one of {named()}"
                            + (f" in the cohort {cohort}" if cohort else "") + ".")
    else:
        st.session_state[keys.HISTORY_HANDLE] = store.learner(handle, cohort)   # proven: history opens too
    return store.ensure_candidate(handle, cohort), None


def pressed_start(catalogue) -> tuple[str, float] | None:
    """The drill or shorter practice (id, minutes) whose Start button this run's press is, read from the
    session before the catalogue draws its buttons; None when no Start was pressed."""
    for drill_id, loaded in catalogue.drills.items():
        if st.session_state.get(keys.start_button(drill_id)) is True:
            return drill_id, loaded.drill.time_box_min
        if st.session_state.get(keys.start_scope(drill_id)) is True:
            shorter = {s.id: s for s in catalogue.drills.offers(drill_id)[0]}
            picked = st.session_state.get(keys.scope_pick(drill_id))
            if picked in shorter:
                return scoped_id(drill_id, picked), shorter[picked].minutes
    return None


def start_at_once(store) -> str | None:
    """Act on an anonymous visitor's Start press before the catalogue draws: the attempt starts and the page
    switches to it, so the run does not draw the whole catalogue only to leave it. Returns why the start was
    refused, for start() to show beside the inputs and the button once the catalogue is drawn (nothing is
    stored then); None when nothing was pressed, or when a signed-in account or a join link needs the drawn
    catalogue first."""
    pressed = pressed_start(get_catalogue())
    if pressed is None or st.query_params.get(keys.JOIN_PARAM) or signed_in_account(store) is not None:
        return None
    visitor = Visitor(None, st.session_state.get(COHORT_INPUT) or "", st.session_state.get(HANDLE_INPUT) or "",
                      st.session_state.get(HANDLE_CODE) or "")
    return _begin(store, visitor, *pressed)


def start(store, visitor: Visitor, drill_id: str, time_box_min: float, refused: str | None = None) -> None:
    """Start an attempt for the visitor and go to it, or explain beside the inputs why not (storing nothing).

    `refused` is start_at_once's answer to this press: shown, not tried again (a resume code is tried once)."""
    problem = refused or _begin(store, visitor, drill_id, time_box_min)
    # Beside the inputs at the top, and beside the button that was pressed (which may be far below).
    visitor.problem.error(problem, icon=":material/warning:")
    st.error(f"{problem} (see “Who are you?” at the top)", icon=":material/warning:")


def _begin(store, visitor: Visitor, drill_id: str, time_box_min: float) -> str:
    """Start the attempt and switch to it; returns why not when the start is refused (nothing is stored)."""
    try:
        if visitor.account is not None:
            candidate, code = store.account_candidate(visitor.account, visitor.cohort), None
        else:
            candidate, code = anonymous_candidate(store, visitor)
    except (checks.InputError, AccessRefused, Throttled) as problem:
        return str(problem)
    seed = secrets.randbelow(2**31)   # orders the options, and picks a variant the candidate has not had
    drill = get_catalogue().drills[drill_id].drill
    # Read even for a handle claimed just now: the claim saw no attempt in this cohort, but the draws a handle
    # has had count in every cohort.
    variant = variant_for(store, drill, candidate.handle, seed)
    # Its simulation questions' graded seed, drawn and stored in the start's own transaction.
    attempt = start_graded(store, candidate, drill, time_box_min * 60, seed=seed, variant=variant)
    if code:
        st.session_state[keys.NEW_RESUME_CODE] = (attempt.token, code)
    remember_attempt(attempt.token)
    # Opened at its first part, as the drill page would open it: its clock then needs no read of the part
    # opened last (a new attempt has none).
    st.switch_page("pages/drill.py", query_params={keys.ATTEMPT_TOKEN: attempt.token, keys.PART: drill.parts[0].id})
