"""The board's LMS roster: for a class an LMS launched into (LTI), its learners as the LMS lists them (read by
the LMS worker, deploy.lti.roster) and which of them have not started the drill on the board."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from drills.timebox import format_utc
from ui import keys
from ui.safe import escape_markdown

K = keys.register("roster", __name__)
READ_AGAIN = K("read_again")


def not_started_frame(members) -> pd.DataFrame:
    """Learners without an attempt at the drill: whether they have launched from the LMS at all."""
    return pd.DataFrame({
        "Learner": [m.name or m.user_id for m in members],
        "E-mail": [m.email for m in members],
        "Where they are": ["launched, not started" if m.launched else "not launched yet" for m in members],
    })


def render_roster(board) -> None:
    """Nothing for a class no LMS launched into; else the roster's summary and who has not started."""
    cohort = board.filters.cohort
    source = board.store.lti_roster_source(cohort) if cohort else None
    if source is None:
        return
    learners = [m for m in board.store.lti_roster(cohort, board.loaded.drill.id) if m.learner and m.active]
    waiting = [m for m in learners if m.attempts == 0]
    title = (f"LMS roster: {len(waiting)} of {len(learners)} learners have not started this drill"
             if source.synced_at is not None else "LMS roster: not read yet")
    with st.expander(title, expanded=bool(waiting), icon=":material/groups:"):
        if source.synced_at is None:
            st.caption("The roster is read from the LMS within a few seconds of the class's first launch.")
        else:
            st.caption(f"Read from the LMS at {format_utc(source.synced_at)} UTC; read again every 15 minutes.")
        if source.last_error:
            st.warning("The last read failed, so this is the roster as read before: "
                       + escape_markdown(source.last_error), icon=":material/warning:")
        if waiting:
            st.dataframe(not_started_frame(waiting), hide_index=True, width="stretch")
        if st.button("Read the roster again", key=READ_AGAIN):
            board.store.request_lti_roster_sync(cohort)
            st.toast("Asked: the roster is read again within a few seconds; reload the board to see it.")
