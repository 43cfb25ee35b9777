"""The app watchdog: supervisord's event listener that finds a hung app process and has it replaced.

A process that dies is restarted by supervisord (autorestart); one that is alive but answers nothing (stopped,
deadlocked, its event loop stuck) is not, and nginx keeps sending its candidates there. Every TICK_S this
listener asks each running app's /_stcore/health (its own loop: supervisord's TICK_5 is too coarse to tell a
candidate within 5 s); one that has not answered for HUNG_S since its last answer is sent SIGKILL (a stopped
process gets no SIGTERM), so its sockets close at once, its candidates' browsers reconnect through nginx to a
live process, and supervisord starts it afresh. Run by supervisord as `python -m deploy.watchdog app-1=http://… …`.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from deploy.stack import healthy

# A process is hung once its health check has gone unanswered this long since its last answer: a few seconds,
# well past what a busy event loop takes to answer (milliseconds), short enough that its candidates see their
# connection go within 5 s of the hang (probed every TICK_S, killed HUNG_S after the last answer) and are served
# again well within 15 s.
HUNG_S = 4.0
TICK_S = 1.0            # how often every app is asked
PROBE_TIMEOUT_S = 2.0   # the longest one health request waits
RETRY_S = 0.25          # between the requests to a process that did not answer
# A process started this recently that has not answered yet is still starting (imports, the store), not hung.
START_GRACE_S = 60.0
# A process that does not answer but keeps using the CPU (this much while it was being asked) is busy, not hung:
# a class arriving at once on a loaded machine can hold a health answer for seconds. It is given BUSY_HUNG_S.
# A stopped (SIGSTOP) or deadlocked process uses none, and is killed at HUNG_S.
BUSY_CPU_S = 0.25
BUSY_HUNG_S = 15.0


def cpu_seconds(pid: int) -> float | None:
    """The process's CPU time so far (user + system, all its threads), from /proc; None where there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime (fields 14 and 15)


@dataclass
class Verdict:
    name: str
    pid: int
    unanswered_s: float


@dataclass
class Watch:
    """Which running apps answer; `probe(url, wait_s) -> bool`, `info(name) -> supervisord's process info` and
    `kill(pid)` are injected, as are the clock and sleep (the tests count probes, they never wait)."""
    apps: dict[str, str]   # supervisord program name -> the app's own URL
    probe: Callable[[str, float], bool]
    info: Callable[[str], dict]
    kill: Callable[[int], None]
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    hung_s: float = HUNG_S
    tick_s: float = TICK_S
    cpu: Callable[[int], float | None] = lambda pid: None   # the process's CPU seconds (cpu_seconds); None: unknown
    answered: set[int] = field(default_factory=set)   # pids that answered once (their start is over)
    last_answer: dict[int, float] = field(default_factory=dict)   # pid -> when it last answered (clock)
    killed: list[Verdict] = field(default_factory=list)

    def tick(self) -> list[Verdict]:
        """Probe every running app; SIGKILL each that stays unanswered for hung_s. Returns those killed."""
        running = {}
        for name in self.apps:
            info = self.info(name)
            if info.get("statename") == "RUNNING" and info.get("pid"):
                running[name] = info
        if not running:
            return []
        with ThreadPoolExecutor(len(running)) as pool:
            verdicts = list(pool.map(lambda item: self._hung(*item), running.items()))
        found = [v for v in verdicts if v is not None]
        for verdict in found:
            if self.info(verdict.name).get("pid") == verdict.pid:   # still the process that did not answer
                self.kill(verdict.pid)
                self.killed.append(verdict)
                self.last_answer.pop(verdict.pid, None)
        return found

    def _hung(self, name: str, info: dict) -> Verdict | None:
        pid, url = info["pid"], self.apps[name]
        # Unanswered since its last answer, but never counted from before the tick that should have come last
        # (a watchdog that was itself held up must not kill on one missed probe).
        since = max(self.last_answer.get(pid, self.clock()), self.clock() - self.tick_s)
        cpu_then = self.cpu(pid)
        limit = self.hung_s
        while True:
            wait = min(PROBE_TIMEOUT_S, max(RETRY_S, since + limit - self.clock()))
            if self.probe(url, wait):
                self.answered.add(pid)
                self.last_answer[pid] = self.clock()
                return None
            if pid not in self.answered and self.wall() - info.get("start", 0) < START_GRACE_S:
                return None   # still starting: judged on a later tick
            unanswered = self.clock() - since
            if unanswered >= limit:
                cpu_now = self.cpu(pid)
                busy = cpu_then is not None and cpu_now is not None and cpu_now - cpu_then >= BUSY_CPU_S
                if not busy or limit >= BUSY_HUNG_S:
                    return Verdict(name, pid, unanswered)
                limit = BUSY_HUNG_S   # working, not stuck: given longer to answer
            self.sleep(RETRY_S)


def kill_group(pid: int) -> None:
    """SIGKILL the process and its group (supervisord makes each program a group leader, so a child the app
    started goes too); SIGKILL, unlike SIGTERM, reaches a stopped process."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        os.kill(pid, signal.SIGKILL)


def _log(text: str) -> None:
    # stdout is the event protocol's channel; supervisord keeps stderr as this listener's log.
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} watchdog: {text}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    from supervisor import childutils

    p = argparse.ArgumentParser(prog="python -m deploy.watchdog", description=__doc__.splitlines()[0])
    p.add_argument("apps", nargs="+", metavar="NAME=URL", help="a supervisord program and the app's own URL")
    p.add_argument("--hung-s", type=float, default=HUNG_S, help=f"unanswered this long is hung (default {HUNG_S})")
    args = p.parse_args(argv)
    apps = dict(item.split("=", 1) for item in args.apps)
    rpc = childutils.getRPCInterface(os.environ).supervisor   # supervisord's own socket, from its environment
    watch = Watch(apps, probe=lambda url, wait: healthy(url, timeout=wait), info=rpc.getProcessInfo,
                  kill=kill_group, hung_s=args.hung_s, cpu=cpu_seconds)
    _log(f"watching {', '.join(apps)} every {TICK_S:.0f} s: a process unanswered for {args.hung_s:.0f} s is "
         f"killed and restarted ({BUSY_HUNG_S:.0f} s while it keeps using the CPU)")
    threading.Thread(target=_keep_watching, args=(watch,), daemon=True, name="watch").start()
    while True:   # supervisord's events are only acknowledged: the watching runs on its own clock
        childutils.listener.wait(sys.stdin, sys.stdout)
        childutils.listener.ok(sys.stdout)


def _keep_watching(watch: Watch) -> None:
    while True:
        started = time.monotonic()
        try:
            for verdict in watch.tick():
                _log(f"{verdict.name} (pid {verdict.pid}) did not answer /_stcore/health for "
                     f"{verdict.unanswered_s:.1f} s: SIGKILL, supervisord starts it again")
        except Exception as problem:   # noqa: BLE001 (supervisord busy or restarting: the next tick tries again)
            _log(f"tick skipped: {type(problem).__name__}: {problem}")
        time.sleep(max(0.0, watch.tick_s - (time.monotonic() - started)))

if __name__ == "__main__":
    raise SystemExit(main())
