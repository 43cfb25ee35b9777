"""The board's Integrity tab: one row per attempt with every look before lock-in, sortable and exported,
and the way from a row (or a shared ?timeline= link) to that attempt's timeline on the Attempt tab.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from drills.reports.integrity import integrity, looks_first
from drills.timebox import format_utc
from ui import keys
from ui.instructor.export import download_buttons

K = keys.register("integrity", __name__)   # this module's keys (ui.keys holds only shared ones)
TABLE = K.kept("integrity_table")        # integrity tab: one row per attempt
ONLY = K.kept("instructor::integrity_only")  # integrity tab: only attempts with something to look at

TIMELINE_PARAM = "timeline"    # ?timeline=<attempt id> opens that attempt on the Attempt tab
ATTEMPT_TAB = "Attempt"
MISSING = "—"


def timeline_link(attempt_id: int) -> str:
    return f"?{TIMELINE_PARAM}={int(attempt_id)}"


def _open_attempt(candidate_id: int, attempt_id: int) -> None:
    """Select the attempt on the Attempt tab and open that tab (a callback: it runs before the widgets)."""
    st.session_state[keys.INSTRUCTOR_CANDIDATE] = int(candidate_id)
    st.session_state[keys.instructor_attempt(candidate_id)] = int(attempt_id)
    st.session_state[keys.INSTRUCTOR_VIEW] = ATTEMPT_TAB


def follow_timeline_link(board) -> None:
    """Called before the tabs are drawn: a ?timeline= link opens its attempt if it is this drill's."""
    raw = st.query_params.get(TIMELINE_PARAM)
    if raw is None:
        return
    st.query_params.pop(TIMELINE_PARAM, None)
    attempt = board.store.attempt_by_id(int(raw)) if raw.isdigit() and len(raw) < 19 else None
    if attempt is None or attempt.drill_id != board.filters.drill_id:
        st.warning("That timeline link names no attempt at this drill.", icon=":material/warning:")
        return
    _open_attempt(attempt.candidate_id, attempt.id)


def integrity_frame(table: pd.DataFrame) -> pd.DataFrame:
    """As shown: counts stay numbers (so the columns sort by value), minutes rounded, the link last."""
    return pd.DataFrame({
        "Candidate": table["handle"], "Cohort": table["cohort"],
        "Started (UTC)": [format_utc(float(t)) for t in table["started_at"]],
        "Finished": table["finished_at"].notna(),
        "Sims before lock-in": table["sims_before_lockin"],
        "Reveals before lock-in": table["reveals_before_lockin"],
        "Hints opened": table["hints_opened"],
        "Hint cost (marks)": table["hint_cost"].round(2),
        "Results viewed while open": table["results_views"],
        "Past the box (min)": (table["overtime_s"] / 60).round(1),
        "Late lock-ins": table["late_lockins"],
        "Timeline": [timeline_link(a) for a in table["attempt_id"]],
    })


HELP = {
    "Sims before lock-in": "Simulation pages opened while questions they answer were still open",
    "Reveals before lock-in": "Worked answers opened before every question they answer was locked in or skipped",
    "Hints opened": "Graded hints opened before lock-in (fair play: each one costs part of the mark)",
    "Hint cost (marks)": "Marks given up to hints, summed over the attempt's questions",
    "Results viewed while open": "Results pages viewed before the attempt was finished",
    "Past the box (min)": "How long the attempt ran past its time box (plus extra time granted), to its finish "
                          "or its last activity",
    "Late lock-ins": "Answers locked after the time box ran out",
    "Timeline": "Opens the attempt's timeline on the Attempt tab (a link you can share with another instructor)",
}


def render_integrity(board) -> None:
    store, loaded, filters = board.store, board.loaded, board.filters
    table = board.figure("integrity", lambda: integrity(store, loaded, filters))
    flagged = table[table["flags"] > 0]
    cols = st.columns(4)
    cols[0].metric("Attempts with a look before lock-in",
                   f"{int(((table['sims_before_lockin'] + table['reveals_before_lockin']) > 0).sum())} of {len(table)}")
    cols[1].metric("Results viewed while open", f"{int((table['results_views'] > 0).sum())}")
    cols[2].metric("Hints opened", f"{int(table['hints_opened'].sum())}")
    cols[3].metric("Ran past the box", f"{int((table['overtime_s'] > 0).sum())}")
    only = st.toggle("Only attempts with something to look at", value=True, key=ONLY,
                     help="Looks before lock-in, results viewed while open, or time past the box")
    shown = looks_first(flagged if only else table)
    if shown.empty:
        st.info("No attempt in these filters looked before locking in or ran past its box.")
    else:
        config = {name: st.column_config.Column(help=text) for name, text in HELP.items()}
        config["Timeline"] = st.column_config.LinkColumn(display_text="open", help=HELP["Timeline"], width="small")
        event = st.dataframe(integrity_frame(shown), hide_index=True, width="stretch", placeholder=MISSING,
                             column_config=config, key=TABLE, on_select="rerun",
                             selection_mode="single-row")
        picked = list(getattr(getattr(event, "selection", None), "rows", []) or [])
        if picked:
            row = shown.iloc[picked[0]]
            st.button(f"Open the timeline of {row['handle']}'s attempt", type="primary",
                      on_click=_open_attempt, args=(int(row["candidate_id"]), int(row["attempt_id"])))
        st.caption("The attempts with the most looks before lock-in come first, then those only past the box. "
                   "Click a column to sort; pick a row to open its timeline here, or follow its link. The cohort "
                   "filter above narrows the class. A look is not proof of cheating: read the timeline first.")
    stem = f"{filters.drill_id}_{filters.cohort or 'all'}"
    download_buttons("integrity", stem, lambda: integrity(store, loaded, filters), "Integrity")
