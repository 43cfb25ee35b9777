"""A class compared across drills: per drill (its scoped ways rolled up to the base drill) who started and
finished, the median score and calibration, and the skills several drills' rubrics share, per candidate.

Built from the one-drill reports in aggregates (attempt_summary, skill_levels), so grading stays in one place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import pandas as pd

from drills.draws import base_id
from drills.reports import aggregates
from drills.reports.aggregates import LEVEL_VALUE
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters

DRILL_COLUMNS = ["drill_id", "started", "finished", "attempts", "median_score_pct", "median_hit_rate", "calibrated"]
SKILL_COLUMNS = ["candidate_id", "handle", "cohort", "skill_id", "drills", "mean_level"]


@dataclass(frozen=True)
class Across:
    """The comparison: `drills` one row per base drill, `skills` one row per (candidate, shared skill)."""

    drills: pd.DataFrame
    skills: pd.DataFrame

    @property
    def empty(self) -> bool:
        return self.drills.empty


def shared_skills(rubrics: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Skill id -> the base drills whose rubric names it, for skills named by two or more drills."""
    owners: dict[str, list[str]] = {}
    for drill_id, skills in rubrics.items():
        for skill in dict.fromkeys(skills):
            owners.setdefault(skill, []).append(drill_id)
    return {skill: drills for skill, drills in sorted(owners.items()) if len(drills) > 1}


def per_drill(summary: pd.DataFrame) -> pd.DataFrame:
    """Roll attempt_summary rows (with a `drill_id` column: the base drill) up to one row per drill.

    A candidate counts once per drill: started with any attempt, finished with any finished attempt; their
    score is their best attempt's (as on the leaderboard), their calibration the share of all their 80%
    ranges that held. Medians are over candidates; calibration only over candidates who stated a range.
    """
    if summary.empty:
        return pd.DataFrame(columns=DRILL_COLUMNS)
    people = summary.groupby(["drill_id", "candidate_id"]).agg(
        best=("score_pct", "max"), finished=("finished_at", "count"), attempts=("attempt_id", "size"),
        ranges=("ranges", "sum"), hits=("hits", "sum"))
    people["hit_rate"] = (people["hits"] / people["ranges"]).where(people["ranges"] > 0)
    out = people.groupby(level="drill_id").agg(
        started=("best", "size"), finished=("finished", lambda f: int((f > 0).sum())),
        attempts=("attempts", "sum"), median_score_pct=("best", "median"),
        median_hit_rate=("hit_rate", "median"), calibrated=("hit_rate", "count"))
    return out.reset_index()[DRILL_COLUMNS]


def per_candidate_skills(levels: pd.DataFrame, shared: Mapping[str, list[str]]) -> pd.DataFrame:
    """skill_levels rows (with `drill_id`: the base drill) -> per (candidate, shared skill) the mean level
    (weak 0, ok 1, strong 2) over the drills they were scored on it; in one drill their best way of taking it."""
    rows = levels[levels["skill_id"].isin(list(shared))] if not levels.empty else levels
    if rows.empty:
        return pd.DataFrame(columns=SKILL_COLUMNS)
    rows = rows.assign(value=rows["level"].map(LEVEL_VALUE))
    best = rows.groupby(["candidate_id", "handle", "cohort", "skill_id", "drill_id"], as_index=False)["value"].max()
    out = best.groupby(["candidate_id", "handle", "cohort", "skill_id"], as_index=False).agg(
        drills=("drill_id", "nunique"), mean_level=("value", "mean"))
    return out.sort_values(["handle", "cohort", "skill_id"], kind="stable").reset_index(drop=True)[SKILL_COLUMNS]


def skill_summary(skills: pd.DataFrame, shared: Mapping[str, list[str]]) -> pd.DataFrame:
    """Per shared skill: the drills that teach it, how many candidates were scored on it, and their mean."""
    by = skills.groupby("skill_id").agg(candidates=("candidate_id", "nunique"), mean_level=("mean_level", "mean"))
    out = pd.DataFrame({"skill_id": list(shared), "drills": [", ".join(d) for d in shared.values()]})
    out = out.merge(by.reset_index(), on="skill_id", how="left")
    out["candidates"] = out["candidates"].fillna(0).astype(int)
    return out


def across_drills(store, drill_ids: Iterable[str], key_for: Callable[[str], DrillKey], cohort: str | None,
                  rubrics: Mapping[str, Iterable[str]]) -> Across:
    """Compare `cohort` (None: everyone) over `drill_ids` (scoped ids included; each rolls up to its base).

    `key_for(drill_id)` gives the grading key the board uses for that drill; `rubrics` maps a base drill id
    to its rubric's skill ids, which decides the shared skills.
    """
    summaries, levels = [], []
    for drill_id in drill_ids:
        key, filters = key_for(drill_id), Filters(drill_id, cohort)
        summaries.append(aggregates.attempt_summary(store, key, filters).assign(drill_id=base_id(drill_id)))
        levels.append(aggregates.skill_levels(store, key, filters).assign(drill_id=base_id(drill_id)))
    summary = pd.concat(summaries, ignore_index=True) if summaries else pd.DataFrame()
    level_rows = pd.concat(levels, ignore_index=True) if levels else pd.DataFrame()
    drills = per_drill(summary)
    order = {d: i for i, d in enumerate(dict.fromkeys(base_id(d) for d in drill_ids))}
    drills = drills.sort_values("drill_id", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    return Across(drills, per_candidate_skills(level_rows, shared_skills(rubrics)))
