"""Bench: websocket candidates in one live room on the supervised stack, from the instructor's Close to every page
showing the room's answers. Prints figures; asserts nothing about time.

    python -m bench.bench_live_ws --seats 200 --processes 3 [--runs 10]

Each seat is a bench.load_ws session: it opens /live, joins with a handle and the class's cohort, then does what
the browser's frontend does: it draws every run the server sends, including the fragment runs the server starts
by itself (ui.runtime.fragment_push: the process's listener reruns a room's part after a move), and asks for each
`run_every` fragment's rerun at its interval. The instructor's moves go through the store, as the console's
buttons do. All seats but one lock in a number (so the question does not close itself; the Lock in reruns its
fragment, as the browser asks), every page then sits idle for --idle s, then Close; the figure per seat runs
from the commit of Close to the end of the script run whose page draws "N guesses of M in the room". Server
CPU is the app processes' user+system time (from /proc) over each window, PostgreSQL's beside it; the bench's
own CPU is printed too, since on one box the generator competes with the servers.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.load_ws import (
    ProtocolError,
    StreamlitSession,
    submit_form,
)
from bench.bench_load import revision_name, tree_at
from deploy.stack import ROOT, Stack
from drills import live
from drills.backends import open_store
from drills.store.live import CLOSE, NEXT
from drills.loader import load_catalogue
from drills.scope import ScopedDrills
from ui.live.common import PUSHED_POLL_S

DRILL = "one_tenant~break2"
QUESTION = "jobs_in_flight"
PHASE_S = 120.0   # a page that has not shown a move by then is reported as never showing it
MAX_TIMER_S = 60.0   # a run_every longer than this (the sidebar clock's) never comes due in a bench
CLOSE_S = 5.0   # a seat's websocket close given this long after the figures, then dropped


def _cpu_s(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks   # utime, stime
        except OSError:
            continue
    return total


def _profilers(prefix: str | None, pids: list[int]) -> list[subprocess.Popen]:
    """py-spy on each app process (samples holding the GIL, collapsed stacks), or nothing without a prefix."""
    if not prefix:
        return []
    spy = _py_spy()
    return [subprocess.Popen([str(spy), "record", "--pid", str(pid), "--gil", "--nonblocking", "--format", "raw",
                              "--output", f"{prefix}-app-{n}.txt"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for n, pid in enumerate(pids, 1)]


def _py_spy() -> str:
    """py-spy beside this Python, else the one on PATH (installed in a venv of its own)."""
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else (shutil.which("py-spy") or "py-spy")


def _keep_evidence(stack: Stack, into: Path) -> str:
    """When pages never showed a move: each app process's threads as py-spy sees them (a stuck lock, a listener
    that stopped) and the app logs, copied out of the stack's run directory before it is removed."""
    into.mkdir(parents=True, exist_ok=True)
    for n, pid in enumerate(stack.app_pids, 1):
        try:
            dump = subprocess.run([_py_spy(), "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
            (into / f"app-{n}.py-spy.txt").write_text(dump.stdout + dump.stderr)
        except (OSError, subprocess.TimeoutExpired) as problem:
            (into / f"app-{n}.py-spy.txt").write_text(f"py-spy dump failed: {problem}")
    logs = stack.run_dir / "logs"
    if logs.exists():
        shutil.copytree(logs, into / "logs", dirs_exist_ok=True)
    return str(into)


def _log_tally(stack: Stack) -> str:
    """What the app processes logged about the room's pushes (ui.live.push, ui.live.seat) over the run, and the
    watchdog's kills (a process too busy to answer its health check for 4 s is taken for hung)."""
    text = "".join(p.read_text(errors="replace") for p in (stack.run_dir / "logs").glob("app-*.log"))
    found = {"rounds of pushes sent again": text.count("pages had not drawn the move"),
             "reads older than the move heard": text.count("after hearing step"),
             "pages that lost a push and poll": text.count("it polls from now on"),
             "tracebacks": text.count("Traceback")}
    watchdog = stack.run_dir / "logs" / "watchdog.log"
    found["app processes the watchdog killed"] = (watchdog.read_text(errors="replace").count("SIGKILL")
                                                  if watchdog.exists() else 0)
    return ", ".join(f"{n} {what}" for what, n in found.items())


def _stop(profilers: list[subprocess.Popen]) -> None:
    for spy in profilers:
        spy.send_signal(signal.SIGINT)   # py-spy writes its file on SIGINT
    for spy in profilers:
        spy.wait(timeout=30)


def _family(pid: int | None) -> list[int]:
    """`pid` and its descendants (PostgreSQL's backends are children of the postmaster)."""
    if pid is None:
        return []
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found = [pid]
    for child, parent in sorted(parents.items()):
        if parent in found:
            found.append(child)
    return found


async def _within(budget_s: float, stop: asyncio.Event, room: list, follow) -> list:
    """Every seat's `follow(seat)`, given up after `budget_s` (stop set): a page that never shows is reported."""
    tasks = [asyncio.create_task(follow(s)) for s in room]
    await asyncio.wait(tasks, timeout=budget_s)
    stop.set()
    return await asyncio.gather(*tasks)


def _missing(room: list, seen: list) -> str:
    stuck = [s for s, x in zip(room, seen) if x is None]
    if not stuck:
        return ""
    page = stuck[0].session.page
    shown = [e.body[:60] for kind in ("markdown", "alert") for e in page.of_kind(kind)][-4:]
    shown += [f"{x.type}: {x.message[:100]}" for x in page.of_kind("exception")]
    return (f"; {len(stuck)} pages never did, the first (seat {stuck[0].n}) ends: " + " | ".join(shown)
            + "".join(f"\n    {s.describe()}" for s in stuck[:5]))


async def _leave(seat: "Seat") -> None:
    """Close a seat's websocket, or drop it after CLOSE_S: a seat no longer read has the server's pushes and ticks
    filling its socket, and a close that waits on them held a 500-seat run after its figures, one seat at a time."""
    try:
        await asyncio.wait_for(seat.session.close(), CLOSE_S)
    except (TimeoutError, OSError):
        seat.session.websocket.transport.abort()


def _shows(session: StreamlitSession, prefix: str) -> bool:
    return any(prefix in e.body for kind in ("markdown", "alert") for e in session.page.of_kind(kind))


class Seat:
    """One candidate's browser tab on /live, doing what the frontend does between the candidate's own actions."""

    def __init__(self, url: str, n: int, *, timers: bool = True):
        self.url, self.n = url, n
        self.cookie = f"fl_backend=live-{n}-{secrets.token_hex(6)}"
        self.session: StreamlitSession | None = None
        self.timers = timers   # False: never asks for a run_every rerun (a test of what the server pushes)
        self.due: dict[str, float] = {}   # run_every fragment -> when the frontend asks for its next rerun
        self.run_fragments: tuple[str, ...] = ()   # the fragments the last run read ran alone (empty: the page)
        self.asked = 0   # run_every reruns asked for
        self.error = ""
        self.session_id = ""   # the server's id of this browser session (its logs name it)
        self.runs: list[tuple[float, tuple[str, ...], bool]] = []   # (when, fragments, finished) of each run

    def describe(self) -> str:
        """What this page saw of the server lately, for a page that never showed a move."""
        now = time.monotonic()
        runs = ", ".join(f"{now - at:.1f}s ago {'+'.join(f[-6:] for f in fragments) or 'page'}"
                         f"{'' if done else ' (unfinished)'}" for at, fragments, done in self.runs[-40:]
                         if fragments != self.runs[-1][1] or at == self.runs[-1][0])
        return (f"seat {self.n} session {self.session_id}: timers {sorted(self.session.auto_reruns.values())}, "
                f"asked {self.asked} reruns; last runs: {runs}")

    async def join(self, cohort: str) -> None:
        self.session = await StreamlitSession.open(self.url, cookie=self.cookie)
        await self.session.rerun(page_name="live")
        page = self.session.page
        handle, code = page.widget("text_input", "Your handle"), page.widget("text_input", "Cohort code")
        await self.session.rerun(submit_form(page, handle.form_id, {handle.id: f"seat-{self.n}", code.id: cohort}))
        if not _shows(self.session, "You are in the waiting room"):
            raise ProtocolError(f"seat {self.n} did not reach the waiting room{self.session.page.problems()}")
        self._time_fragments()

    def _time_fragments(self) -> None:
        """The frontend's run_every timers, started afresh by a whole-app run (the sidebar clock's, minutes
        long, never come due in a bench)."""
        now = time.monotonic()
        self.due = {fid: self.due.get(fid, now + every) for fid, every in self.session.auto_reruns.items()
                    if every <= MAX_TIMER_S and self.timers}

    def _read(self, raw: bytes) -> bool:
        """One message of a run the server sends, asked for or not (a pushed fragment run): True at its end."""
        kind, forward, finished = self.session.apply_pushed(raw)
        if kind == "new_session":
            self.session_id = forward.new_session.initialize.session_id or self.session_id
            self.run_fragments = tuple(forward.metadata.run.fragment_ids)
            self.runs = [*self.runs[-40:], (time.monotonic(), self.run_fragments, False)]
            if not self.run_fragments:   # a whole-app run: the frontend's timers start afresh
                self.due = {}
        elif kind == "auto_rerun":
            self._time_fragments()
        if finished and self.runs:
            self.runs[-1] = (*self.runs[-1][:2], True)
        return finished

    async def follow_until(self, shown, stop: asyncio.Event) -> float | None:
        """Until a finished run draws what `shown(session)` looks for (its time): draw every run the server
        sends, those it pushes by itself included, and ask for each run_every fragment's rerun when it is due."""
        while not stop.is_set():
            now = time.monotonic()
            for fid, due in list(self.due.items()):
                if due <= now:
                    self.due[fid] = due + self.session.auto_reruns[fid]   # setInterval: from when it was due
                    self.asked += 1
                    await self.session.ask_fragment_rerun(fid)
            wait = min([0.5, *(due - now for due in self.due.values())])
            try:
                # asyncio.timeout, not wait_for: wait_for wraps every recv in a task of its own, and 500 seats
                # reading so were most of the bench's own CPU, taken from the 2 cores the app processes share
                async with asyncio.timeout(max(0.0, wait)):
                    raw = await self.session.websocket.recv()
            except TimeoutError:
                continue
            if self._read(raw) and shown(self.session):
                return time.monotonic()
        return None

    async def lock_in(self, value: str) -> None:
        """Type the guess and press Enter: the form's own fragment reruns, as the frontend asks for it."""
        box = self.session.page.widget("text_input", re.compile("^Best guess"))
        await self.session.rerun(submit_form(self.session.page, box.form_id, {box.id: value}),
                                 fragment_id=self.session.page.fragment_of(box))
        self._time_fragments()


async def _bench(url: str, database: str, seats: int, app_pids: list[int], db_pid: int | None,
                 profile: str | None, idle_s: float, evidence=None) -> dict[str, float]:
    """Runs the room and prints its figures; returns the Close's (p50, p95, max in s, server CPU in s).
    `evidence()` keeps the processes' stacks and logs when a page never shows the Close, and says where."""
    store = open_store(database)
    loaded = ScopedDrills(load_catalogue().drills)[DRILL]
    questions = live.questions_in_order(loaded)
    try:
        info, _ = store.create_class("Bench night", "prof@bench.test")
        session = store.start_live_session(info.cohort, DRILL, "prof")
        room = [Seat(url, n) for n in range(seats)]
        t = time.monotonic()
        joined = await asyncio.gather(*(s.join(info.cohort) for s in room), return_exceptions=True)
        failed = [(s.n, j) for s, j in zip(room, joined) if isinstance(j, Exception)]
        room = [s for s, j in zip(room, joined) if not isinstance(j, Exception)]
        print(f"  {len(room)} seats joined in {time.monotonic() - t:.1f} s ({len(failed)} failed"
              + (f", first: {type(failed[0][1]).__name__}: {str(failed[0][1])[:160]}" if failed else "") + ")")

        stop = asyncio.Event()
        opened = store.live_move(session.id, NEXT, seen_version=store.live_session(session.id).version,
                                 questions=questions, actor="prof")
        t = time.monotonic()
        shown = asyncio.Event()
        seen = await _within(PHASE_S, shown, room, lambda s: s.follow_until(lambda x: any(
            w.label.startswith("Best guess") for w in x.page.of_kind("text_input")), shown))
        print(f"  open -> every page shows the question: max {max(x - t for x in seen if x):.2f} s"
              + _missing(room, seen))
        lockers = room[1:]   # seat 0 stays present without locking in, so only Close ends the question
        keep = asyncio.Event()   # seat 0's page keeps polling (and beating) meanwhile: it stays present
        keeper = asyncio.create_task(room[0].follow_until(lambda x: False, keep))
        t = time.monotonic()
        await asyncio.gather(*(s.lock_in(str(150 + s.n % 20)) for s in lockers))
        print(f"  {len(lockers)} lock-ins confirmed in {time.monotonic() - t:.1f} s")
        keep.set()
        await keeper
        if store.live_session(session.id).state != "open":
            print("  (the question closed itself before the instructor's Close: seat 0 counted as away)")
        if idle_s > 0:
            idle = asyncio.Event()
            cpu_before, db_before = _cpu_s(app_pids), _cpu_s(_family(db_pid))
            followers = [asyncio.create_task(s.follow_until(lambda x: False, idle)) for s in room]
            await asyncio.sleep(idle_s)
            idle.set()
            await asyncio.gather(*followers)
            print(f"  idle, every page open and nothing moving, {idle_s:.0f} s: server CPU "
                  f"{_cpu_s(app_pids) - cpu_before:.1f} s ({100 * (_cpu_s(app_pids) - cpu_before) / idle_s:.0f}% "
                  f"of one core), PostgreSQL's {_cpu_s(_family(db_pid)) - db_before:.1f} s")

        # Any count: a lock-in the bench took for confirmed but the store lost shows on every page as one guess
        # fewer, which is a lost press (counted below), not a page that missed the Close.
        expected = "guesses of"
        profilers = _profilers(profile, app_pids)
        if profilers:
            await asyncio.sleep(1.0)   # py-spy attached before the Close
        db_before = _cpu_s(_family(db_pid))
        cpu_before, own_before = _cpu_s(app_pids), time.process_time()
        closed_at = time.monotonic()
        store.live_move(session.id, CLOSE, seen_version=opened.version, questions=questions, actor="prof")
        after = time.monotonic()
        drawn = asyncio.Event()
        shown = await _within(PHASE_S, drawn, room, lambda s: s.follow_until(lambda x: _shows(x, expected), drawn))
        # The CPU is read once the last page showed or the bench gave up on the rest: with a page missing, the
        # window is the whole wait, not the time to the last page shown.
        window = (time.monotonic() if None in shown else max(shown)) - closed_at
        cpu = _cpu_s(app_pids) - cpu_before
        own = time.process_time() - own_before
        db = _cpu_s(_family(db_pid)) - db_before
        _stop(profilers)
        delays = sorted(x - closed_at for x in shown if x is not None) or [float("nan")]
        q = statistics.quantiles(delays, n=20) if len(delays) > 1 else delays * 19
        counts = sorted({m.body.split(" guesses of")[0].rsplit("[", 1)[-1] for s in room
                         for m in s.session.page.of_kind("markdown") if " guesses of" in m.body})
        if counts != [str(len(lockers))]:
            print(f"  the pages count {' / '.join(counts) or 'no'} guesses, not the {len(lockers)} lock-ins confirmed")
        print(f"  instructor's Close (store commit): {1000 * (after - closed_at):.1f} ms; the machine's load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"  close -> page shows the room's answers, {sum(x is not None for x in shown)} of {len(room)} pages: "
              f"first {delays[0]:.2f} s, p10 {q[1]:.2f} s, p50 {statistics.median(delays):.2f} s, p95 {q[18]:.2f} s, "
              f"max {delays[-1]:.2f} s" + _missing(room, shown))
        if None in shown and evidence is not None:
            print(f"  the app processes' stacks and logs: {evidence()}")
        print(f"  server CPU over those {window:.1f} s: {cpu:.1f} s across {len(app_pids)} app processes "
              f"({100 * cpu / window:.0f}% of one core); PostgreSQL's: {db:.1f} s; the bench's own CPU: {own:.1f} s")
        stop.set()
        await asyncio.gather(*(_leave(s) for s in room))
        return {"p50": statistics.median(delays), "p95": q[18], "max": delays[-1], "cpu": cpu,
                "missing": sum(x is None for x in shown) + len(failed), "seated": seats,
                "pages": sum(x is not None for x in shown)}
    finally:
        store.close()


def _over_runs(runs: list[dict[str, float]]) -> dict[str, float]:
    """Several rooms as one row: pages summed, the worst room's p95 and slowest page, CPU summed."""
    return {"p50": statistics.median(r["p50"] for r in runs), "p95": max(r["p95"] for r in runs),
            "max": max(r["max"] for r in runs), "cpu": sum(r["cpu"] for r in runs),
            "missing": sum(r["missing"] for r in runs), "seated": sum(r["seated"] for r in runs),
            "pages": sum(r["pages"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=200)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds every page sits open before the Close")
    parser.add_argument("--profile", metavar="PREFIX",
                        help="py-spy each app process from Close to the last page (PREFIX-app-N.txt, collapsed)")
    parser.add_argument("--evidence", metavar="DIR", default=str(Path(tempfile.gettempdir()) / "bench_live_ws"),
                        help="where a run that loses a page keeps the app processes' py-spy dumps and logs")
    parser.add_argument("--runs", type=int, default=1,
                        help="rooms run one after another on each stack (a new class each), then a line over all")
    parser.add_argument("--reference", metavar="REV",
                        help="also run the room on the app as of REV (git archive), first, in the same run: the "
                             "before of a before/after, with this tree's bench and stack")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="faultlines-ref-") as scratch:
        apps = [("this tree", ROOT)]
        if args.reference:
            apps.insert(0, (revision_name(args.reference), tree_at(args.reference, Path(scratch))))
        figures = {}
        for app, root in apps:
            with Stack(args.processes, root=root) as stack:
                print(f"live room over websockets, {app}: {args.seats} seats, {args.processes} app processes behind "
                      f"nginx (PostgreSQL, LISTEN/NOTIFY, pages rerun by the server), fallback poll {PUSHED_POLL_S} s",
                      flush=True)
                runs = []
                for run in range(args.runs):
                    if args.runs > 1:
                        print(f" room {run + 1} of {args.runs}", flush=True)
                    kept = Path(args.evidence) / f"{time.strftime('%Y%m%d-%H%M%S')}-{app.replace(' ', '-')}"
                    runs.append(asyncio.run(_bench(stack.url, stack.database, args.seats, stack.app_pids,
                                                   stack.pid_of("postgres"), args.profile, args.idle,
                                                   lambda kept=kept: _keep_evidence(stack, kept))))
                figures[app] = runs[-1] if len(runs) == 1 else _over_runs(runs)
                if len(runs) > 1:
                    per_room = " ".join(f"{r['p95']:.2f}" for r in runs)
                    print(f"  over {len(runs)} rooms of {args.seats} seats: {figures[app]['pages']} of "
                          f"{figures[app]['seated']} pages showed the Close; p95 per room "
                          f"{per_room} s (worst {figures[app]['p95']:.2f} s), "
                          f"slowest page {figures[app]['max']:.2f} s", flush=True)
                print(f"  the app logs: {_log_tally(stack)}", flush=True)
    if len(figures) == 2:
        (before, b), (after, a) = figures.items()
        ratio = lambda x, y: f"{x / y:.2f}x" if y > 0 else "n/a"   # noqa: E731 - a CPU read in 10 ms ticks may be 0
        print(f"close -> every page, {before} / {after}: p95 {b['p95']:.2f} / {a['p95']:.2f} s "
              f"({ratio(b['p95'], a['p95'])}), server CPU {b['cpu']:.1f} / {a['cpu']:.1f} s "
              f"({ratio(b['cpu'], a['cpu'])})"
              + "".join(f"; {app}'s CPU runs over its wait for {f['missing']} pages that never showed"
                        for app, f in figures.items() if f["missing"]))


if __name__ == "__main__":
    main()
