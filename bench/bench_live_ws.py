"""Bench: websocket candidates in one live room on the supervised stack, from the instructor's Close to every page
showing the room's answers. Prints figures; asserts nothing about time.

    python -m bench.bench_live_ws --seats 200 --processes 3

Each seat is a bench.load_ws session: it opens /live, joins with a handle and the class's cohort, then does what
the browser's frontend does for the page's `run_every` fragment (a fragment rerun every POLL_S after the last
one finished). The instructor's moves go through the store, as the console's buttons do. All seats but one lock
in a number (so the question does not close itself), then Close; the figure per seat runs from the commit of
Close to the script run whose page draws "N guesses of M in the room". Server CPU is the app processes'
user+system time (from /proc) over that window; the bench's own CPU is printed beside it, since on one box the
generator competes with the servers.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.load_ws import ProtocolError, StreamlitSession, submit_form
from deploy.stack import Stack
from drills import live
from drills.backends import open_store
from drills.live_store import CLOSE, NEXT
from drills.loader import load_catalogue
from drills.scope import ScopedDrills
from ui.live import POLL_S

DRILL = "one_tenant~break2"
QUESTION = "jobs_in_flight"


def _cpu_s(pids: list[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks   # utime, stime
        except OSError:
            continue
    return total


def _profilers(prefix: str | None, pids: list[int]) -> list[subprocess.Popen]:
    """py-spy on each app process (samples holding the GIL, collapsed stacks), or nothing without a prefix."""
    if not prefix:
        return []
    spy = Path(sys.executable).with_name("py-spy")
    return [subprocess.Popen([str(spy), "record", "--pid", str(pid), "--gil", "--nonblocking", "--format", "raw",
                              "--output", f"{prefix}-app-{n}.txt"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for n, pid in enumerate(pids, 1)]


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


def _shows(session: StreamlitSession, prefix: str) -> bool:
    return any(e.body.startswith(prefix) for kind in ("markdown", "alert") for e in session.page.of_kind(kind))


class Seat:
    def __init__(self, url: str, n: int):
        self.url, self.n = url, n
        self.cookie = f"fl_backend=live-{n}-{secrets.token_hex(6)}"
        self.session: StreamlitSession | None = None
        self.fragment = ""
        self.error = ""

    async def join(self, cohort: str) -> None:
        self.session = await StreamlitSession.open(self.url, cookie=self.cookie)
        await self.session.rerun(page_name="live")
        page = self.session.page
        handle, code = page.widget("text_input", "Your handle"), page.widget("text_input", "Cohort code")
        await self.session.rerun(submit_form(page, handle.form_id, {handle.id: f"seat-{self.n}", code.id: cohort}))
        if not _shows(self.session, "You are in the waiting room"):
            raise ProtocolError(f"seat {self.n} did not reach the waiting room{self.session.page.problems()}")
        self._note_fragment()

    def _note_fragment(self) -> None:
        polls = [fid for fid, every in self.session.auto_reruns.items() if abs(every - POLL_S) < 1e-6]
        if polls:
            self.fragment = polls[-1]

    async def follow_until(self, shown, stop: asyncio.Event) -> float | None:
        """Poll as the frontend does until a whole-app run draws what `shown(session)` looks for: its time."""
        while not stop.is_set():
            await asyncio.sleep(POLL_S)
            if not await self.session.rerun_fragment(self.fragment):
                # the fragment heard a move and reran the page; rerun_fragment read it to its end
                self._note_fragment()
                if shown(self.session):
                    return time.monotonic()
        return None

    async def lock_in(self, value: str) -> None:
        box = self.session.page.widget("text_input", re.compile("^Best guess"))
        await self.session.rerun(submit_form(self.session.page, box.form_id, {box.id: value}))
        self._note_fragment()


async def _bench(url: str, database: str, seats: int, app_pids: list[int], db_pid: int | None,
                 profile: str | None) -> None:
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
        seen = await asyncio.gather(*(s.follow_until(lambda x: bool(x.page.of_kind("text_input")) and any(
            w.label.startswith("Best guess") for w in x.page.of_kind("text_input")), stop) for s in room))
        print(f"  open -> every page shows the question: max {max(x - t for x in seen if x):.2f} s")
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

        expected = f"{len(lockers)} guesses of"
        profilers = _profilers(profile, app_pids)
        if profilers:
            await asyncio.sleep(1.0)   # py-spy attached before the Close
        db_before = _cpu_s(_family(db_pid))
        cpu_before, own_before = _cpu_s(app_pids), time.process_time()
        closed_at = time.monotonic()
        store.live_move(session.id, CLOSE, seen_version=opened.version, questions=questions, actor="prof")
        after = time.monotonic()
        shown = await asyncio.wait_for(asyncio.gather(
            *(s.follow_until(lambda x: _shows(x, expected), stop) for s in room)), timeout=120)
        window = time.monotonic() - closed_at
        cpu = _cpu_s(app_pids) - cpu_before
        own = time.process_time() - own_before
        db = _cpu_s(_family(db_pid)) - db_before
        _stop(profilers)
        delays = sorted(x - closed_at for x in shown if x is not None)
        q = statistics.quantiles(delays, n=20) if len(delays) > 1 else delays * 19
        print(f"  instructor's Close (store commit): {1000 * (after - closed_at):.1f} ms")
        print(f"  close -> page shows the room's answers, {len(delays)} of {len(room)} pages: "
              f"p50 {statistics.median(delays):.2f} s, p95 {q[18]:.2f} s, max {delays[-1]:.2f} s")
        print(f"  server CPU over those {window:.1f} s: {cpu:.1f} s across {len(app_pids)} app processes "
              f"({100 * cpu / window:.0f}% of one core); PostgreSQL's: {db:.1f} s; the bench's own CPU: {own:.1f} s")
        stop.set()
        for s in room:
            await s.session.close()
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=200)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--profile", metavar="PREFIX",
                        help="py-spy each app process from Close to the last page (PREFIX-app-N.txt, collapsed)")
    args = parser.parse_args()
    with Stack(args.processes) as stack:
        print(f"live room over websockets: {args.seats} seats, {args.processes} app processes behind nginx "
              f"(PostgreSQL, LISTEN/NOTIFY), fragment poll {POLL_S} s")
        asyncio.run(_bench(stack.url, stack.database, args.seats, stack.app_pids, stack.pid_of("postgres"),
                           args.profile))


if __name__ == "__main__":
    main()
