"""The "One Tenant Takes Everyone Down" drill against its brief: every figure, the pacing, the rubric.

Each number the brief states is checked against what the drill's own formulas give, within a tolerance;
the checks every drill shares run on BRIEF in test_content_common.py.
"""
from __future__ import annotations

import re

import pytest

from drills.lint import questions, texts
from drills.loader import CONTENT_DIR, load_drill
from drills.schema import ChoiceQuestion, NotesQuestion, NumericQuestion
from drills.draws import sample_draws
from drills.variants import in_variant
from tests.content_checks import DrillBrief, fixed_texts

LOADED = load_drill(CONTENT_DIR / "one_tenant.yaml")
DRILL = LOADED.drill
VALUES = LOADED.values

# question id -> (the figure the brief states, relative tolerance, where the brief states it)
BRIEF_ANSWERS: dict[str, tuple[float, float, str]] = {
    # the board
    "job_duration": (32, 0.0, "board: one job about 32 s (4 calls x 8 s)"),
    "jobs_in_flight": (160, 0.0, "board: 160 jobs in flight at peak (5 jobs/s x 32 s)"),
    "calls_per_s": (20, 0.0, "board: LLM calls at peak 20/s"),
    "job_capacity": (6.25, 0.0, "board: job capacity 6.25 jobs/s (200 slots / 32 s)"),
    "utilisation": (80, 0.0, "board: utilisation at peak 80%"),
    "spare_capacity": (1.25, 0.0, "board: spare at peak 1.25 jobs/s"),
    "provider_a_used": (40, 0.0, "board: provider A 1,200 of 3,000/min used, 40%"),
    "fallback_share": (75, 0.0, "board: B + C together 900/min, 75% of peak"),
    "daily_spend": (5000, 0.0, "board: normal spend $5,000/day"),
    "peak_hour_spend": (360, 0.0, "board: about $360 in a peak hour"),
    # Break 1
    "b1_arrivals": (10, 0.01, "Break 1: Acme's 5 jobs/s on top of everyone else's ~5 (the brief's 2,250 backlog uses 10)"),
    "b1_backlog_growth": (3.75, 0.02, "Break 1: 2,250 jobs waiting after 10 minutes = 3.75 jobs/s"),
    "b1_acme_share": (50, 0.01, "Break 1: Acme's jobs ran 'at half the fleet'"),
    "b1_fair_share": (10, 0.0, "Break 1: a cap of 20 running jobs is 10% of the fleet"),
    "b1_recovery_capped": (28, 0.05, "Break 1: others' backlog clears in about 28 minutes with Acme capped"),
    "b1_recovery_paused": (14, 0.05, "Break 1: about 14 minutes with Acme's cap set to 0"),
    "f1_neighbours": (500, 0.0, "Break 1 follow-up: Acme's 500 neighbours in its group"),
    "f1_shuffle_pairs": (28, 0.0, "Break 1 follow-up: C(8,2) = 28 pairs"),
    "f1_shuffle_overlap": (3.6, 0.02, "Break 1 follow-up: 1/28 = 3.6%"),
    # Break 2
    "b2_pool_b": (80, 0.0, "Break 2: B 600/min = 10 calls/s x 8 s = 80 in flight"),
    "b2_pool_c": (40, 0.0, "Break 2: C 300/min = 40 in flight"),
    "b2_pool_a": (360, 0.0, "Break 2: A gets 360 (90% of 400)"),
    "b2_polish_rate": (5, 0.0, "Break 2: 15 calls/s / 3 = 5 jobs/s, exactly peak demand"),
    "b2_failover_cost": (135, 0.01, "Break 2: 9,000 jobs x $0.015 = about $135"),
    "b2_backlog_min": (83, 0.01, "Break 2 trade-off: an 83-minute backlog"),
    "f2_slots_per_process": (9, 0.0, "Break 2 follow-up: A's 360 slots over 40 processes"),
    "f2_burst": (360, 0.0, "Break 2 follow-up: 360 calls land on A in the same second"),
    "f2_burst_ratio": (18, 0.0, "Break 2 follow-up: those 360 calls against the board's 20 calls/s"),
    # Break 3
    "b3_hours_to_cap": (2.7, 0.01, "Break 3: (8,000 - 3,800) / 1,560 = about 2.7 hours"),
    "b3_excess_share": (77, 0.01, "Break 3: Lumen accounted for 77% of the spend on the leaderboard"),
    "b3_finish_cost": (0.01, 0.01, "Break 3: finishing a half-done job costs about $0.01 more"),
    "b3_requeue": (8860, 0.0, "Break 3: 8,860 jobs to requeue, the 8,700 new failures plus the 160 running"),
    "f3_naive_spend": (30, 0.0, "Break 3 follow-up: together they spend $30"),
    "f3_overspend": (20, 0.0, "Break 3 follow-up: $30 spent against $10 left"),
    "f3_reservations": (6, 0.0, "Break 3 follow-up: the 7th reservation fails while the first 6 succeed"),
    "f3_counter_rate": (20, 0.0, "Break 3 follow-up: one hot row taking 20 updates a second"),
    # Break 4
    "b4_conn_share": (15, 0.0, "Break 4: the exports use 30 of 200 connections"),
    "b4_queue_growth": (10 / 3, 0.01, "Break 4: throughput dropped by two-thirds of the 5 jobs/s peak"),
    "b4_keyset_pages": (400, 0.0, "Break 4: 2 million rows in keyset pages of 5,000"),
    "f4_slowdown": (2600, 0.0, "Break 4 follow-up: 130 ms against 0.05 ms, thousands of times as the lab shows (issue 21)"),
    "f4_buffer_ratio": (4857 / 4, 0.0, "Break 4 follow-up: the lab's 4,857 buffers against 4 at 300,000 churned rows"),
    # Break 5
    "b5_lost_jobs": (5, 0.0, "Break 5: about 5 jobs committed in Region 1 and never replicated"),
    "b5_lost_at_alert": (25, 0.0, "Break 5: 5 jobs/s at the 5 s lag alert"),
    "b5_requeued": (160, 0.0, "Break 5: 160 running jobs requeued by the reaper"),
    "b5_dup_spend": (1.0, 0.25, "Break 5: 160 x $0.005 = about $1 of duplicated spend"),
    "f5_diverged": (5, 0.0, "Break 5 follow-up: the old primary holds about 5 transactions Region 2 never saw"),
}

