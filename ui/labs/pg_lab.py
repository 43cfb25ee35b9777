"""The PostgreSQL lab page's pieces: pick an experiment, lock a guess, run it on a live PostgreSQL 18.

One embedded server per app process (st.cache_resource); runs take turns, so a reader's held
snapshot never holds back another reader's vacuum and timings are not two runs on two cores.
"""
from __future__ import annotations

import os
import statistics
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from labs.hot_tenant.pg_race import OwnerRaceParams, OwnerRaceResult, RaceAudit, run_owner_race
from labs.hot_tenant.pg_resize import ResizeParams, run_resize_retry
from labs.postgres import experiments as ex
from labs.postgres.server import create_database, serve
from ui import keys
from ui.labs import pg_lab_figures as figures
from ui.sims.guess import digest, guess_lockin, guess_verdict, play_button, plural, waiting_chart
from ui.labs.hot_tenant_charts import stream_figure
from ui.sims.tab import Question

K = keys.register("pg_lab", __name__)   # this module's keys (ui.keys holds only shared ones)
EXPERIMENT = K.kept("experiment")        # PostgreSQL lab's picker, and its ?experiment= query parameter
LINKED = K("linked")                     # the ?experiment= value the picker last followed
RESULTS = K("results")                   # PostgreSQL lab: {guess name: (settings digest, result)} of the last runs
RERUN = K("rerun")                       # PostgreSQL lab: which experiment "Run again" asked to rerun
OWNER_RACE = K("owner_race")             # last DuckDB-beside-PostgreSQL owner race (hot-tenant page)
OWNER_RACE_BUTTON = K.kept("pg_lab_owner_race_button")  # hot-tenant page: race the owners on both engines


def slider_key(experiment: str, name: str) -> str:
    """One PostgreSQL-lab experiment's slider, so experiments sharing a setting name keep their own values."""
    return f"pg_lab::{experiment}::{name}"


def chart_key(name: str) -> str:
    """A PostgreSQL-lab experiment's chart."""
    return f"chart_key::{name}"


def race_chart_key(engine: str) -> str:
    """The owner race's stream chart on one engine (DuckDB or PostgreSQL)."""
    return f"pg_lab_race::{engine}"


def again_button(experiment: str) -> str:
    """A PostgreSQL-lab experiment's "Run again with the same settings" button."""
    return f"again_button::{experiment}"


PG_URL_ENV = "FAULTLINES_PG_URL"       # an existing server to use instead of starting one (tests)
LAB_DATABASE = "pg_lab"
_RUN_LOCK = threading.Lock()
_SERVERS: list[object] = []            # keeps the embedded server's handle alive with the process


@st.cache_resource(show_spinner="Starting an embedded PostgreSQL 18 for the lab (a few seconds, once)…")
def _lab_database(configured: str | None) -> str:
    if configured:
        base = configured
    else:
        server = serve(tempfile.mkdtemp(prefix="faultlines-pglab-"), keep=False)   # deleted at exit
        _SERVERS.append(server)
        base = server.get_uri()
    return create_database(base, LAB_DATABASE)


def lab_url() -> str:
    """The lab database's URL, starting the server on first use."""
    return _lab_database(os.environ.get(PG_URL_ENV) or None)


@dataclass(frozen=True)
class LabView:
    """How the page shows one experiment: its controls, its question and its result."""

    id: str
    title: str
    claim: str
    question: Question
    controls: Callable[[], object]                 # draws the sliders, returns frozen params
    run: Callable[[str, object], object]
    truth: Callable[[object], float]
    show: Callable[[object, float], None]          # draws the result with the guess marked


def _dollars(cents: int) -> str:
    return f"{'−' if cents < 0 else ''}${abs(cents) / 100:,.2f}"


def _sliders(view_id: str, *specs: dict) -> list:
    """One slider per spec: st.slider's arguments plus ``name``, which keys it within this experiment."""
    cols = st.columns(len(specs))
    return [col.slider(**{k: v for k, v in spec.items() if k != "name"},
                       key=slider_key(view_id, spec["name"])) for col, spec in zip(cols, specs)]


def _chart(fig: go.Figure, name: str) -> None:
    st.plotly_chart(fig, width="stretch", key=chart_key(name))


# ---- the experiments, one by one --------------------------------------------------------------

def _cap_controls() -> ex.CapRaceParams:
    workers, window, runs = _sliders(
        "cap_race",
        dict(label="Concurrent workers", min_value=2, max_value=16, value=10, name="workers"),
        dict(label="Race window, ms", min_value=0.0, max_value=5.0, value=2.0, step=0.5, name="window",
             help="Each claim pauses a random 0..window ms after its snapshot, where production's race hides."),
        dict(label="Runs", min_value=1, max_value=50, value=10, name="runs"))
    return ex.CapRaceParams(workers=workers, window_ms=float(window), runs=runs)


