"""The board's Across drills tab: the chosen class compared over every drill it took, each scoped way rolled
up to its drill, and the skills several drills' rubrics share, per candidate; the report is drills.reports.across.
"""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from drills.draws import base_id
from drills.reports import aggregates
from drills.reports import across as report
from drills.reports.exports import to_csv_bytes
from drills.reports.grading_key import DrillKey
from ui import keys
from ui.context import get_catalogue
from ui.drill.attempt_view import sim_truths_of
from ui.drill.results import wrap_text
from ui.instructor.figures import LEVEL_COLOURS, candidate_label

K = keys.register("across", __name__)   # this module's keys (ui.keys holds only shared ones)
DRILL_CHART = K("drill_chart")           # median score and calibration per drill
DRILL_TABLE = K("drill_table")           # the same per drill, with who started and finished
SKILL_CHART = K("skill_chart")           # mean level per candidate and shared skill
SKILL_TABLE = K("skill_table")           # per shared skill: the drills that teach it and the mean level
DOWNLOAD_DRILLS = K("download_drills")   # the per-drill table as CSV
DOWNLOAD_SKILLS = K("download_skills")   # the per-candidate shared skills as CSV

HEATMAP_ROWS = 40
LABEL_WIDTH = 22   # characters per line of a drill's title beside its bars
LEVEL_TICKS = {0: "weak", 1: "ok", 2: "strong"}


@st.cache_data(show_spinner=False, max_entries=32)
def _across(db: str, cohort: str | None, version: tuple, _store) -> report.Across:
    """The comparison once per data version; keys are built as the board builds one drill's."""
    catalogue = get_catalogue()
    drill_ids = [d for d in aggregates.drills_by_activity(_store) if d in catalogue.drills]

    def key_for(drill_id: str) -> DrillKey:
        drawn = aggregates.variants_drawn(_store, drill_id)
        return DrillKey.from_loaded(catalogue.drills[drill_id], sim_truths_of, drawn)

    return report.across_drills(_store, drill_ids, key_for, cohort, rubrics(catalogue))


def rubrics(catalogue) -> dict[str, list[str]]:
    return {d: [s.id for s in catalogue.drills[d].drill.rubric] for d in dict.fromkeys(map(base_id, catalogue.drills))}


def skill_names(catalogue, shared: dict[str, list[str]]) -> dict[str, str]:
    """A shared skill named as the first drill that teaches it names it."""
    names = {}
    for skill, drills in shared.items():
        names[skill] = next(s.name for s in catalogue.drills[drills[0]].drill.rubric if s.id == skill)
    return names


def drill_frame(drills: pd.DataFrame, titles: dict[str, str]) -> pd.DataFrame:
    """The per-drill table as shown and downloaded: percentages rounded, a missing median left empty."""
    return pd.DataFrame({
        "Drill": [titles.get(d, d) for d in drills["drill_id"]], "Drill id": drills["drill_id"],
        "Started": drills["started"].astype(int), "Finished": drills["finished"].astype(int),
        "Attempts": drills["attempts"].astype(int), "Median score %": drills["median_score_pct"].round(1),
        "Median calibration %": (100 * drills["median_hit_rate"].astype(float)).round(0),
        "Candidates with ranges": drills["calibrated"].astype(int),
    })


def drill_figure(table: pd.DataFrame) -> go.Figure:
    """Median score and median calibration per drill, side by side, both as percentages."""
    drills = [wrap_text(d, LABEL_WIDTH) for d in table["Drill"]]   # on short lines, so 390 px keeps the bars
    fig = go.Figure()
    for column, colour in (("Median score %", "#1565c0"), ("Median calibration %", "#2e7d32")):
        values = table[column].astype(float)
        fig.add_bar(y=drills, x=values, name=column.replace(" %", ""), orientation="h", marker_color=colour,
                    text=["—" if pd.isna(v) else f"{v:.0f}%" for v in values], textposition="auto")
    fig.update_layout(barmode="group", height=120 + 56 * len(drills), margin=dict(l=10, r=10, t=10, b=10),
                      xaxis=dict(range=[0, 100], ticksuffix="%"), yaxis=dict(autorange="reversed", automargin=True),
                      legend=dict(orientation="h", y=-0.12, yanchor="top"))
    return fig


