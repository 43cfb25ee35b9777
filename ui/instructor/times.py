"""The board's Time tab, per candidate: minutes in each part against its pacing, the median row on top."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from ui import keys
from ui.instructor import board_figures
from ui.instructor.figures import candidate_label

K = keys.register("time", __name__)   # this module's keys (ui.keys holds only shared ones)
HEATMAP = K.kept("time_heatmap")         # time tab: minutes per candidate and part

HEATMAP_ROWS = 60


def time_grid(spent: pd.DataFrame, table: pd.DataFrame, parts: list[tuple[str, str, float]]):
    """Rows of minutes per part for the leaderboard's attempts (in its order), and the median row over them."""
    chosen = table[["candidate_id", "attempt_id", "handle", "cohort"]]
    mine = spent.merge(chosen[["attempt_id"]], on="attempt_id")
    wide = mine.pivot_table(index="attempt_id", columns="part_id", values="minutes", aggfunc="sum")
    ids = [p for p, _, _ in parts]
    wide = wide.reindex(columns=ids)
    median = [None if pd.isna(v) else float(v) for v in wide.median(axis=0, skipna=True)]
    rows, grid = [], []
    for r in chosen.head(HEATMAP_ROWS).itertuples(index=False):
        rows.append(candidate_label(r.handle, r.cohort))
        values = wide.loc[r.attempt_id] if r.attempt_id in wide.index else pd.Series(index=ids, dtype=float)
        grid.append([None if pd.isna(v) else float(v) for v in values])
    return rows, grid, median


def render_time_heatmap(board, table: pd.DataFrame) -> None:
    spent = board.report("time_per_attempt")
    if spent.empty:
        return
    parts = list(board.key.part_titles)
    rows, grid, median = time_grid(spent, table, parts)
    st.markdown("##### Per candidate")
    st.plotly_chart(board.figure("time_heatmap", lambda: board_figures.time_heatmap(rows, parts, grid, median)),
                    width="stretch", key=HEATMAP)
    caption = ("Minutes in each part on each candidate's best-scoring attempt (the leaderboard's), coloured "
               "against the part's pacing: blue under, red over. The top row is the median over those attempts; "
               "a blank cell is a part not reached or not left yet.")
    if len(table) > HEATMAP_ROWS:
        caption += f" Showing the top {HEATMAP_ROWS} of {len(table):,} candidates."
    st.caption(caption)
