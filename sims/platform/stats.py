"""Statistics of a platform run: pure functions of a Params or a Result, no simulation.

``summary`` gives the figures the drill asks about; ``timeline`` and ``wait_p95_by_minute`` feed the charts.
"""
from __future__ import annotations

import math
import statistics

from sims.platform.params import ACME, PROVIDERS, SETTLE_S, STEPS, Params
from sims.platform.records import FAILED, FINISHED, HANG, QUEUED, RUNNING, FailedCall, Result, Sample
from sims.spread import percentile


def has_surge(p: Params) -> bool:
    return p.acme_multiplier != 1.0


def has_outage(p: Params) -> bool:
    return p.outage_min > 0


def has_break(p: Params) -> bool:
    """Whether the run breaks something: Acme's surge or A's outage (else it is a calm peak)."""
    return has_surge(p) or has_outage(p)


def focus_window(p: Params) -> tuple[float, float]:
    """Seconds over which the headline rates are measured.

    Without a break: the whole run after ``SETTLE_S``. With one: from ``SETTLE_S`` after it starts
    until it ends, the mitigations start, or the run ends, whichever comes first.
    """
    end = p.window_min * 60.0
    if not has_break(p):
        return min(SETTLE_S, end / 2), end
    start = p.break_at_min * 60.0
    if has_outage(p):
        end = min(end, start + p.outage_min * 60.0)
    mitigated = p.mitigations_from_min * 60.0
    if start < mitigated < end:
        end = mitigated
    return min(start + SETTLE_S, (start + end) / 2), end


def _in_window(samples: tuple[Sample, ...], start: float, end: float) -> list[Sample]:
    return [s for s in samples if start <= s.t <= end]


def _slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y on x; 0 with fewer than two distinct x."""
    if len(points) < 2:
        return 0.0
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    if sxx == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx


def backlog(sample: Sample) -> int:
    return sample.queued_acme + sample.queued_others


def others_recovery_s(result: Result) -> float | None:
    """Seconds from the mitigations until everyone else's queue is at or under the threshold.

    None when there is no backlog to recover from or it never clears inside the run.
    """
    p = result.params
    start = p.mitigations_from_min * 60.0
    if not (p.break_at_min * 60.0 < start < p.window_min * 60.0):
        return None
    for s in result.samples:
        if s.t >= start and s.queued_others <= p.recovered_below_jobs:
            return s.t - start
    return None


def queued_at(result: Result, t: float) -> Sample:
    """The last sample taken at or before ``t``."""
    chosen = result.samples[0]
    for s in result.samples:
        if s.t > t:
            break
        chosen = s
    return chosen


def waits(result: Result, acme: bool) -> list[float]:
    """Queue waits (submission to first claim) in seconds of one group's claimed jobs."""
    return [j.started - j.arrived for j in result.jobs
            if j.started is not None and (j.tenant == ACME) == acme]


def hung_calls(result: Result) -> list[FailedCall]:
    """Calls to A that stalled during the outage and held a worker until a timeout."""
    return [c for c in result.failed_calls if c.provider == 0 and c.kind == HANG]


