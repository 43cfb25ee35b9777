"""Home: the drill catalogue, starting an attempt, and resuming one by its token.

Thin page: checks come from drills.answers, writes go through the attempt store.
"""
from __future__ import annotations

import streamlit as st

from drills.store.accounts import may_open
from drills.timebox import clock_for, format_duration
from ui import keys
from ui.context import get_catalogue, get_store, now, remember_attempt
from ui.frame import require_frame
from ui.lms import open_linked_drill
from ui.identity import go_back_after_sign_in
from ui.drill.catalogue import drill_card, drill_filter, suggest_next
from ui.drill.start import start as start_attempt, start_at_once, who_are_you

require_frame()

store = get_store()
go_back_after_sign_in(store)   # just back from the provider: to the page, or the join link, the sign-in began at
refused = start_at_once(store)   # a Start press: started and gone before the catalogue draws, or why not

st.title("Fault Lines")
st.markdown(
    "Practise system-design failure drills against the clock. Lock in your numbers before each "
    "answer opens, then see how far off you were. Simulations and labs in the menu let you "
    "check a hunch by running the system."
)

catalogue = get_catalogue()

for error in catalogue.errors:
    st.error(f"A drill could not be loaded: {error}", icon=":material/extension:")

st.header("Who are you?")
visitor = who_are_you(store)
open_linked_drill(store)   # a learner's LMS link that names a drill opens it (LTI), once per launch

st.header("Drills")
if not catalogue.drills:
    st.info("No drills are installed yet. Add a YAML file under `drills/content/`.")


def start(drill_id: str, time_box_min: float) -> None:
    start_attempt(store, visitor, drill_id, time_box_min, refused)


suggest_next(store, catalogue, visitor.learner)   # what spaced review suggests, with the review link
for drill_id in drill_filter(catalogue):
    drill_card(catalogue, drill_id, start)

st.header("Resume")
mine = [store.attempt_by_token(t) for t in st.session_state.get(keys.MY_ATTEMPTS, [])]
mine = [a for a in mine if a is not None and (visitor.account is None or a.account_id in (None, visitor.account.id))]
if mine:
    for attempt in mine:
        loaded = catalogue.drills.get(attempt.drill_id)
        title = loaded.drill.title if loaded else attempt.drill_id
        clock = clock_for(attempt, now())
        state = "finished" if clock.finished else (
            f"over by {format_duration(clock.overtime_s)}" if clock.over else f"{format_duration(clock.remaining_s)} left")
        target = "pages/results.py" if clock.finished else "pages/drill.py"
        st.page_link(target, label=f"{title} — {state}", icon=":material/play_arrow:",
                     query_params={keys.ATTEMPT_TOKEN: attempt.token})
else:
    st.caption("Attempts you start or resume in this browser tab appear here until you reload or close it; "
               "My history lists them all under your handle and resume code. Your attempt "
               "link (it ends in `?attempt=…`) is the lasting way back: bookmark it, and it works from any "
               "browser, even after the server restarts.")

st.page_link("pages/history.py", label="My history", icon=":material/folder_open:",
             help="Needs your handle and the personal resume code shown when you first started.")
st.caption("Every attempt under your handle, from any browser.")   # a long link label is cut on a phone

with st.form("resume", enter_to_submit=True):
    pasted = st.text_input("Paste an attempt link or token", max_chars=300)
    go = st.form_submit_button("Resume")
if go:
    token = pasted.strip().rsplit("attempt=", 1)[-1].split("&")[0]
    attempt = store.attempt_by_token(token)
    if attempt is None or not may_open(attempt.account_id, visitor.account):
        st.error("No attempt of yours matches that link or token.", icon=":material/warning:")
    else:
        remember_attempt(attempt.token)
        st.switch_page("pages/drill.py", query_params={keys.ATTEMPT_TOKEN: attempt.token})