# derived value -> (the brief's figure, relative tolerance, where)
BRIEF_DERIVED: dict[str, tuple[float, float, str]] = {
    "slots": (200, 0.0, "board: 40 processes x 5 jobs = 200 slots"),
    "calls_per_min": (1200, 0.0, "board: 1,200 calls/min at peak"),
    "fallback_per_min": (900, 0.0, "board: B + C 900/min"),
    "acme_submitted": (3000, 0.0, "Break 1: Acme submitted 3,000 jobs by 13:10"),
    "acme_documents": (60, 0.0, "Break 1: 60 distinct documents"),
    "acme_ran": (1875, 0.01, "Break 1: about 1,875 already ran"),
    "acme_backlog": (1125, 0.02, "Break 1: 1,125 of Acme's still queued"),
    "others_backlog": (1125, 0.02, "Break 1: about 1,125 waiting jobs belong to other tenants"),
    "capped_others_capacity": (5.6, 0.01, "Break 1: 180 slots / 32 s = 5.6 jobs/s"),
    "capped_spare": (0.67, 0.01, "Break 1: the spare is 0.67/s"),
    "paused_spare": (1.3, 0.0, "Break 1: 6.25 - 4.95 = 1.3 spare"),
    "acme_cap_rate": (0.625, 0.0, "Break 1: 20 slots / 32 s = 0.625 jobs/s"),
    "acme_drain_min": (30, 0.02, "Break 1: 1,125 / 0.625 = 1,800 s, 30 minutes"),
    "reserved_slots_for_5": (160, 0.0, "Break 1: 5 jobs/s needs 160 slots"),
    "pool_a_little": (400, 0.0, "Break 2: A's 360 is 90% of 400"),
    "rate_b_per_s": (10, 0.0, "Break 2: B allows 10 calls/s"),
    "fallback_calls_per_s": (15, 0.0, "Break 2: 15 calls/s on the fallbacks"),
    "gap_share": (25, 0.0, "Break 2: the other 25% of peak"),
    "failover_jobs": (9000, 0.0, "Break 2: 9,000 jobs on the fallbacks"),
    "failover_extra_per_job": (0.015, 0.0, "Break 2: $0.035 - $0.02 = $0.015 a job"),
    "hours_to_cap": (2.7, 0.01, "Break 3: about 2.7 hours of warning"),
    "normal_peak_hour": (360, 0.0, "board: $360 in a peak hour"),
    "cost_per_call": (0.005, 0.0, "Break 5: $0.005 per repeated call"),
    "spent_mid_job": (0.01, 0.0, "Break 3: 2 of 4 steps done is half the job's $0.02"),
    "lumen_input_tokens": (600_000, 0.0, "Break 3: 300 pages x 500 tokens x 4 calls = 600k input tokens"),
    "reserved_total": (9, 0.0, "Break 3 follow-up: 6 reservations of $1.50 fit in $10"),
    "export_conn_share": (15, 0.0, "Break 4: 30 of 200 connections"),
    "claim_slowdown": (2600, 0.0, "Break 4 follow-up: 2,600x, inside the lab's 1,500-5,400x"),
    "lost_jobs": (5, 0.0, "Break 5: about 5 jobs in the last second"),
    "duplicate_spend": (1.0, 0.25, "Break 5: about $1 of duplicated provider spend"),
    "standby_share": (10, 0.0, "Break 5: 4 of 40 processes kept warm"),
}

