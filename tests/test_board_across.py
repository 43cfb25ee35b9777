"""The across-drills comparison: every figure recomputed from the store's own records with drills.scoring,
on a small store holding two drills and a scoped way of one of them."""
from __future__ import annotations

import statistics

import pandas as pd
import pytest

from drills import scoring
from drills.demo import populate
from drills.loader import load_catalogue
from drills.reports import across, aggregates
from drills.reports.grading_key import DrillKey
from drills.schema import NumericQuestion
from drills.scope import ScopedDrills
from drills.store import AttemptStore
from drills.variants import in_variant
from tests.clock import FakeClock

DRILLS = ScopedDrills(load_catalogue().drills)
IDS = ["one_tenant", "one_tenant~essentials", "retry_chain"]
RUBRICS = {d: [s.id for s in DRILLS[d].drill.rubric] for d in ("one_tenant", "retry_chain")}
T0 = 1_790_000_000.0


def _sim_truths(drill_id: str) -> dict[str, float]:
    return {q.id: 100.0 for q in DRILLS[drill_id].drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = AttemptStore(str(tmp_path_factory.mktemp("across") / "across.duckdb"), clock=FakeClock())
    for seed, drill_id in enumerate(IDS):
        populate(store, DRILLS[drill_id], candidates=5, cohorts=("north", "south"), seed=11 + seed, now=T0,
                 sim_truths=_sim_truths(drill_id))
    yield store
    store.close()


def _key_for(store):
    def key_for(drill_id: str) -> DrillKey:
        return DrillKey.from_loaded(DRILLS[drill_id], _sim_truths(drill_id),
                                    variants=aggregates.variants_drawn(store, drill_id))
    return key_for


def _expected(store, cohort):
    """Per base drill, from scoring alone: per candidate best percent, finished, ranges and hits."""
    people: dict[tuple[str, int], dict] = {}
    for a in store.attempts():
        if cohort is not None and a.cohort != cohort:
            continue
        base = a.drill_id.split("~")[0]
        results = scoring.grade_attempt(in_variant(DRILLS[a.drill_id], a.variant), store.answers(a.id),
                                        sim_values=_sim_truths(a.drill_id), note_ratings=store.note_ratings(a.id))
        totals, calib = scoring.totals(results), scoring.calibration(results)
        p = people.setdefault((base, a.candidate_id), {"best": -1.0, "finished": False, "ranges": 0, "hits": 0})
        p["best"] = max(p["best"], totals.percent)
        p["finished"] |= a.finished_at is not None
        p["ranges"] += calib.ranges
        p["hits"] += calib.hits
    out = {}
    for base in dict.fromkeys(b for b, _ in people):
        mine = [p for (b, _), p in people.items() if b == base]
        rates = [p["hits"] / p["ranges"] for p in mine if p["ranges"]]
        out[base] = (len(mine), sum(p["finished"] for p in mine), statistics.median(p["best"] for p in mine),
                     statistics.median(rates) if rates else None)
    return out


@pytest.mark.parametrize("cohort", [None, "north"])
def test_each_drill_row_matches_scoring_recomputed_per_candidate(store, cohort):
    result = across.across_drills(store, IDS, _key_for(store), cohort, RUBRICS)
    expected = _expected(store, cohort)
    assert list(result.drills["drill_id"]) == ["one_tenant", "retry_chain"]   # the scoped way rolled up
    for row in result.drills.itertuples():
        started, finished, score, rate = expected[row.drill_id]
        assert (row.started, row.finished) == (started, finished)
        assert row.median_score_pct == pytest.approx(score)
        assert row.median_hit_rate == pytest.approx(rate)


def test_shared_skills_are_those_two_rubrics_name():
    shared = across.shared_skills(RUBRICS)
    assert shared == {"provider_outage": ["one_tenant", "retry_chain"],
                      "shared_resources": ["one_tenant", "retry_chain"]}


def test_skill_means_recomputed_from_rubric_history(store):
    result = across.across_drills(store, IDS, _key_for(store), None, RUBRICS)
    shared = across.shared_skills(RUBRICS)
    # Independently: per candidate, drill and skill, the level that counts on the latest finished scored
    # attempt of each way of taking it; the best way per drill; the mean over drills.
    latest: dict[tuple[int, str], object] = {}
    for a in sorted(store.attempts(), key=lambda a: (a.finished_at is not None, a.started_at, a.id)):
        levels = scoring.current_levels(store.rubric_history(a.id))
        if levels:
            latest[(a.candidate_id, a.drill_id)] = levels
    best: dict[tuple[int, str, str], int] = {}
    for (candidate, drill_id), levels in latest.items():
        for skill in shared:
            if skill in levels:
                k = (candidate, skill, drill_id.split("~")[0])
                best[k] = max(best.get(k, -1), across.LEVEL_VALUE[levels[skill].level])
    expected: dict[tuple[int, str], list[int]] = {}
    for (candidate, skill, _), value in best.items():
        expected.setdefault((candidate, skill), []).append(value)
    got = {(r.candidate_id, r.skill_id): (r.drills, r.mean_level) for r in result.skills.itertuples()}
    assert got.keys() == expected.keys() and got
    for k, values in expected.items():
        assert got[k][0] == len(values)
        assert got[k][1] == pytest.approx(sum(values) / len(values))
    assert any(drills == 2 for drills, _ in got.values())   # someone is compared across both drills
    summary = across.skill_summary(result.skills, shared)
    assert list(summary["skill_id"]) == sorted(shared)


def test_a_cohort_with_no_attempts_is_empty(store):
    result = across.across_drills(store, IDS, _key_for(store), "nobody", RUBRICS)
    assert result.empty and result.skills.empty
    assert across.skill_summary(result.skills, across.shared_skills(RUBRICS))["candidates"].tolist() == [0, 0]


def test_per_drill_by_hand():
    rows = pd.DataFrame({"drill_id": ["d"] * 4, "candidate_id": [1, 1, 2, 3], "attempt_id": [1, 2, 3, 4],
                         "score_pct": [20.0, 60.0, 40.0, 90.0], "finished_at": [None, 5.0, None, 7.0],
                         "ranges": [2, 2, 0, 4], "hits": [1, 2, 0, 1]})
    row = across.per_drill(rows).iloc[0]
    assert (row.started, row.finished, row.attempts) == (3, 2, 4)
    assert row.median_score_pct == 60.0                 # best per candidate: 60, 40, 90
    assert row.median_hit_rate == pytest.approx((0.75 + 0.25) / 2)   # 3 of 4, 1 of 4; candidate 2 stated none
    assert row.calibrated == 2
