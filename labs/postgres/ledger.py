"""Money on a live PostgreSQL: a budget checked before each call against one reserved up front, and
refunds that several recovery paths send for the same failed jobs, with and without a unique key.

Workers are threads with their own connections, released together by a barrier. The budget's
provider call is a pg_sleep of ``call_ms`` between the check and the debit (the real call takes
seconds); each refund path without a key pauses a random 0..``window_ms`` between looking for an
earlier refund and writing its own, so the check-then-act race shows on a two-core machine.
"""
from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass

import psycopg

from labs.postgres.harness import check_ms, check_range, race, scratch_schema

# ---- 3. budget: check before the call, or reserve then settle --------------------------------

WALLET_TABLES = (
    "CREATE TABLE wallets (tenant_id integer PRIMARY KEY, balance_cents bigint NOT NULL)",
    """CREATE TABLE holds (
        job_id integer PRIMARY KEY,
        tenant_id integer NOT NULL REFERENCES wallets,
        reserved_cents bigint NOT NULL,
        spent_cents bigint,
        settled boolean NOT NULL DEFAULT false)""",
)

# Check-then-act: the read and the debit are two statements with the provider call in between.
READ_BALANCE = "SELECT balance_cents FROM wallets WHERE tenant_id = %s"
DEBIT = "UPDATE wallets SET balance_cents = balance_cents - %s WHERE tenant_id = %s"

# Reserve: the check and the hold are one statement on the wallet row; a reservation that no
# longer fits matches no row once the earlier holds have committed.
RESERVE = """WITH held AS (
                 UPDATE wallets SET balance_cents = balance_cents - %(estimate)s
                 WHERE tenant_id = %(tenant)s AND balance_cents >= %(estimate)s
                 RETURNING tenant_id)
             INSERT INTO holds (job_id, tenant_id, reserved_cents)
             SELECT %(job)s, tenant_id, %(estimate)s FROM held RETURNING job_id"""
# Settle: record what the call really cost and give back the unused part of the hold.
SETTLE = """WITH done AS (
                UPDATE holds SET spent_cents = %(actual)s, settled = true
                WHERE job_id = %(job)s AND NOT settled
                RETURNING tenant_id, reserved_cents)
            UPDATE wallets SET balance_cents = wallets.balance_cents + done.reserved_cents - %(actual)s
            FROM done WHERE wallets.tenant_id = done.tenant_id"""


@dataclass(frozen=True)
class BudgetParams:
    """20 jobs at once against $10 left; each provider call is estimated (and costs) $1.50."""

    jobs: int = 20
    balance_cents: int = 1_000
    estimate_cents: int = 150
    actual_cents: int = 150          # what a call turns out to cost; settle returns the difference
    call_ms: float = 20.0

    def __post_init__(self) -> None:
        check_range("jobs", self.jobs, 1, 64)
        check_range("balance_cents", self.balance_cents, 0, 10_000_000)
        check_range("estimate_cents", self.estimate_cents, 1, 1_000_000)
        check_range("actual_cents", self.actual_cents, 0, self.estimate_cents)
        check_ms("call_ms", self.call_ms, 500.0)


@dataclass(frozen=True)
class BudgetOutcome:
    calls: int                       # jobs that went ahead and called the provider
    spent_cents: int
    final_balance_cents: int


@dataclass(frozen=True)
class BudgetResult:
    params: BudgetParams
    check: BudgetOutcome
    reserve: BudgetOutcome

    @property
    def affordable(self) -> int:
        """How many calls the balance really covers at the estimate."""
        return self.params.balance_cents // self.params.estimate_cents


def _check_first(index: int, conn: psycopg.Connection, barrier: threading.Barrier, p: BudgetParams) -> int:
    barrier.wait()
    (balance,) = conn.execute(READ_BALANCE, [1]).fetchone()
    if balance < p.estimate_cents:
        return 0
    conn.execute("SELECT pg_sleep(%s)", [p.call_ms / 1000])       # the provider call
    conn.execute(DEBIT, [p.actual_cents, 1])
    return p.actual_cents


def _reserve_first(index: int, conn: psycopg.Connection, barrier: threading.Barrier, p: BudgetParams) -> int:
    barrier.wait()
    if conn.execute(RESERVE, {"estimate": p.estimate_cents, "tenant": 1, "job": index}).fetchone() is None:
        return 0
    conn.execute("SELECT pg_sleep(%s)", [p.call_ms / 1000])       # the provider call
    conn.execute(SETTLE, {"actual": p.actual_cents, "job": index})
    return p.actual_cents