def summary(result: Result) -> dict[str, object]:
    """The figures the drill asks about, as a flat JSON-able dict (rates per second, times in s/min)."""
    p = result.params
    start, end = focus_window(p)
    span = max(end - start, 1e-9)
    # a window shorter than one sampling interval falls back to the run's first and last samples
    inside = _in_window(result.samples, start, end) or [result.samples[0], result.samples[-1]]
    first, last = inside[0], inside[-1]
    elapsed = max(last.t - first.t, 1e-9)
    in_flight = statistics.fmean(s.running_acme + s.running_others for s in inside)
    calls_ok = sum(last.succeeded) - sum(first.succeeded)
    arrivals = sum(1 for j in result.jobs if start <= j.arrived < end)
    counts = [0, 0, 0, 0]
    for j in result.jobs:
        counts[j.state] += 1
    acme_waits, other_waits = waits(result, True), waits(result, False)
    spend = result.provider_spend_usd
    last_sample = result.samples[-1]
    prices = (p.price_a_usd, p.price_b_usd, p.price_c_usd)
    fallback_calls = [last_sample.succeeded[i] for i in (1, 2)]
    recovery = others_recovery_s(result)
    out: dict[str, object] = {
        "scenario": p.scenario,
        "seed": result.seed,
        "window_min": p.window_min,
        "measured_from_min": round(start / 60.0, 2),
        "measured_to_min": round(end / 60.0, 2),
        "slots": p.slots,
        "capacity_jobs_per_s": round(p.capacity_jobs_per_s, 3),
        "arrivals_jobs_per_s": round(arrivals / span, 3),
        "jobs_in_flight": round(in_flight, 1),
        "llm_calls_per_s": round(calls_ok / elapsed, 2),
        "utilisation_pct": round(100.0 * in_flight / p.slots, 1),
        "backlog_growth_jobs_per_s": round(_slope([(s.t, backlog(s)) for s in inside]), 3),
        "acme_slot_share_pct": round(100.0 * statistics.fmean(s.running_acme for s in inside) / p.slots, 1),
        "backlog_at_end": backlog(result.samples[-1]),
        "wait_p50_s_acme": _round(percentile(acme_waits, 50)),
        "wait_p95_s_acme": _round(percentile(acme_waits, 95)),
        "wait_p50_s_others": _round(percentile(other_waits, 50)),
        "wait_p95_s_others": _round(percentile(other_waits, 95)),
        "submissions": result.submissions,
        "rejected_429_acme": result.rejected_429[0],
        "rejected_429_others": result.rejected_429[1],
        "deduplicated": result.deduplicated,
        "jobs_submitted": len(result.jobs),
        "jobs_finished": counts[FINISHED],
        "jobs_degraded": sum(1 for j in result.jobs if j.degraded),
        "jobs_failed": counts[FAILED],
        "jobs_queued": counts[QUEUED],
        "jobs_running": counts[RUNNING],
        "events": result.events,
    }
    for i, name in enumerate(PROVIDERS):
        out[f"calls_sent_{name}"] = result.samples[-1].sent[i]
        out[f"spend_usd_{name}"] = round(spend[i], 2)
        out[f"provider_429s_{name}"] = result.provider_refusals[i]
    out["spend_usd_total"] = round(sum(spend), 2)
    out["extra_provider_spend_usd"] = round(
        sum(calls * (prices[i + 1] - p.price_a_usd) for i, calls in enumerate(fallback_calls)), 2)
    if has_surge(p):
        mitigated = p.mitigations_from_min * 60.0
        after_break = p.break_at_min * 60.0 < mitigated < p.window_min * 60.0
        out["others_backlog_at_mitigation"] = (queued_at(result, mitigated).queued_others
                                               if after_break else None)
        out["others_recovery_min"] = _round(recovery / 60.0 if recovery is not None else None)
    if has_outage(p):
        hung = [c.held_s for c in hung_calls(result)]
        opened = [t for t, i in result.breaker_opened if i == 0 and t >= p.break_at_min * 60.0]
        out["fallback_share_of_peak_pct"] = round(
            100.0 * (sum(last.succeeded[1:]) - sum(first.succeeded[1:])) / elapsed
            / (p.peak_jobs_per_s * len(STEPS)), 1)
        out["hung_calls"] = len(hung)
        out["hung_call_mean_s"] = _round(statistics.fmean(hung) if hung else None)
        out["hung_call_max_s"] = _round(max(hung) if hung else None)
        out["breaker_a_opened_after_s"] = _round(opened[0] - p.break_at_min * 60.0 if opened else None)
    return out


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def minutes_from_break(result: Result, t: float) -> float:
    return (t - result.params.break_at_min * 60.0) / 60.0


def timeline(result: Result) -> dict[str, tuple]:
    """Per-sample series for charts; x is minutes from the break (negative before it).

    ``calls_per_s`` holds, per provider, the calls sent during the interval ending at each sample.
    """
    samples = result.samples
    slots = result.params.slots
    calls: list[tuple[float, ...]] = []
    for i, provider in enumerate(PROVIDERS):
        series = [0.0]
        for before, now in zip(samples, samples[1:]):
            dt = now.t - before.t
            series.append((now.sent[i] - before.sent[i]) / dt if dt > 0 else 0.0)
        calls.append(tuple(series))
    return {
        "minute": tuple(minutes_from_break(result, s.t) for s in samples),
        "queued_acme": tuple(s.queued_acme for s in samples),
        "queued_others": tuple(s.queued_others for s in samples),
        "running_acme": tuple(s.running_acme for s in samples),
        "running_others": tuple(s.running_others for s in samples),
        "idle": tuple(slots - s.running_acme - s.running_others for s in samples),
        "calls_per_s": tuple(calls),
        "a_breaker_closed": tuple(s.breaker_closed[0] for s in samples),
    }


def wait_p95_by_minute(result: Result, acme: bool) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """p95 queue wait of one group's jobs, grouped by the minute they were claimed (from the break)."""
    by_minute: dict[int, list[float]] = {}
    for j in result.jobs:
        if j.started is None or (j.tenant == ACME) != acme:
            continue
        minute = math.floor(minutes_from_break(result, j.started))
        by_minute.setdefault(minute, []).append(j.started - j.arrived)
    minutes = sorted(by_minute)
    return tuple(m + 0.5 for m in minutes), tuple(percentile(by_minute[m], 95) for m in minutes)


def limits_per_s(p: Params) -> tuple[float, float, float]:
    return (p.limit_a_per_min / 60.0, p.limit_b_per_min / 60.0, p.limit_c_per_min / 60.0)
