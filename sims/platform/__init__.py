"""The whole generation platform of drill 13 as one SimPy model: tenants, queue, slots, providers.

Replays Break 1 (a hot tenant) and Break 2 (primary provider outage) with each mitigation switchable.

Units: seconds inside the model, minutes in parameters and summaries where the drill talks in minutes,
US dollars for spend. Assumptions and simplifications, each chosen to keep a peak hour interactive:

* Tenants. ``tenants`` accounts (default 2,000) split by count into Free 65%, Pro 27.5%, Enterprise 7.5%;
  by volume Free sends 30% of jobs, Pro 45%, Enterprise 25%. Inside a plan the rate of the tenant of
  rank k is proportional to 1/sqrt(k), a fixed skew that does not depend on the seed. Tenant 0 is
  Acme (Enterprise) with its own normal rate; every tenant's rates add up to ``peak_jobs_per_s``.
  Arrivals are Poisson: one merged stream for everyone but Acme, and Acme's own stream, whose rate
  is multiplied by ``acme_multiplier`` from ``break_at_min`` on.
* Admission. The token bucket is per tenant with a rate and burst by plan (Enterprise 1 job/s with a
  burst of 60 as in the drill; Free 0.1/s burst 10 and Pro 0.5/s burst 30 are our assumptions).
  During the break a share ``acme_resubmit_share`` of Acme's submissions repeat a job it already
  sent; with idempotency keys they return the first job, without them each becomes a new job.
* Claim (``claim``, see ``CLAIM_RULES``). ``fifo`` takes the oldest queued job. ``capped`` takes
  the oldest job among tenants under their running cap (Free 2, Pro 5, Enterprise 20, Acme
  ``acme_cap``). ``round_robin`` serves the least recently served tenant under its cap, then its
  oldest job, as the drill's claim query does. A pause is a cap of 0 that lasts to the end of the
  run. Claiming takes no time and has no lock contention. The drill's 28-minute recovery assumes
  Acme keeps all 20 of its slots, which ``capped`` reproduces; under ``round_robin`` the many
  tenants with a few queued jobs each come before Acme, so everyone else recovers about as fast
  as with a pause. "Backlog" everywhere means jobs waiting for a slot, not jobs running.
* Switches act from ``mitigations_from_min`` (minutes from the start of the run; 0 means the final
  design is in place all along). Before that moment the baseline design runs: FIFO, no bucket, no
  keys, one 60 s timeout, no pools, no polish switch. ``breakers`` is part of the baseline.
* Workers. ``workers`` x ``slots_per_worker`` slots, one job each. A job is four calls in order
  (outline, draft, expand, polish). A call lasts a lognormal time with mean ``call_mean_s`` and
  shape ``call_sigma`` (p99 near 19 s at the defaults); the first try of each step is drawn when
  the job is submitted, so runs that differ only in capacity do the same work, and a retry draws
  a fresh time. Finished steps are kept: a job whose step
  cannot be served goes back to the queue and later resumes at that step; after
  ``max_job_attempts`` interruptions it fails.
* Providers. A, B, C are tried in that order. A provider's per-minute limit becomes a concurrency
  by Little's law (limit / 60 x ``call_mean_s``: 400, 80, 40). With pools on, a call waits for a
  free slot of an allowed provider (the waiting line is shared); with pools off a call beyond that
  concurrency is refused at once with a 429 and tries the next provider, sleeping
  ``retry_after_s`` after a round in which all refused. No HTTP, no tokens, no per-minute windows.
* Outage. Only A fails: from ``break_at_min`` for ``outage_min`` minutes. For the first ``hang_s``
  it accepts calls and never answers; afterwards it answers 503 after ``error_latency_s``. A call
  in flight when the outage starts stalls too. A hung call ends at the total timeout (60 s, or
  30 s with short timeouts) or, with short timeouts, at the 5 s first-token timeout when no token
  came (a healthy call streams its first token after ``first_token_s``).
* Breaker. One per provider, shared by the whole fleet (the drill's per-process breakers are not
  modelled): opens after ``breaker_failures`` failures in a row, lets one probe through after
  ``breaker_open_s``, closes on a successful probe, and moves all traffic back at once (no staged
  failback). A failed call moves the step to the next provider; ``max_call_attempts`` failed or
  refused tries fail the step.
* Polish switch. While A's breaker is not closed, a job reaching its fourth step skips it and is
  counted as degraded. It follows the breaker, so with breakers off it never fires.
* Spend. A successful call is billed at its provider's price (A $0.005, so $0.02 a job; B and C
  $0.00875, so $0.035 a job); hung, failed and refused calls are free. The daily spend cap of
  Break 3 is not modelled.

How a run is computed, so that 20 seeds of a peak hour take seconds: while no call has failed, a
job's calls are known when it starts, so the first-in-first-out stretch before the mitigations runs
as one loop over the arrivals, and later calm jobs are one event each; from the first call that
will not succeed every job is a SimPy process, one event per call. Where the stretch is likely to stay
calm to its end, it is drawn in bulk instead: NumPy draws the same random numbers at once and arrays do
the queue and the monitor (a peak hour in about 40 ms of CPU). Each shortcut gives exactly the run a
process per job gives (the tests compare them).

The package, one job a module: ``params`` (the one front door: constants, scenarios, checked Params),
``tenants`` (the tenant mix, token buckets, arrival streams), ``records`` (what a run leaves behind),
``model`` (the SimPy model and ``run``), ``calm`` (the calm shortcut, an optimisation), ``bulk`` (the calm
stretch drawn in bulk, an optimisation of the shortcut) and ``stats`` (pure functions of a result). Callers import from ``sims.platform``.
"""
from __future__ import annotations