# simulation-graded question -> (preset id, the brief's figure or None, relative tolerance, where)
BRIEF_SIMS: dict[str, tuple[str, float | None, float, str]] = {
    "f1_sim_hot_4": ("hot_shard.celebrity_4", 153, 0.02, "Break 1 follow-up: Shard 2 runs at 153%"),
    "f1_sim_hot_6": ("hot_shard.celebrity_6", 127, 0.03, "Break 1 follow-up: only drops to 127% at 6 shards"),
    "f1_sim_neighbour_wait": ("hot_shard.tenant_groups", 18 * 60, 0.3,
                              "Break 1 follow-up: the neighbours 'still wait 18 minutes'"),
    "b2_sim_fanout_429s": ("concurrency_pool.fanout_rejected", 75, 0.0, "Break 2: Promise.all collects 75 429s"),
    "b2_sim_pool10_429s": ("concurrency_pool.pool10_rejected", 19, 0.1, "Break 2: a pool of 10 gets 19 429s"),
    "f2_sim_storm_peak": ("retry_storm.no_jitter_peak", 360, 0.15,
                          "Break 2 follow-up: 360 calls in one second (the sim adds fresh demand)"),
    "f2_sim_jitter_peak": ("retry_storm.jitter_peak", None, 0.0, "Break 2 follow-up: the fixes remove the spike"),
}

# Numbers that are names or labels rather than quantities: clock times, HTTP codes, chapters, versions.
_LABELS = re.compile(
    r"\b\d{1,2}:\d{2}(:\d{2})?\b"            # 15:00, 15:00:30
    r"|\b(202|402|404|429|503)\b|\b5xx\b"    # HTTP statuses
    r"|\bBreaks \d and \d\b"
    r"|\b(Ch|JS|Postgres|Region|Break|Drill)\s+\d+\b"
    r"|\b1/"                                # a probability written as 1/{n}
    r"|\b429s\b|\bp99\b|\bp95\b"
    r"|-1\b"                                 # max_standby_streaming_delay = -1
)

# The generic checks in test_content_common.py run on this; the board and the prompt state figures.
BRIEF = DrillBrief(LOADED, BRIEF_ANSWERS, BRIEF_DERIVED, BRIEF_SIMS, _LABELS, time_box_min=45, sim_seed=1,
                   figures_allowed_in=frozenset({"prompt", "board", "baseline"}))