def run_budget(url: str, params: BudgetParams = BudgetParams()) -> BudgetResult:
    """The same jobs against the same balance, once per strategy, on fresh rows."""
    p = params
    outcomes = []
    with scratch_schema(url, "budget") as scratch:
        scratch.execute_script(WALLET_TABLES)
        for strategy in (_check_first, _reserve_first):
            with scratch.connect() as conn:
                conn.execute("TRUNCATE holds, wallets")
                conn.execute("INSERT INTO wallets VALUES (1, %s)", [p.balance_cents])
            spent = race(scratch, p.jobs, lambda i, conn, barrier: strategy(i, conn, barrier, p))
            with scratch.connect() as conn:
                (balance,) = conn.execute(READ_BALANCE, [1]).fetchone()
            outcomes.append(BudgetOutcome(sum(1 for s in spent if s), sum(spent), balance))
    return BudgetResult(p, *outcomes)


# ---- 4. refunds from four recovery paths ----------------------------------------------------

PATHS = ("webhook", "retry worker", "reconciler", "support tool")

REFUND_TABLES = (
    # With the key: one refund per (job, kind) is the table's own rule.
    """CREATE TABLE ledger_keyed (
        id bigserial PRIMARY KEY, job_id integer NOT NULL, kind text NOT NULL,
        amount_cents bigint NOT NULL, paid_by text NOT NULL,
        UNIQUE (job_id, kind))""",
    # Without it: each path looks for an earlier refund first, and trusts what it saw.
    """CREATE TABLE ledger_plain (
        id bigserial PRIMARY KEY, job_id integer NOT NULL, kind text NOT NULL,
        amount_cents bigint NOT NULL, paid_by text NOT NULL)""",
)

REFUND_KEYED = """INSERT INTO ledger_keyed (job_id, kind, amount_cents, paid_by)
                  VALUES (%(job)s, 'refund', %(amount)s, %(path)s)
                  ON CONFLICT (job_id, kind) DO NOTHING RETURNING id"""
ALREADY_REFUNDED = "SELECT 1 FROM ledger_plain WHERE job_id = %(job)s AND kind = 'refund'"
REFUND_PLAIN = """INSERT INTO ledger_plain (job_id, kind, amount_cents, paid_by)
                  SELECT %(job)s, 'refund', %(amount)s, %(path)s
                  FROM pg_sleep(%(pause_s)s) RETURNING id"""


@dataclass(frozen=True)
class RefundParams:
    """Failed jobs that every one of the four recovery paths tries to refund, at the same time."""

    failed_jobs: int = 10
    amount_cents: int = 150
    window_ms: float = 2.0
    seed: int = 1

    def __post_init__(self) -> None:
        check_range("failed_jobs", self.failed_jobs, 1, 500)
        check_range("amount_cents", self.amount_cents, 1, 1_000_000)
        check_ms("window_ms", self.window_ms, 50.0)


@dataclass(frozen=True)
class RefundResult:
    params: RefundParams
    keyed: tuple[int, ...]           # refunds paid per failed job with UNIQUE (job_id, kind)
    plain: tuple[int, ...]           # the same when each path only checks first
    keyed_by_path: tuple[tuple[str, int], ...]
    plain_by_path: tuple[tuple[str, int], ...]

    def overpaid_cents(self, which: str) -> int:
        return sum(n - 1 for n in getattr(self, which) if n > 1) * self.params.amount_cents


def _refund_path(index: int, conn: psycopg.Connection, barrier: threading.Barrier, p: RefundParams) -> None:
    rng = random.Random(p.seed * 100 + index)
    path = PATHS[index]
    for job in range(p.failed_jobs):
        args = {"job": job, "amount": p.amount_cents, "path": path,
                "pause_s": rng.uniform(0, p.window_ms) / 1000}
        barrier.wait()                     # all four paths reach the same failed job together
        conn.execute(REFUND_KEYED, args)
        if conn.execute(ALREADY_REFUNDED, args).fetchone() is None:
            conn.execute(REFUND_PLAIN, args)


def run_refunds(url: str, params: RefundParams = RefundParams()) -> RefundResult:
    p = params
    with scratch_schema(url, "refund") as scratch:
        scratch.execute_script(REFUND_TABLES)
        race(scratch, len(PATHS), lambda i, conn, barrier: _refund_path(i, conn, barrier, p))
        with scratch.connect() as conn:
            per_job, per_path = [], []
            for table in ("ledger_keyed", "ledger_plain"):
                counts = dict(conn.execute(f"SELECT job_id, count(*) FROM {table} GROUP BY job_id").fetchall())
                per_job.append(tuple(counts.get(j, 0) for j in range(p.failed_jobs)))
                paid = Counter(dict(conn.execute(f"SELECT paid_by, count(*) FROM {table} GROUP BY paid_by")))
                per_path.append(tuple((path, paid.get(path, 0)) for path in PATHS))
    return RefundResult(p, per_job[0], per_job[1], per_path[0], per_path[1])