from sims._budget import PROGRESS_EVERY_EVENTS
from sims.platform import calm
from sims.platform.model import run
from sims.platform.params import (ACME, BOUNDS, CLAIM_RULES, ENTERPRISE, MAX_EVENTS, MAX_SUBMISSIONS, MITIGATIONS,
                                  PLAN_BUCKET_BURST, PLAN_BUCKET_RATE, PLAN_NAMES, PLAN_RUNNING_CAP, PROVIDERS,
                                  SCENARIO_DEFAULT, SCENARIO_TITLES, SCENARIOS, SETTLE_S, STEPS, Params)
from sims.platform.records import (FAILED, FINISHED, QUEUED, RUNNING, STATE_NAMES, FailedCall, JobRecord, Result,
                                   Sample)
from sims.platform.stats import (backlog, focus_window, has_break, has_outage, has_surge, hung_calls,
                                 limits_per_s, minutes_from_break, others_recovery_s, queued_at,
                                 summary, timeline, wait_p95_by_minute, waits)
from sims.platform.tenants import tenant_mix

__all__ = [
    "ACME", "BOUNDS", "CLAIM_RULES", "ENTERPRISE", "FAILED", "FINISHED", "MAX_EVENTS", "MAX_SUBMISSIONS",
    "MITIGATIONS", "PLAN_BUCKET_BURST", "PLAN_BUCKET_RATE", "PLAN_NAMES", "PLAN_RUNNING_CAP",
    "PROGRESS_EVERY_EVENTS", "PROVIDERS", "QUEUED", "RUNNING", "SCENARIO_DEFAULT", "SCENARIO_TITLES",
    "SCENARIOS", "SETTLE_S", "STATE_NAMES", "STEPS", "FailedCall", "JobRecord", "Params", "Result", "Sample",
    "backlog", "calm", "focus_window", "has_break", "has_outage", "has_surge", "hung_calls", "limits_per_s",
    "minutes_from_break", "others_recovery_s", "queued_at", "run", "summary", "tenant_mix",
    "timeline", "wait_p95_by_minute", "waits",
]