def _show_cap(result: ex.CapRaceResult, guess: float) -> None:
    _chart(figures.cap_race_figure(result, guess), "cap_race")
    over = [o for o in result.overshoots("counted") if o]
    st.markdown(
        f"Counted in a subquery, the cap of {result.params.cap} was passed in **{len(over)} of "
        f"{len(result.counted)}** runs, by a different amount each time: from **{min(result.counted)}** to "
        f"**{max(result.counted)}** running, median {statistics.median(result.counted):g}. Each claim counted the "
        "running jobs in its own snapshot, so claims other workers committed meanwhile went uncounted. "
        f"The counter row stopped at **{max(result.counter)}** every time: its `UPDATE … WHERE running < "
        "max_running` waits for the row lock and re-checks the newest value"
        + ("." if result.counter_consistent else ", but the counter drifted from the jobs running: a bug."))


def _fair_controls() -> ex.FairClaimParams:
    workers, flood = _sliders(
        "fair_claim",
        dict(label="Concurrent workers", min_value=1, max_value=16, value=10, name="workers"),
        dict(label="Flooding tenant's queued jobs", min_value=500, max_value=6_000, value=6_000, step=500,
             name="flood"))
    return ex.FairClaimParams(workers=workers, flood_jobs=flood)


def _show_fair(result: ex.FairClaimResult, guess: float) -> None:
    _chart(figures.fair_claim_figure(result, guess), "fair_claim")
    share = round(100 * result.share(result.fifo))
    st.markdown(
        f"FIFO gave the flooding tenant **{result.fifo[0]}** of {sum(result.fifo)} slots ({share}%): it owns "
        f"most of the queue's head. Round robin gave it **{result.fair[0]}**, and every tenant between "
        f"**{min(result.fair)}** and **{max(result.fair)}** (an equal share is "
        f"{sum(result.fair) // len(result.fair)}). With more than one worker a claim can sort tenants on a "
        "slightly old snapshot, so a turn or two is reordered; with one worker the shares are exact.")


def _budget_controls() -> ex.BudgetParams:
    jobs, balance, cost = _sliders(
        "budget",
        dict(label="Jobs at once", min_value=5, max_value=40, value=20, name="jobs"),
        dict(label="Balance left, $", min_value=1, max_value=30, value=10, name="balance"),
        dict(label="Cost of a call, $", min_value=0.5, max_value=3.0, value=1.5, step=0.5, name="cost"))
    cents = round(cost * 100)
    return ex.BudgetParams(jobs=jobs, balance_cents=balance * 100, estimate_cents=cents, actual_cents=cents)


def _show_budget(result: ex.BudgetResult, guess: float) -> None:
    _chart(figures.budget_figure(result, guess), "budget")
    st.markdown(
        f"Checking first, **{plural(result.check.calls, 'job')}** read the same balance before any debit "
        f"landed and all called: {_dollars(result.check.spent_cents)} spent, balance "
        f"{_dollars(result.check.final_balance_cents)}. Reserving, the check and the hold are one "
        f"`UPDATE … WHERE balance >= cost`, so only **{result.reserve.calls}** got a hold "
        f"({_dollars(result.reserve.spent_cents)}); the rest were refused before calling anyone.")


def _refund_controls() -> ex.RefundParams:
    jobs, window = _sliders(
        "refunds",
        dict(label="Failed jobs", min_value=1, max_value=50, value=10, name="jobs"),
        dict(label="Race window, ms", min_value=0.0, max_value=5.0, value=2.0, step=0.5, name="window",
             help="The pause between a path looking for an earlier refund and writing its own."))
    return ex.RefundParams(failed_jobs=jobs, window_ms=float(window))


def _show_refunds(result: ex.RefundResult, guess: float) -> None:
    _chart(figures.refund_figure(result, guess), "refunds")
    st.markdown(
        f"With `UNIQUE (job_id, kind)` the four paths paid **{sum(result.keyed)}** refunds for "
        f"{result.params.failed_jobs} failed jobs: whoever inserted first won, the rest hit the key. "
        f"Checking first without a key they paid **{sum(result.plain)}**, "
        f"{_dollars(result.overpaid_cents('plain'))} too much: every path looked before any had written.")


