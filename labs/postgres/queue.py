"""The job queue's claims on a live PostgreSQL: fair shares across tenants, and two ways to cap a tenant.

Workers are threads, each with its own connection, released together by a barrier. Concurrency is
real: PostgreSQL decides every race. To make the cap race show on a two-core machine each claim
sleeps a random 0..``window_ms`` inside its statement (pg_sleep) between the moment its snapshot is
taken and the moment it writes, which is where production's race hides in microseconds; the
counter row gets exactly the same pause, and still never overshoots.
"""
from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass

import psycopg

from labs.postgres.harness import Scratch, check_ms, check_range, race, scratch_schema

QUEUE_TABLES = (
    """CREATE TABLE tenants (
        tenant_id integer PRIMARY KEY,
        running integer NOT NULL DEFAULT 0,
        max_running integer NOT NULL,
        last_served_at timestamptz NOT NULL)""",
    """CREATE TABLE jobs (
        id bigserial PRIMARY KEY,
        tenant_id integer NOT NULL REFERENCES tenants,
        status text NOT NULL DEFAULT 'queued',
        created_at timestamptz NOT NULL,
        claimed_by integer)""",
    "CREATE INDEX jobs_queued_by_tenant ON jobs (tenant_id, created_at, id) WHERE status = 'queued'",
    "CREATE INDEX jobs_running_by_tenant ON jobs (tenant_id) WHERE status = 'running'",
    "CREATE INDEX jobs_queued_fifo ON jobs (created_at, id) WHERE status = 'queued'",
)

EPOCH = "2026-01-01 13:00:00+00"

# Oldest job first, whoever owns it: a tenant that submits 100x gets about 100x the slots.
CLAIM_FIFO = """
    UPDATE jobs SET status = 'running', claimed_by = %(worker)s
    WHERE id = (SELECT id FROM jobs WHERE status = 'queued'
                ORDER BY created_at, id FETCH FIRST 1 ROW ONLY FOR UPDATE SKIP LOCKED)
    RETURNING tenant_id"""

# Round robin: lock the least recently served tenant below its cap that has work, take its
# oldest job, and bump its counter and service time in the same statement.
CLAIM_FAIR = """
    WITH turn AS (
        SELECT tn.tenant_id FROM tenants tn
        WHERE tn.running < tn.max_running
          AND EXISTS (SELECT 1 FROM jobs w WHERE w.tenant_id = tn.tenant_id AND w.status = 'queued')
        ORDER BY tn.last_served_at LIMIT 1
        FOR UPDATE OF tn SKIP LOCKED),
    oldest AS (
        SELECT j.id FROM jobs j JOIN turn ON j.tenant_id = turn.tenant_id
        WHERE j.status = 'queued' ORDER BY j.created_at, j.id FETCH FIRST 1 ROW ONLY
        FOR UPDATE OF j SKIP LOCKED),
    taken AS (
        UPDATE jobs SET status = 'running', claimed_by = %(worker)s
        FROM oldest WHERE jobs.id = oldest.id
        RETURNING jobs.tenant_id)
    UPDATE tenants SET last_served_at = clock_timestamp(), running = tenants.running + 1
    FROM taken WHERE tenants.tenant_id = taken.tenant_id
    RETURNING taken.tenant_id"""

# The cap as a count of running jobs, read from the statement's snapshot: claims committed by
# other workers after that snapshot (during the pause) are not counted.
CLAIM_COUNTED = """
    WITH seen AS (
        SELECT count(*) AS running FROM jobs WHERE tenant_id = %(tenant)s AND status = 'running'),
    race_window AS (SELECT pg_sleep(%(pause_s)s)),
    oldest AS (
        SELECT j.id FROM jobs j, seen, race_window
        WHERE j.tenant_id = %(tenant)s AND j.status = 'queued' AND seen.running < %(cap)s
        ORDER BY j.created_at, j.id FETCH FIRST 1 ROW ONLY FOR UPDATE OF j SKIP LOCKED)
    UPDATE jobs SET status = 'running', claimed_by = %(worker)s
    FROM oldest WHERE jobs.id = oldest.id RETURNING jobs.id"""

# The cap as a counter on the tenant row: the UPDATE waits for the row lock and re-checks
# ``running < max_running`` against the newest committed value, so the check and the take are one.
TAKE_SLOT = """UPDATE tenants SET running = running + 1
               WHERE tenant_id = %(tenant)s AND running < max_running RETURNING running"""
