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
        assert list(services) == ["postgres", "app-1", "app-2", "nginx", "supervisor"], lines
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
    check = subprocess.run([NGINX, "-t", "-p", f"{run_dir}/", "-c", str(proxy_host / "nginx.conf"),
                            "-e", str(run_dir / "error.log")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
