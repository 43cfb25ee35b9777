"""Serve a class from one machine: an embedded PostgreSQL, N `streamlit run` processes and nginx in front.

`python -m bench.stack --processes 3 --port 8080` serves http://127.0.0.1:8080 until Ctrl-C, then stops it all.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DATABASE = "faultlines"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    """Poll Streamlit's health endpoint (directly or through nginx) until it answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    raise RuntimeError(f"{url} did not become healthy in {timeout:.0f} s; see {log}")


def start_app(port: int, database: str, log: Path, *, root: Path = ROOT) -> subprocess.Popen:
    """One `streamlit run app.py` on 127.0.0.1:`port` against `database` (a DuckDB path or PostgreSQL URL)."""
    env = {**os.environ, "FAULTLINES_DB": database}
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=root, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)


def stop_process(proc: subprocess.Popen | None) -> None:
    """Stop a process group we started (SIGTERM, then SIGKILL after a grace period)."""
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# Streamlit's frontend files kept by nginx after their first request (Stack(static_cache=False) leaves it out).
STATIC_LOCATION = """\
        location /static/ {
            proxy_pass http://faultlines;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            proxy_cache fl_static;
            proxy_cache_key $uri$http_accept_encoding;   # gzip and identity copies kept apart
            proxy_cache_valid 200 7d;
            proxy_cache_lock on;                          # a class arriving at once fills each file once
            proxy_ignore_headers Set-Cookie;
            add_header X-Faultlines-Cache $upstream_cache_status;
        }
"""


def nginx_config(listen: int, app_ports: list[int], run_dir: Path, *, static_cache: bool = True) -> str:
    servers = "\n".join(f"        server 127.0.0.1:{port};" for port in app_ports)
    # As root, nginx would hand its workers to `nobody`, who cannot use the private run directory.
    user_line = "user root;" if os.geteuid() == 0 else ""
    return TEMPLATE.read_text().format(user_line=user_line, run_dir=run_dir, servers=servers,
                                       listen=f"127.0.0.1:{listen}",
                                       static_location=STATIC_LOCATION if static_cache else "")


class Stack:
    """PostgreSQL, app processes and nginx, started together and stopped together.

    `database` overrides the embedded PostgreSQL (any FAULTLINES_DB value, e.g. a DuckDB file for a
    single process); `proxy=False` leaves nginx out and `url` is then the first app's own address.
    """

    def __init__(self, processes: int = 2, *, port: int | None = None, database: str | None = None,
                 proxy: bool = True, root: Path = ROOT, data_dir: Path | None = None, static_cache: bool = True):
        if processes < 1:
            raise ValueError("at least one app process")
        self.processes, self.root, self.proxy, self.static_cache = processes, root, proxy, static_cache
        self.port = port or free_port()
        self.database = database
        self.run_dir = Path(tempfile.mkdtemp(prefix="faultlines-stack-"))
        self.data_dir = data_dir
        self.app_ports = [free_port() for _ in range(processes)]
        self.apps: list[subprocess.Popen] = []
        self.nginx: subprocess.Popen | None = None
        self._pg = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}" if self.proxy else self.app_urls[0]

    @property
    def app_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.app_ports]

    @property
    def app_pids(self) -> list[int]:
        return [proc.pid for proc in self.apps]

    def _start_postgres(self) -> str:
        from labs.postgres.server import create_database, serve

        keep = self.data_dir is not None
        self._pg = serve(self.data_dir or self.run_dir / "pg", keep=keep)
        return create_database(self._pg.get_uri(), DATABASE)

    def start(self) -> Stack:
        try:
            if self.database is None:
                self.database = self._start_postgres()
            logs = [self.run_dir / f"app-{port}.log" for port in self.app_ports]
            self.apps = [start_app(port, self.database, log, root=self.root) for port, log in zip(self.app_ports, logs)]
            for url, proc, log in zip(self.app_urls, self.apps, logs):
                wait_healthy(url, proc, log)
            if self.proxy:
                self._start_nginx()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_nginx(self) -> None:
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.run_dir / sub).mkdir(exist_ok=True)
        conf = self.run_dir / "nginx.conf"
        conf.write_text(nginx_config(self.port, self.app_ports, self.run_dir, static_cache=self.static_cache))
        log = self.run_dir / "nginx.log"
        self.nginx = subprocess.Popen([NGINX, "-p", f"{self.run_dir}/", "-c", str(conf), "-e", str(log)],
                                      stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        wait_healthy(self.url, self.nginx, log, timeout=20)

    def stop(self) -> None:
        stop_process(self.nginx)
        for proc in self.apps:
            stop_process(proc)
        if self._pg is not None:
            self._pg.cleanup()
            self._pg = None
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.stack", description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3, help="app processes behind nginx (default 3)")
    parser.add_argument("--port", type=int, default=8080, help="nginx listens on 127.0.0.1:PORT (default 8080)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep PostgreSQL's files here between runs (default: a temporary directory)")
    parser.add_argument("--database", default=None,
                        help="an existing postgresql:// URL instead of the embedded server")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    stack = Stack(args.processes, port=args.port, database=args.database, data_dir=args.data_dir)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))   # stop everything on kill as on Ctrl-C
    with stack:
        print(f"Serving {stack.url} ({args.processes} app processes on {stack.database}); Ctrl-C stops it all.",
              flush=True)
        try:
            while all(proc.poll() is None for proc in [*stack.apps, stack.nginx]):
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