CLAIM_FOR_SLOT = """
    UPDATE jobs SET status = 'running', claimed_by = %(worker)s
    WHERE id = (SELECT id FROM jobs WHERE tenant_id = %(tenant)s AND status = 'queued'
                ORDER BY created_at, id FETCH FIRST 1 ROW ONLY FOR UPDATE SKIP LOCKED)
    RETURNING id"""


def _create_queue(scratch: Scratch) -> None:
    scratch.execute_script(QUEUE_TABLES)


def _fill(conn: psycopg.Connection, *, tenants: int, cap: int, flood_tenant: int, flood_jobs: int,
          jobs_each: int) -> None:
    """Tenants served longest ago in id order; jobs spread evenly over one hour of submissions."""
    conn.execute("TRUNCATE jobs, tenants RESTART IDENTITY")
    conn.execute("""INSERT INTO tenants (tenant_id, max_running, last_served_at)
                    SELECT t, %s, %s::timestamptz - interval '1 day' + t * interval '1 ms'
                    FROM generate_series(0, %s - 1) AS t""", [cap, EPOCH, tenants])
    conn.execute("""INSERT INTO jobs (tenant_id, created_at)
                    SELECT %s, %s::timestamptz + i * (interval '1 hour' / %s)
                    FROM generate_series(0, %s - 1) AS i""", [flood_tenant, EPOCH, flood_jobs, flood_jobs])
    conn.execute("""INSERT INTO jobs (tenant_id, created_at)
                    SELECT t, %s::timestamptz + (k + t::float8 / %s) * (interval '1 hour' / %s)
                    FROM generate_series(0, %s - 1) AS t, generate_series(0, %s - 1) AS k
                    WHERE t <> %s""", [EPOCH, tenants, jobs_each, tenants, jobs_each, flood_tenant])
    conn.execute("ANALYZE jobs")
    conn.execute("ANALYZE tenants")


# ---- 1. fair claim --------------------------------------------------------------------------

@dataclass(frozen=True)
class FairClaimParams:
    """The brief's set-up: 50 tenants, 200 worker slots, one tenant submitting 100x its share."""

    tenants: int = 50
    slots: int = 200
    workers: int = 10
    flood_jobs: int = 6_000          # the flooding tenant's queued jobs
    jobs_each: int = 10              # every other tenant's queued jobs
    cap: int = 20                    # per-tenant running cap in the fair claim

    def __post_init__(self) -> None:
        check_range("tenants", self.tenants, 2, 200)
        check_range("slots", self.slots, 1, 1_000)
        check_range("workers", self.workers, 1, 32)
        check_range("flood_jobs", self.flood_jobs, 1, 100_000)
        check_range("jobs_each", self.jobs_each, 1, 1_000)
        check_range("cap", self.cap, 1, 1_000)


@dataclass(frozen=True)
class FairClaimResult:
    params: FairClaimParams
    fifo: tuple[int, ...]            # running jobs per tenant after ``slots`` FIFO claims; index 0 floods
    fair: tuple[int, ...]            # the same under the round-robin claim with a cap

    @staticmethod
    def share(counts: tuple[int, ...]) -> float:
        """The flooding tenant's share of the claimed slots, 0..1."""
        return counts[0] / max(1, sum(counts))


def _claim_all(scratch: Scratch, statement: str, p: FairClaimParams) -> tuple[int, ...]:
    tickets = [p.slots]
    lock = threading.Lock()

    def work(index: int, conn: psycopg.Connection, barrier: threading.Barrier) -> Counter:
        got: Counter = Counter()
        barrier.wait()
        while True:
            with lock:
                if tickets[0] == 0:
                    return got
                tickets[0] -= 1
            row = conn.execute(statement, {"worker": index}).fetchone()
            if row is None:            # nothing claimable: hand the ticket back and stop
                with lock:
                    tickets[0] += 1
                return got
            got[row[0]] += 1

    total: Counter = Counter()
    for got in race(scratch, p.workers, work):
        total.update(got)
    return tuple(total.get(t, 0) for t in range(p.tenants))


