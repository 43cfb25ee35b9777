"""The board's Grader gap tab: self-scores against instructors' per skill and per candidate, and how two
instructors agree where both scored one attempt's skill."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from drills.reports import grader_gap
from ui import keys
from ui.instructor import board_figures
from ui.instructor.export import download_buttons
from ui.instructor.figures import candidate_label

K = keys.register("gap", __name__)   # this module's keys (ui.keys holds only shared ones)
TABLE = K.kept("gap_table")              # grader gap tab: self against instructor per skill
CHART = K.kept("gap_fig")                # grader gap tab: the gap per skill
AGREEMENT_TABLE = K.kept("gap_agreement_table")  # grader gap tab: two instructors on one skill
PEOPLE_TABLE = K.kept("gap_people_table")  # grader gap tab: self against instructor per candidate
APART_TABLE = K.kept("gap_apart_table")  # grader gap tab: where two instructors disagree

MISSING = "—"


def _shares(df: pd.DataFrame) -> dict[str, pd.Series]:
    return {"Pairs": df["pairs"], "Mean gap (levels)": df["mean_gap"].round(2),
            "Agree %": (100 * df["agree"]).round(0), "Self higher %": (100 * df["self_higher"]).round(0),
            "Self lower %": (100 * df["self_lower"]).round(0)}


def render_gap(board) -> None:
    store, filters, drill = board.store, board.filters, board.loaded.drill
    names = {s.id: s.name for s in drill.rubric}
    by_skill = board.figure("gap_skill", lambda: grader_gap.gap_by_skill(store, filters))
    if by_skill.empty:
        st.info("No skill has both a self-score and an instructor's score yet: override a skill on the Attempt "
                "tab to start the comparison.")
    else:
        st.plotly_chart(board.figure("gap_fig", lambda: board_figures.gap_figure(by_skill, names)),
                        width="stretch", key=CHART)
        st.dataframe(pd.DataFrame({"Skill": [names.get(s, s) for s in by_skill["skill_id"]], **_shares(by_skill)}),
                     hide_index=True, width="stretch", key=TABLE, column_config={
                         "Mean gap (levels)": st.column_config.NumberColumn(
                             help="The instructor's level less the candidate's own, in steps (weak, ok, strong): "
                                  "negative when candidates rate themselves higher")})
        st.caption("Wherever a candidate scored a skill and an instructor scored it too, on the same attempt; the "
                   "instructor's latest score counts.")
        people = board.figure("gap_people", lambda: grader_gap.gap_by_candidate(store, filters))
        with st.expander(f"Per candidate ({len(people)})"):
            st.dataframe(pd.DataFrame({"Candidate": [candidate_label(h, c) for h, c in
                                                     zip(people["handle"], people["cohort"])], **_shares(people)}),
                         hide_index=True, width="stretch", key=PEOPLE_TABLE)
    st.markdown("##### Two instructors on one skill")
    agreement = board.figure("gap_two", lambda: grader_gap.instructor_agreement(store, filters))
    if agreement.empty:
        st.caption("No attempt has a skill scored by two instructors yet.")
    else:
        st.dataframe(pd.DataFrame({
            "Skill": [names.get(s, s) for s in agreement["skill_id"]], "Pairs": agreement["pairs"],
            "Agree %": (100 * agreement["agree"]).round(0), "Mean distance (levels)": agreement["mean_apart"].round(2),
        }), hide_index=True, width="stretch", key=AGREEMENT_TABLE)
        apart = board.figure("gap_apart", lambda: grader_gap.instructor_disagreements(store, filters))
        if not apart.empty:
            st.markdown("**Where they disagree**")
            st.dataframe(pd.DataFrame({
                "Candidate": [candidate_label(h, c) for h, c in zip(apart["handle"], apart["cohort"])],
                "Attempt": apart["attempt_id"], "Skill": [names.get(s, s) for s in apart["skill_id"]],
                "First": [f"{n}: {drill.level_label(lv)}" for n, lv in zip(apart["first_name"], apart["first_level"])],
                "Second": [f"{n}: {drill.level_label(lv)}" for n, lv in zip(apart["second_name"],
                                                                              apart["second_level"])],
            }), hide_index=True, width="stretch", key=APART_TABLE)
    stem = f"{filters.drill_id}_{filters.cohort or 'all'}"
    download_buttons("grader_gap", stem, lambda: grader_gap.gap_pairs(store, filters), "Grader gap pairs")
