"""Every PostgreSQL lab experiment behind one front door: frozen params in, frozen result out.

Each runner takes the URL of a live server (``labs.postgres.server``) and makes its own schema.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labs.postgres.ledger import BudgetParams, BudgetResult, RefundParams, RefundResult, run_budget, run_refunds
from labs.postgres.queue import (CapRaceParams, CapRaceResult, FairClaimParams, FairClaimResult, run_cap_race,
                                 run_fair_claim)
from labs.postgres.snapshot import SnapshotParams, SnapshotResult, run_held_snapshot


@dataclass(frozen=True)
class Experiment:
    id: str
    title: str
    claim: str                                   # the brief's claim, in one line
    params_type: type
    run: Callable[[str, object], object]


EXPERIMENTS: dict[str, Experiment] = {e.id: e for e in (
    Experiment("fair_claim", "Fair claim with SKIP LOCKED",
               "Round robin across tenants gives each an equal share of the slots; FIFO hands them to the flood.",
               FairClaimParams, run_fair_claim),
    Experiment("cap_race", "Counted cap against a counter row",
               "A running cap counted in a subquery overshoots under concurrent workers; a counter row holds.",
               CapRaceParams, run_cap_race),
    Experiment("budget", "Budget: check first, or reserve then settle",
               "Checking the balance before each call lets every concurrent job through; reserving lets only "
               "the affordable ones.", BudgetParams, run_budget),
    Experiment("refunds", "Refunds from four recovery paths",
               "A refund keyed by (job, kind) is paid once however many paths send it; without the key, "
               "more than once.", RefundParams, run_refunds),
    Experiment("held_snapshot", "Held snapshot and dead job rows",
               "An old snapshot keeps finished jobs' dead rows, and the claim query steps over every one.",
               SnapshotParams, run_held_snapshot),
)}

__all__ = [
    "EXPERIMENTS", "BudgetParams", "BudgetResult", "CapRaceParams", "CapRaceResult", "Experiment",
    "FairClaimParams", "FairClaimResult", "RefundParams", "RefundResult", "SnapshotParams", "SnapshotResult",
    "run_budget", "run_cap_race", "run_fair_claim", "run_held_snapshot", "run_refunds",
]