def run_fair_claim(url: str, params: FairClaimParams = FairClaimParams()) -> FairClaimResult:
    """Fill ``slots`` with concurrent workers twice, FIFO then round robin, on fresh rows each time."""
    p = params
    with scratch_schema(url, "fair") as scratch:
        _create_queue(scratch)
        shares = []
        for statement in (CLAIM_FIFO, CLAIM_FAIR):
            with scratch.connect() as conn:
                _fill(conn, tenants=p.tenants, cap=p.cap, flood_tenant=0, flood_jobs=p.flood_jobs,
                      jobs_each=p.jobs_each)
            shares.append(_claim_all(scratch, statement, p))
    return FairClaimResult(p, *shares)


# ---- 2. counted cap against a counter row ---------------------------------------------------

@dataclass(frozen=True)
class CapRaceParams:
    """10 workers race to start one tenant's queued jobs under a running cap of 20."""

    cap: int = 20
    workers: int = 10
    queued: int = 60                 # the tenant's queued jobs; more than the cap, so the cap decides
    window_ms: float = 2.0           # each claim pauses a random 0..window_ms after its snapshot
    runs: int = 5
    seed: int = 1

    def __post_init__(self) -> None:
        check_range("cap", self.cap, 1, 200)
        check_range("workers", self.workers, 1, 32)
        check_range("queued", self.queued, 1, 5_000)
        check_range("runs", self.runs, 1, 200)
        check_ms("window_ms", self.window_ms, 50.0)
        if self.queued <= self.cap:
            raise ValueError(f"queued ({self.queued}) must exceed the cap ({self.cap}) for the cap to matter")


@dataclass(frozen=True)
class CapRaceResult:
    params: CapRaceParams
    counted: tuple[int, ...]         # running jobs when the workers stopped, one per run
    counter: tuple[int, ...]         # the same with the counter row
    counter_consistent: bool         # the counter always equalled the jobs actually running

    def overshoots(self, which: str) -> tuple[int, ...]:
        return tuple(max(0, n - self.params.cap) for n in getattr(self, which))


def _claim_counted(conn: psycopg.Connection, worker: int, p: CapRaceParams, rng: random.Random) -> bool:
    row = conn.execute(CLAIM_COUNTED, {"tenant": 0, "worker": worker, "cap": p.cap,
                                       "pause_s": rng.uniform(0, p.window_ms) / 1000}).fetchone()
    return row is not None


def _claim_counter(conn: psycopg.Connection, worker: int, p: CapRaceParams, rng: random.Random) -> bool:
    args = {"tenant": 0, "worker": worker}
    with conn.transaction():         # an exception inside rolls the whole claim back
        if conn.execute(TAKE_SLOT, args).fetchone() is None:
            raise _AtCap
        conn.execute("SELECT pg_sleep(%s)", [rng.uniform(0, p.window_ms) / 1000])
        if conn.execute(CLAIM_FOR_SLOT, args).fetchone() is None:
            raise _AtCap               # no job after all: the transaction gives the slot back
    return True


class _AtCap(Exception):
    """Raised inside a transaction to roll it back: no slot (or no job) for this claim."""


def _one_cap_run(scratch: Scratch, p: CapRaceParams, claim, seed: int) -> int:
    with scratch.connect() as conn:
        _fill(conn, tenants=1, cap=p.cap, flood_tenant=0, flood_jobs=p.queued, jobs_each=1)

    def work(index: int, conn: psycopg.Connection, barrier: threading.Barrier) -> int:
        rng = random.Random(seed * 1_000 + index)
        barrier.wait()
        taken = 0
        while True:
            try:
                if not claim(conn, index, p, rng):
                    return taken
            except _AtCap:
                return taken
            taken += 1

    return sum(race(scratch, p.workers, work))


def run_cap_race(url: str, params: CapRaceParams = CapRaceParams()) -> CapRaceResult:
    """``runs`` races per strategy on fresh rows; each run ends when every worker is refused."""
    p = params
    counted, counter, consistent = [], [], True
    with scratch_schema(url, "cap") as scratch:
        _create_queue(scratch)
        for run in range(p.runs):
            counted.append(_one_cap_run(scratch, p, _claim_counted, p.seed + run))
            counter.append(_one_cap_run(scratch, p, _claim_counter, p.seed + run))
            with scratch.connect() as conn:
                running, recorded = conn.execute(
                    "SELECT (SELECT count(*) FROM jobs WHERE status = 'running'), "
                    "(SELECT running FROM tenants WHERE tenant_id = 0)").fetchone()
            consistent = consistent and running == recorded == counter[-1]
    return CapRaceResult(p, tuple(counted), tuple(counter), consistent)