def test_the_projected_trip_time_is_1511():
    # Break 3: the cap trips at 15:11; projected from 12:30 it lands in that minute, and the text's clock says so.
    trip = 12 * 60 + 30 + VALUES["minutes_to_cap"]
    assert (int(trip // 60), int(trip % 60)) == (15, 11), "the brief's cap trips at 15:11"
    assert VALUES["cap_trip_min"] == 15 * 60 + 11


def test_shedding_free_jobs_alone_would_fit_the_fallbacks():
    # Break 2: Free is about 30% of jobs; the paid rest must fit what B and C run with polish on.
    assert VALUES["paid_job_rate"] <= VALUES["fallback_job_rate"]


def test_simulation_settings_match_the_drill_givens():
    from sims import presets

    celebrity_4 = presets.PRESETS["hot_shard.celebrity_4"].params
    celebrity_6 = presets.PRESETS["hot_shard.celebrity_6"].params
    assert celebrity_4.shards == VALUES["hash_groups"] and celebrity_6.shards == VALUES["grown_shards"]
    assert celebrity_4.hot_key_share == VALUES["celebrity_share"]
    groups = presets.PRESETS["hot_shard.tenant_groups"].params
    assert groups.shards == VALUES["hash_groups"]
    assert groups.arrival_rps == pytest.approx(VALUES["storm_arrivals"])
    assert groups.service_s == VALUES["job_seconds"] and groups.duration_s == VALUES["storm_s"]
    pool10 = presets.PRESETS["concurrency_pool.pool10_rejected"].params
    assert (pool10.calls, pool10.provider_limit, pool10.pool_size) == (
        VALUES["pool_sim_calls"], VALUES["pool_sim_limit"], VALUES["pool_sim_k"])
    storm = presets.PRESETS["retry_storm.no_jitter_peak"].params
    assert storm.processes == VALUES["processes"]
    assert storm.in_flight_per_process == VALUES["a_pool_per_process"]
    assert storm.probe_interval_s == VALUES["breaker_probe_s"]
    assert storm.demand_per_s == VALUES["peak_calls_per_s"]
    assert storm.provider_limit_per_s == VALUES["rate_a_per_s"]


def test_the_fixes_flatten_the_retry_storm():
    for sims in BRIEF.every_sim_values:   # the brief's run and attempts' own
        assert sims["f2_sim_jitter_peak"] * 5 < sims["f2_sim_storm_peak"]


def test_the_drill_has_all_five_breaks_with_follow_ups_and_a_close():
    breaks = [p for p in DRILL.parts if p.kind == "break"]
    assert [p.id for p in breaks] == ["break1", "break2", "break3", "break4", "break5"]
    assert all(p.followup is not None and p.followup.questions for p in breaks)
    assert DRILL.parts[-1].kind == "closing"
    closing_chains = [q for q in DRILL.parts[-1].questions if isinstance(q, NotesQuestion)]
    assert len(closing_chains) == 7, "the brief lists seven causal chains"
    assert DRILL.parts[-1].reveal, "the final design table opens after the chains are locked"


@pytest.mark.parametrize("part_id", ["break1", "break2", "break3", "break4", "break5"])
def test_each_break_has_three_numeric_questions_and_a_plan(part_id):
    part = DRILL.part(part_id)
    questions = list(part.questions) + list(part.followup.questions)
    assert sum(isinstance(q, NumericQuestion) for q in questions) >= 3
    assert any(isinstance(q, NotesQuestion) for q in part.questions), "a detect/contain/... notes question"
    assert any(isinstance(q, ChoiceQuestion) for q in questions)
    stages = {s.stage for s in part.reveal}
    assert {"detect", "contain", "degrade", "prevent", "tradeoff"} <= stages


# -- clock times and figures that must follow a retake's numbers ------------------------------------
# A retake draws its own storm length, outage length and spend cap, so every time of day the text quotes
# for the end of the storm, the end of the outage or the cap tripping has to come from those numbers.

_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})(?::\d{2})?\b")
_SIM_STAND_INS = {q.id: 1.0 for _, q in questions(DRILL) if isinstance(q, NumericQuestion) and q.sim}


def _clock(minutes: float) -> str:
    """Minutes after midnight as HH:MM; a moment inside a minute reads as that minute (15:11:32 is 15:11)."""
    whole = int(minutes) % (24 * 60)
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _story_clocks(values) -> dict[str, str]:
    return {
        "storm_end": _clock(13 * 60 + values["storm_minutes"]),
        "hang_end": _clock(15 * 60 + values["hang_minutes"]),
        "outage_end": _clock(15 * 60 + values["outage_minutes"]),
        "cap_trip": _clock(12 * 60 + 30 + 60 * values["b3_hours_to_cap"]),
    }


