"""Home: the drill catalogue, starting an attempt, and resuming one by its token.

Thin page: checks come from drills.answers, writes go through the attempt store.
"""
from __future__ import annotations

import secrets

import streamlit as st

from drills import answers as checks
from drills.scope import scoped_id
from drills.timebox import clock_for, format_duration
from drills.variants import variant_for
from ui import keys
from ui.context import field_in_url, get_catalogue, get_store, now, remember_attempt
from ui.frame import require_frame
from ui.review import due_reminder

require_frame()

st.title("Fault Lines")
st.markdown(
    "Practise system-design failure drills against the clock. Lock in your numbers before each "
    "answer opens, then see how far off you were. Simulations and labs in the sidebar let you "
    "check a hunch by running the system."
)

catalogue = get_catalogue()
store = get_store()

for error in catalogue.errors:
    st.error(f"A drill could not be loaded: {error}", icon="🧩")

st.header("Who are you?")
identity = st.columns([2, 1])
handle = identity[0].text_input("Your handle", placeholder="e.g. ada",
                                help="Shown to your instructor; letters, digits, spaces, dots, dashes or underscores.",
                                **field_in_url(keys.HANDLE, keys.HANDLE_PARAM, checks.MAX_HANDLE))
cohort = identity[1].text_input("Cohort code (optional)",
                                help="Your instructor gives you this so your attempt shows on their board.",
                                **field_in_url(keys.COHORT, keys.COHORT_PARAM, checks.MAX_COHORT))
identity_problem = st.empty()
due_reminder(store, handle)   # a link to the review page when this handle has reviews due

st.header("Drills")
if not catalogue.drills:
    st.info("No drills are installed yet. Add a YAML file under `drills/content/`.")


def start(drill_id: str, time_box_min: float) -> None:
    try:
        clean_handle = checks.handle_entry(handle)
        clean_cohort = checks.cohort_entry(cohort)
    except checks.InputError as problem:
        # Beside the inputs at the top, and beside the button that was pressed (which may be far below).
        identity_problem.error(str(problem), icon="⚠️")
        st.error(f"{problem} (see “Who are you?” at the top)", icon="⚠️")
        return
    seed = secrets.randbelow(2**31)   # orders the options, and picks a variant the candidate has not had
    variant = variant_for(store, catalogue.drills[drill_id].drill, clean_handle, seed)
    attempt = store.start_attempt(drill_id, clean_handle, clean_cohort, time_box_min * 60, seed=seed, variant=variant)
    code = store.issue_resume_code(clean_handle)   # the first attempt under a handle gets its code
    if code:
        st.session_state[keys.NEW_RESUME_CODE] = code
    remember_attempt(attempt.token)
    st.switch_page("pages/drill.py", query_params={keys.ATTEMPT_TOKEN: attempt.token})


for drill_id, loaded in catalogue.drills.items():
    drill = loaded.drill
    with st.container(border=True):
        st.subheader(drill.title)
        questions = drill.all_questions()
        shorter_ways, work = catalogue.drills.offers(drill_id)
        st.caption(f"⏱ {drill.time_box_min:g} minutes · {len(drill.parts)} parts · {len(questions)} questions "
                   f"· {len(drill.rubric)} rubric skills"
                   + (f" · about {work:.0f} minutes of reading and thinking, so the whole drill overruns its "
                      "clock: the shorter practice below fits it" if work > drill.time_box_min else ""))
        st.markdown(drill.summary)
        if drill.covers:
            st.markdown("**Covers:** " + " · ".join(drill.covers))
        overruns = work > drill.time_box_min and bool(shorter_ways)   # then a shorter practice is the default
        if st.button(f"Start the clock: {drill.title}", type="secondary" if overruns else "primary",
                     key=keys.start_button(drill_id)):
            start(drill_id, drill.time_box_min)
        shorter = {s.id: s for s in shorter_ways}
        if shorter:
            st.markdown("**Shorter practice, each on its own clock**")
            cols = st.columns([3, 1], vertical_alignment="bottom")
            picked = cols[0].selectbox(
                "Practise", list(shorter), key=keys.scope_pick(drill_id), label_visibility="collapsed",
                format_func=lambda s, offered=shorter: f"{offered[s].label} — {offered[s].questions} questions, "
                                                      f"{offered[s].minutes:g} minutes")
            if cols[1].button("Start this practice", key=keys.start_scope(drill_id), width="stretch",
                              type="primary" if overruns else "secondary"):
                start(scoped_id(drill_id, picked), shorter[picked].minutes)
            st.caption("The essentials path keeps a few key questions from every break; a single break keeps "
                       "the scenario, the board's key numbers and that break with its follow-up.")

st.header("Resume")
mine = [store.attempt_by_token(t) for t in st.session_state.get(keys.MY_ATTEMPTS, [])]
mine = [a for a in mine if a is not None]
if mine:
    for attempt in mine:
        loaded = catalogue.drills.get(attempt.drill_id)
        title = loaded.drill.title if loaded else attempt.drill_id
        clock = clock_for(attempt, now())
        state = "finished" if clock.finished else (
            f"over by {format_duration(clock.overtime_s)}" if clock.over else f"{format_duration(clock.remaining_s)} left")
        target = "pages/results.py" if clock.finished else "pages/drill.py"
        st.page_link(target, label=f"{title} — {state}", icon="▶️",
                     query_params={keys.ATTEMPT_TOKEN: attempt.token})
else:
    st.caption("Attempts you start or resume in this browser tab appear here until you reload or close it; "
               "My history lists them all under your handle and resume code. Your attempt "
               "link (it ends in `?attempt=…`) is the lasting way back: bookmark it, and it works from any "
               "browser, even after the server restarts.")

st.page_link("pages/history.py", label="My history", icon="🗂️",
             help="Needs your handle and the personal resume code shown when you first started.")
st.caption("Every attempt under your handle, from any browser.")   # a long link label is cut on a phone

with st.form("resume", enter_to_submit=True):
    pasted = st.text_input("Paste an attempt link or token", max_chars=300)
    go = st.form_submit_button("Resume")
if go:
    token = pasted.strip().rsplit("attempt=", 1)[-1].split("&")[0]
    attempt = store.attempt_by_token(token)
    if attempt is None:
        st.error("No attempt matches that link or token.", icon="⚠️")
    else:
        remember_attempt(attempt.token)
        st.switch_page("pages/drill.py", query_params={keys.ATTEMPT_TOKEN: attempt.token})