def skills_figure(skills: pd.DataFrame, names: dict[str, str]) -> go.Figure:
    """Rows: candidates; columns: shared skills; the cell is the mean level over the drills that scored it."""
    people = skills.drop_duplicates(["candidate_id"])[["candidate_id", "handle", "cohort"]].head(HEATMAP_ROWS)
    rows = [candidate_label(h, c) for h, c in zip(people["handle"], people["cohort"])]
    columns = list(names)
    cell = {(r.candidate_id, r.skill_id): r for r in skills.itertuples(index=False)}
    z, text, hover = [], [], []
    for candidate, row in zip(people["candidate_id"], rows):
        z.append([]), text.append([]), hover.append([])
        for skill in columns:
            r = cell.get((candidate, skill))
            z[-1].append(None if r is None else r.mean_level / 2)
            text[-1].append("" if r is None else f"{r.mean_level:.1f}")
            hover[-1].append(f"{html.escape(row)}<br>{html.escape(names[skill])}: " + (
                "not scored" if r is None else f"mean {r.mean_level:.2f} over {r.drills} drill(s)"))
    fig = go.Figure(go.Heatmap(
        z=z, x=[html.escape(names[s]) for s in columns], y=[html.escape(r) for r in rows], text=text,
        texttemplate="%{text}", hovertext=hover, hoverinfo="text", colorscale=LEVEL_COLOURS, zmin=0, zmax=1,
        xgap=2, ygap=2, colorbar=dict(tickvals=[0, 0.5, 1], ticktext=list(LEVEL_TICKS.values()), orientation="h",
                                      y=-0.01, yanchor="top", len=0.8, thickness=10)))
    fig.update_layout(height=200 + 24 * len(rows), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed", automargin=True),
                      xaxis=dict(side="top", automargin=True, tickfont=dict(size=11)))
    return fig


def render_across(board) -> None:
    """The tab: over every drill, the board's cohort (all dates: a class takes drills weeks apart)."""
    catalogue = get_catalogue()
    cohort = board.filters.cohort
    result = _across(board.store.path, cohort, board.version, board.store)
    who = "every cohort" if cohort is None else "this cohort" if cohort else "candidates with no cohort"
    if result.empty:
        st.info(f"No attempts by {who} at any drill yet, so there is nothing to compare.")
        return
    titles = {d: catalogue.drills[d].drill.title for d in result.drills["drill_id"] if d in catalogue.drills}
    table = drill_frame(result.drills, titles)
    st.caption(f"Each drill for {who}, over all dates; a break or the essentials path counts as its drill. Score: "
               "each candidate's best attempt. Calibration: the share of their 80% ranges that held. Medians are "
               "over candidates.")
    if len(table) == 1:
        st.info("Only one drill has attempts so far; the comparison fills in as the class takes others.")
    st.plotly_chart(drill_figure(table), width="stretch", key=DRILL_CHART)
    st.dataframe(table, hide_index=True, width="stretch", placeholder="—", key=DRILL_TABLE,
                 column_config={"Drill id": None, "Median calibration %": st.column_config.NumberColumn(format="%d%%")})
    st.download_button("Drills (CSV)", lambda: to_csv_bytes(table), file_name=f"across_{cohort or 'all'}_drills.csv",
                       mime="text/csv", key=DOWNLOAD_DRILLS, on_click="ignore")
    st.subheader("Skills across drills")
    shared = report.shared_skills(rubrics(catalogue))
    names = skill_names(catalogue, shared)
    if result.skills.empty:
        st.info("No candidate has a rubric score yet on a skill two drills share ("
                + ", ".join(names.values()) + ").")
        return
    st.caption("Skills two or more drills' rubrics name. A cell is the candidate's mean level over the drills "
               "that scored it (weak 0, ok 1, strong 2; in each drill their latest finished scored attempt, the "
               f"best way they took it). Showing up to {HEATMAP_ROWS} candidates; the CSV has everyone.")
    st.plotly_chart(skills_figure(result.skills, names), width="stretch", key=SKILL_CHART)
    summary = report.skill_summary(result.skills, shared)
    st.dataframe(pd.DataFrame({"Skill": summary["skill_id"].map(names), "Drills": [", ".join(catalogue.drills[d].drill.title for d in shared[s]) for s in summary["skill_id"]],
                               "Candidates": summary["candidates"], "Mean level": summary["mean_level"].round(2)}),
                 hide_index=True, width="stretch", placeholder="—", key=SKILL_TABLE)
    st.download_button("Skills per candidate (CSV)", lambda: to_csv_bytes(result.skills),
                       file_name=f"across_{cohort or 'all'}_skills.csv", mime="text/csv", key=DOWNLOAD_SKILLS,
                       on_click="ignore")