def _snapshot_controls() -> ex.SnapshotParams:
    (churn,) = _sliders(
        "held_snapshot",
        dict(label="Finished jobs churned while the snapshot is held", min_value=1_000, max_value=300_000,
             value=20_000, step=1_000, name="churn"))
    return ex.SnapshotParams(churn=churn)


def _show_snapshot(result: ex.SnapshotResult, guess: float) -> None:
    _chart(figures.snapshot_figure(result, guess), "held_snapshot")
    held, free = result.held, result.released
    st.markdown(
        f"While a REPEATABLE READ transaction held its snapshot, VACUUM kept **{held.dead_kept:,}** dead "
        f"job rows, and one claim touched **{held.buffers:,}** buffers in {held.median_ms:.3g} ms. Once it "
        f"ended, VACUUM removed them and the claim touched **{free.buffers}** in {free.median_ms:.3g} ms: "
        f"**{result.slowdown:,.0f}×** faster. A replica with `hot_standby_feedback` running a long export "
        "holds the primary's vacuum back in the same way.")


def _owner_controls() -> OwnerRaceParams:
    (after,) = _sliders("owner_race", dict(label="B takes over after A's batch", min_value=1, max_value=10,
                                           value=3, name="after"))
    return OwnerRaceParams(takeover_after=after)


def _audit_line(audit: RaceAudit) -> str:
    ok = audit.gap_free and audit.all_told_stored and audit.fenced
    return (f"**{audit.engine}**: A had **{audit.a_batches}** batches accepted, then B wrote from epoch "
            f"{audit.b_epoch}; {audit.events} events, "
            + ("no gaps, every acknowledged event stored, nothing of A's after B's first."
               if ok else "the audit FAILED: see the chart."))


def show_owner_race(result: OwnerRaceResult, guess: float | None = None) -> None:
    """DuckDB's turnstiled race beside PostgreSQL's row-locked one (usable on the hot-tenant page)."""
    left, right = st.columns(2)
    for col, audit, events in ((left, result.duckdb, result.duckdb_events),
                               (right, result.postgres, result.postgres_events)):
        with col:
            st.plotly_chart(stream_figure(list(events), title=f"{audit.engine}: the stream after the race"),
                            width="stretch", key=race_chart_key(audit.engine))
            st.markdown(_audit_line(audit))
    st.caption("DuckDB's writers of one stream take turns in a turnstile, so A always gets exactly its "
               "batches before B. PostgreSQL has no turnstile: B's takeover waits for the owner row's lock "
               "while A keeps committing, so A's count varies from run to run, and the epoch fence still "
               "refuses A's first append after the takeover.")


def _resize_controls() -> ResizeParams:
    (events,) = _sliders("resize_retry", dict(label="Events retried", min_value=20, max_value=2_000, value=200,
                                              step=20, name="events"))
    return ResizeParams(events=events)


def _show_resize(result, guess: float) -> None:
    _chart(figures.resize_figure(result, guess), "resize_retry")
    st.markdown(
        f"**{result.moved}** of {result.params.events} events land in a different bucket under "
        f"{result.params.buckets_after} buckets. A store keyed by bucket and event id took each of them "
        f"again (**{result.duplicates_by_bucket}** duplicates); keyed by the event id alone it took "
        f"**{result.duplicates_by_id}**. Keep the routing version with the event, or deduplicate by its id.")


VIEWS: dict[str, LabView] = {v.id: v for v in (
    LabView("cap_race", ex.EXPERIMENTS["cap_race"].title, ex.EXPERIMENTS["cap_race"].claim,
            Question("Most jobs running at once under the counted cap of 20", "jobs", 200.0),
            _cap_controls, ex.run_cap_race, lambda r: float(max(r.counted)), _show_cap),
    LabView("fair_claim", ex.EXPERIMENTS["fair_claim"].title, ex.EXPERIMENTS["fair_claim"].claim,
            Question("Slots of 200 the flooding tenant gets under FIFO", "slots", 200.0),
            _fair_controls, ex.run_fair_claim, lambda r: float(r.fifo[0]), _show_fair),
    LabView("budget", ex.EXPERIMENTS["budget"].title, ex.EXPERIMENTS["budget"].claim,
            Question("Jobs that call the provider when each checks the balance first", "jobs", 40.0),
            _budget_controls, ex.run_budget, lambda r: float(r.check.calls), _show_budget),
    LabView("refunds", ex.EXPERIMENTS["refunds"].title, ex.EXPERIMENTS["refunds"].claim,
            Question("Refunds paid in all without the key", "refunds", 200.0),
            _refund_controls, ex.run_refunds, lambda r: float(sum(r.plain)), _show_refunds),
    LabView("held_snapshot", ex.EXPERIMENTS["held_snapshot"].title, ex.EXPERIMENTS["held_snapshot"].claim,
            Question("How many times slower the claim is with the snapshot held", "×", 100_000.0,
                     tolerance_rel=0.5),
            _snapshot_controls, ex.run_held_snapshot, lambda r: r.slowdown, _show_snapshot),
    LabView("owner_race", "Hot tenant: the owner race on PostgreSQL",
            "Without DuckDB's turnstile, row locks and the epoch fence still stop a stale owner appending.",
            Question("Batches owner A gets accepted on PostgreSQL before it is fenced", "batches", 1_000.0,
                     tolerance_rel=0.3),
            _owner_controls, run_owner_race, lambda r: float(r.postgres.a_batches), show_owner_race),
    LabView("resize_retry", "Hot tenant: a retry across 4 → 8 buckets",
            "Retried under the new layout, an event keyed by its bucket is stored twice; keyed by its id, once.",
            Question("Duplicates in the bucket-keyed store", "rows", 2_000.0),
            _resize_controls, run_resize_retry, lambda r: float(r.duplicates_by_bucket), _show_resize),
)}