def _rendered(variant: int) -> tuple[dict[str, float], dict[str, dict[tuple, str]]]:
    """The variant's numbers and every text of the drill rendered with them, by part id and location."""
    loaded = in_variant(LOADED, variant)
    by_part: dict[str, dict[tuple, str]] = {}
    for text in texts(DRILL):
        by_part.setdefault(text.part.id, {})[text.loc] = loaded.text(text.template, _SIM_STAND_INS)
    return loaded.values, by_part


def _text_of(by_part: dict[str, dict[tuple, str]], part_id: str, *loc_tail: object) -> str:
    """The one rendered text of `part_id` whose location ends with loc_tail, e.g. ("followup", "prompt")."""
    found = [t for loc, t in by_part[part_id].items() if loc[2:][-len(loc_tail):] == loc_tail]
    assert len(found) == 1, (part_id, loc_tail)
    return found[0]


def _question_prompt(by_part, part_id: str, question_id: str) -> str:
    part_index = [p.id for p in DRILL.parts].index(part_id)
    for loc, q in questions(DRILL):
        if q.id == question_id and loc[1] == part_index:
            return by_part[part_id][loc + ("prompt",)]
    raise AssertionError(question_id)


def _reveal(by_part, part_id: str, stage: str) -> str:
    index = [s.stage for s in DRILL.part(part_id).reveal].index(stage)
    return _text_of(by_part, part_id, "reveal", index, "text")


@pytest.mark.parametrize("variant", [0, *sample_draws(11)])
def test_every_clock_time_in_the_breaks_follows_the_variants_numbers(variant):
    values, by_part = _rendered(variant)
    clocks = _story_clocks(values)
    allowed = {
        "break1": {"13:00", clocks["storm_end"]},
        "break2": {"15:00", clocks["hang_end"], clocks["outage_end"]},
        "break3": {"12:30", "14:00", clocks["cap_trip"]},
    }
    for part_id, times in allowed.items():
        for loc, text in by_part[part_id].items():
            quoted = {f"{int(h):02d}:{m}" for h, m in _CLOCK.findall(text)}
            assert quoted <= times, (f"variant {variant}, {'.'.join(map(str, loc))} quotes {sorted(quoted - times)}; "
                                     f"the story's times are {sorted(times)}")

    # Break 1: the limits go in when the storm ends, and the graded backlog is the one built up until then.
    storm_end = clocks["storm_end"]
    assert storm_end in _question_prompt(by_part, "break1", "b1_recovery_capped")
    assert _reveal(by_part, "break1", "recover").count(storm_end) >= 2
    # Break 2: A is back when the outage ends; the trade-off and the follow-up both say when.
    outage_end = clocks["outage_end"]
    assert outage_end in _reveal(by_part, "break2", "tradeoff")
    assert outage_end in _text_of(by_part, "break2", "followup", "prompt")
    assert outage_end in _text_of(by_part, "break2", "followup", "answer")
    # Break 3: the cap trips where 12:30 plus the graded hours-to-cap lands.
    cap_trip = clocks["cap_trip"]
    assert _text_of(by_part, "break3", "body").lstrip("*").startswith(cap_trip)
    assert cap_trip in _reveal(by_part, "break3", "detect")


@pytest.mark.parametrize("variant", [0, *sample_draws(11)])
def test_no_variant_quotes_a_time_that_only_the_written_numbers_give(variant):
    values, by_part = _rendered(variant)
    clocks = _story_clocks(values)
    written = _story_clocks(VALUES)
    stale = {written[k] for k in ("storm_end", "outage_end", "cap_trip") if clocks[k] != written[k]}
    for part_id, rendered in by_part.items():
        for loc, text in rendered.items():
            found = {t for t in stale if t in text}
            assert not found, f"variant {variant}, {'.'.join(map(str, loc))} still says {sorted(found)}"


def test_text_that_is_not_templated_quotes_no_clock_time_a_variant_moves():
    # Part titles, rubric rows and the givens' notes are shown as written in every variant; the figures in
    # them are checked for every drill in tests/test_content_common.py, the story's clock times here.
    written_clocks = _story_clocks(VALUES)
    for where, text in fixed_texts(DRILL):
        clocks = {written_clocks[k] for k in ("storm_end", "outage_end", "cap_trip") if written_clocks[k] in text}
        assert not clocks, f"{where} quotes {sorted(clocks)}, a time that moves with the variant"
