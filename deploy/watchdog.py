"""The app watchdog: supervisord's event listener that finds a hung app process and has it replaced.

A process that dies is restarted by supervisord (autorestart); one that is alive but answers nothing (stopped,
deadlocked, its event loop stuck) is not, and nginx keeps sending its candidates there. On every TICK_5 this
listener asks each running app's /_stcore/health; one that has not answered for HUNG_S is sent SIGKILL (a
stopped process gets no SIGTERM), so supervisord starts it afresh and nginx, its port refusing meanwhile, moves
its candidates to a live process. Run by supervisord as `python -m deploy.watchdog app-1=http://… …`.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from deploy.stack import healthy

# A process is hung once its health check has gone unanswered this long: a few seconds, well past what a busy
# event loop takes to answer (milliseconds), short enough that its candidates are served again within 15 s of
# the hang (up to a TICK_5 to notice, HUNG_S to be sure, then the reconnect).
HUNG_S = 4.0
PROBE_TIMEOUT_S = 2.0   # each health request
RETRY_S = 0.5           # between the requests to a process that did not answer
# A process started this recently that has not answered yet is still starting (imports, the store), not hung.
START_GRACE_S = 60.0


@dataclass
class Verdict:
    name: str
    pid: int
    unanswered_s: float


@dataclass
class Watch:
    """Which running apps answer; `probe(url) -> bool`, `info(name) -> supervisord's process info` and
    `kill(pid)` are injected, as are the clock and sleep (the tests count probes, they never wait)."""
    apps: dict[str, str]   # supervisord program name -> the app's own URL
    probe: Callable[[str], bool]
    info: Callable[[str], dict]
    kill: Callable[[int], None]
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    hung_s: float = HUNG_S
    answered: set[int] = field(default_factory=set)   # pids that answered once (their start is over)
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
        return found

    def _hung(self, name: str, info: dict) -> Verdict | None:
        pid, url = info["pid"], self.apps[name]
        since = self.clock()
        while True:
            if self.probe(url):
                self.answered.add(pid)
                return None
            if pid not in self.answered and self.wall() - info.get("start", 0) < START_GRACE_S:
                return None   # still starting: judged on a later tick
            unanswered = self.clock() - since
            if unanswered >= self.hung_s:
                return Verdict(name, pid, unanswered)
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
    watch = Watch(apps, probe=lambda url: healthy(url, timeout=PROBE_TIMEOUT_S), info=rpc.getProcessInfo,
                  kill=kill_group, hung_s=args.hung_s)
    _log(f"watching {', '.join(apps)}: a process unanswered for {args.hung_s:.0f} s is killed and restarted")
    while True:
        headers, _payload = childutils.listener.wait(sys.stdin, sys.stdout)
        if headers["eventname"].startswith("TICK"):
            try:
                for verdict in watch.tick():
                    _log(f"{verdict.name} (pid {verdict.pid}) did not answer /_stcore/health for "
                         f"{verdict.unanswered_s:.1f} s: SIGKILL, supervisord starts it again")
            except Exception as problem:   # noqa: BLE001 (supervisord busy or restarting: the next tick tries again)
                _log(f"tick skipped: {type(problem).__name__}: {problem}")
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