def _stored(name: str, scope: str) -> object | None:
    results = st.session_state.setdefault(RESULTS, {})
    entry = results.get(name)
    return entry[1] if entry is not None and entry[0] == scope else None


def run_view(view: LabView, params: object) -> object:
    """Run one experiment on the lab database, one run at a time per process."""
    url = lab_url()
    with st.spinner(f"Running “{view.title}” on PostgreSQL 18…"):
        with _RUN_LOCK:
            return view.run(url, params)


def render_view(view: LabView) -> None:
    """Controls, guess, Run, then the chart with the guess marked and the verdict."""
    st.markdown(f"**The claim.** {view.claim}")
    params = view.controls()
    name = f"pg_lab.{view.id}"
    scope = digest("pg_lab", view.id, params)
    q = view.question
    guess = guess_lockin(name, q.label, q.unit, min_value=0.0, max_value=q.max_value, step=q.step, scope=scope)
    played = play_button(name, guess)
    result = _stored(name, scope)
    if played and (result is None or st.session_state.pop(RERUN, None) == name):
        try:
            result = run_view(view, params)
        except Exception as exc:  # the server or a worker failed: say so instead of a traceback
            st.error(f"The run failed: {type(exc).__name__}: {exc}")
            return
        st.session_state[RESULTS][name] = (scope, result)
    if not played or result is None:
        waiting_chart(name, height=HEIGHT_EMPTY)
        st.caption("Nothing has run yet. Every run starts real worker threads, each with its own "
                   "connection, against an embedded PostgreSQL 18 on this server.")
        return
    view.show(result, guess)
    guess_verdict(guess, view.truth(result), q.unit, tolerance_rel=q.tolerance_rel)
    if st.button("Run again with the same settings", key=again_button(view.id),
                 help="Races come out differently each time: run it again to see the spread."):
        st.session_state[RERUN] = name
        st.rerun()


HEIGHT_EMPTY = 300


def pick_view() -> LabView:
    """The experiment picker, kept in ?experiment= so a drill can link straight to one.

    A link's experiment is taken once per new value, so a reader's own pick is not undone on rerun.
    """
    wanted = st.query_params.get(EXPERIMENT)
    if wanted in VIEWS and wanted != st.session_state.get(LINKED):
        st.session_state[EXPERIMENT] = wanted
    chosen = st.selectbox("Experiment", list(VIEWS), format_func=lambda v: VIEWS[v].title,
                          key=EXPERIMENT) or next(iter(VIEWS))
    st.query_params[EXPERIMENT] = chosen
    st.session_state[LINKED] = chosen
    return VIEWS[chosen]


def lab_link(experiment_id: str, label: str | None = None) -> None:
    """A link that opens the lab on one experiment, for a drill's reveal or another page."""
    view = VIEWS[experiment_id]
    st.page_link("pages/pg_lab.py", label=label or f"Run it on PostgreSQL: {view.title}", icon=":material/database:",
                 query_params={EXPERIMENT: experiment_id})


def render_owner_race_beside_duckdb() -> None:
    """For the hot-tenant page: one button that races both engines and shows them side by side."""
    if st.button("Race the owners on DuckDB and on PostgreSQL", key=OWNER_RACE_BUTTON):
        st.session_state[OWNER_RACE] = run_view(VIEWS["owner_race"], OwnerRaceParams())
    result = st.session_state.get(OWNER_RACE)
    if result is not None:
        show_owner_race(result)
