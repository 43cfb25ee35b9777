"""`python -m deploy`: one line per service, then `ready`; SIGTERM stops every process it started.

Also the configs it writes for another host: nginx accepts them, and supervisord's name each service.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deploy.stack import NGINX, free_port

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^(?P<name>[\w-]+) pid=(?P<pid>\d+|-) port=(?P<port>\d+|-)$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


@pytest.mark.browser   # starts the whole stack
@pytest.mark.timeout(300)
def test_the_stack_prints_each_service_then_ready_and_sigterm_stops_them_all():
    port = free_port()
    launcher = subprocess.Popen([sys.executable, "-m", "deploy", "--processes", "2", "--port", str(port)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        lines = []
        for line in launcher.stdout:
            lines.append(line.strip())
            if lines[-1] == "ready":
                break
        assert lines[-1] == "ready", lines
        services = {m["name"]: m for m in map(LINE.match, lines[:-1])}
        assert list(services) == ["postgres", "app-1", "app-2", "watchdog", "nginx", "supervisor"], lines
        assert services["nginx"]["port"] == str(port)
        pids = [int(s["pid"]) for s in services.values()]
        assert all(_alive(pid) for pid in pids)
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=90) == 0
        deadline = time.monotonic() + 30   # a bound for the test, not a figure
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [pid for pid in pids if _alive(pid)] == [], "a service outlived the launcher"
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)


def test_configs_for_other_hosts_are_written_and_nginx_accepts_them(tmp_path):
    app_host = tmp_path / "app-host"
    run = subprocess.run([sys.executable, "-m", "deploy", "--processes", "2", "--no-proxy", "--app-address",
                          "0.0.0.0", "--app-ports", "8501,8502", "--database", "postgresql://fl@db.internal/fl",
                          "--run-dir", str(tmp_path / "run"), "--write-config", str(app_host)],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    conf = (app_host / "supervisord.conf").read_text()
    assert "[program:app-1]" in conf and "[program:app-2]" in conf and "[program:nginx]" not in conf
    assert "--server.address 0.0.0.0" in conf and 'FAULTLINES_DB="postgresql://fl@db.internal/fl"' in conf
    assert "autorestart=true" in conf
    # the watchdog asks each app on its own address (its own loop, every second), never through nginx
    assert "[eventlistener:watchdog]" in conf and "events=TICK_5" in conf
    assert "deploy.watchdog app-1=http://127.0.0.1:8501 app-2=http://127.0.0.1:8502" in conf
    assert "--server.websocketPingInterval 20" in conf

    proxy_host = tmp_path / "proxy-host"
    run_dir = tmp_path / "proxy-run"
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / sub).mkdir(parents=True)
    run = subprocess.run([sys.executable, "-m", "deploy", "--processes", "0", "--upstream",
                          "127.0.0.1:8501,127.0.0.1:8502", "--port", str(free_port()), "--run-dir", str(run_dir),
                          "--write-config", str(proxy_host)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    nginx_conf = (proxy_host / "nginx.conf").read_text()
    assert "server 127.0.0.1:8502 max_fails=1" in nginx_conf and "proxy_next_upstream error" in nginx_conf
    stream = nginx_conf.split("location = /_stcore/stream {", 1)[1].split("}", 1)[0]
    # a websocket silent for 45 s is a hung process's (the app pings every 20 s); no hour-long read left anywhere
    assert "proxy_read_timeout 45s;" in stream and "proxy_next_upstream error timeout" in stream
    assert "1h" not in nginx_conf and "proxy_read_timeout 10s;" in nginx_conf
    check = subprocess.run([NGINX, "-t", "-p", f"{run_dir}/", "-c", str(proxy_host / "nginx.conf"),
                            "-e", str(run_dir / "error.log")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


# -- the watchdog, with supervisord, the health checks and the clock played by the test -------------------
class _Apps:
    """Two apps as supervisord and their health endpoints show them; `hung` ones never answer."""

    def __init__(self, clock):
        self.clock, self.hung, self.kills, self.probes = clock, set(), [], 0
        self.pids = {"app-1": 101, "app-2": 102}
        self.started = {"app-1": 0.0, "app-2": 0.0}

    def info(self, name):
        return {"statename": "RUNNING", "pid": self.pids[name], "start": self.started[name]}

    def probe(self, url, wait):
        self.probes += 1
        self.clock.now += 0.01 if url not in self.hung else wait   # a hung one costs the probe's whole wait
        return url not in self.hung

    def kill(self, pid):
        self.kills.append(pid)


class _Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def _watch(apps, clock):
    from deploy.watchdog import Watch

    return Watch({"app-1": "http://a1", "app-2": "http://a2"}, probe=apps.probe, info=apps.info, kill=apps.kill,
                 clock=clock, wall=clock, sleep=clock.sleep)


def test_the_watchdog_kills_an_app_that_stops_answering_for_a_few_seconds_and_only_that_one():
    clock = _Clock()
    apps = _Apps(clock)
    watch = _watch(apps, clock)
    assert watch.tick() == [] and apps.kills == []   # both answer: nothing happens
    apps.hung.add("http://a2")
    (verdict,) = watch.tick()
    assert apps.kills == [102] and verdict.name == "app-2"
    assert 4 <= verdict.unanswered_s < 10, "a few seconds unanswered, not one missed probe"


def test_a_hang_is_acted_on_within_4_s_of_the_last_answer_when_ticks_come_each_second():
    """Ticked every second (the watchdog's own loop), a process that stops answering between two ticks is
    killed 4 s after its last answer, whatever the phase: its candidates see their connection go within 5 s of
    the hang, not up to a TICK_5 plus 4 s later."""
    for hung_after_s in (0.05, 0.5, 0.95):
        clock = _Clock()
        apps = _Apps(clock)
        watch = _watch(apps, clock)
        watch.answered = {101, 102}
        first_tick = clock.now
        watch.tick()                            # both answer
        clock.now = first_tick + hung_after_s   # the hang, before the next tick
        apps.hung.add("http://a2")
        hung_at = clock.now
        clock.now = first_tick + 1.0            # the next tick, a second after the last
        (verdict,) = watch.tick()
        assert apps.kills == [102]
        assert clock.now - hung_at <= 4.0, (hung_after_s, clock.now - hung_at)
        assert 4.0 <= verdict.unanswered_s <= 4.0 + 0.25, verdict.unanswered_s


def test_a_watchdog_held_up_itself_does_not_kill_on_one_missed_probe():
    """If the ticks stop for a while (the watchdog starved), the next one counts at most a tick of old silence."""
    clock = _Clock()
    apps = _Apps(clock)
    watch = _watch(apps, clock)
    watch.answered = {101, 102}
    watch.tick()
    clock.now += 30.0   # no tick for 30 s
    missed = iter([False, True])   # then app-2 misses one probe and answers the next
    answers = apps.probe
    apps.probe = lambda url, wait: (clock.sleep(wait), next(missed))[1] if url == "http://a2" else answers(url, wait)
    assert watch.tick() == [] and apps.kills == []


def test_an_app_that_does_not_answer_but_keeps_working_is_given_15_s_and_a_stopped_one_4_s():
    """A class arriving at once on a loaded machine can hold a health answer for seconds: a process still using
    the CPU is busy, not hung, and is killed only after 15 s unanswered; one using none (SIGSTOP, a deadlock)
    goes at 4 s. The CPU is read from the test's own counter."""
    for working, killed_after in ((True, 15.0), (False, 4.0)):
        clock = _Clock()
        apps = _Apps(clock)
        used = {"s": 10.0}

        def cpu(pid, clock=clock, used=used, working=working):
            if working:
                used["s"] = 10.0 + 0.3 * (clock.now - 1000.0)   # 30 % of a core, as on a busy machine
            return used["s"]

        watch = _watch(apps, clock)
        watch.cpu = cpu
        watch.answered = {101, 102}
        watch.tick()
        last_answer = clock.now
        apps.hung.add("http://a2")
        (verdict,) = watch.tick()
        assert apps.kills == [102]
        assert killed_after <= clock.now - last_answer <= killed_after + 0.5, (working, clock.now - last_answer)


def test_one_missed_health_check_is_not_a_hang():
    clock = _Clock()
    apps = _Apps(clock)
    missed = iter([False, True])   # app-2 misses one probe (its full timeout), then answers
    answers = apps.probe
    apps.probe = lambda url, wait: (clock.sleep(wait), next(missed))[1] if url == "http://a2" else answers(url, wait)
    watch = _watch(apps, clock)
    watch.answered = {101, 102}
    assert watch.tick() == [] and apps.kills == []


def test_an_app_still_starting_is_given_its_start_and_then_judged():
    clock = _Clock()
    apps = _Apps(clock)
    apps.started["app-2"] = clock.now   # just started, never answered yet
    apps.hung.add("http://a2")
    watch = _watch(apps, clock)
    assert watch.tick() == [] and apps.kills == []
    clock.now += 61   # a minute on, it still has not answered once: hung
    assert [v.pid for v in watch.tick()] == [102] and apps.kills == [102]


def test_a_process_replaced_meanwhile_is_not_killed():
    clock = _Clock()
    apps = _Apps(clock)
    watch = _watch(apps, clock)
    watch.tick()
    apps.hung.add("http://a2")
    real_info = apps.info
    calls = {"n": 0}

    def info(name):   # supervisord restarted app-2 while the watchdog was probing the old pid
        calls["n"] += 1
        found = real_info(name)
        return {**found, "pid": 202} if name == "app-2" and calls["n"] > 2 else found

    watch.info = info
    watch.tick()
    assert apps.kills == []
