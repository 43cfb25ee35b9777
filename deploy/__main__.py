"""`python -m deploy --processes 3 --port 8080`: serve a class from this machine until Ctrl-C or SIGTERM.

Prints one line per service (`<name> pid=<pid> port=<port>`), then `ready`. `--write-config DIR` writes the
same supervisord.conf and nginx.conf for an install on several hosts instead of starting anything.
"""
from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from deploy.stack import Stack


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m deploy", description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=3, help="app processes (default 3; 0 with --upstream)")
    p.add_argument("--port", type=int, default=8080, help="nginx listens on PORT (default 8080)")
    p.add_argument("--listen", default="127.0.0.1", help="nginx's address (default 127.0.0.1; 0.0.0.0 for a class)")
    p.add_argument("--database", default=None,
                   help="a postgresql:// URL of a server run elsewhere, instead of the embedded one")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="keep the embedded PostgreSQL's files here between runs (default: a temporary directory)")
    p.add_argument("--no-proxy", action="store_true", help="no nginx: an app host behind another host's proxy")
    p.add_argument("--app-address", default="127.0.0.1", help="where the apps listen (0.0.0.0 on an app host)")
    p.add_argument("--app-ports", default=None, help="the apps' ports, comma-separated (default: free ports)")
    p.add_argument("--upstream", default=None,
                   help="host:port of app processes on other hosts, comma-separated (a proxy-only host)")
    p.add_argument("--write-config", type=Path, default=None, metavar="DIR",
                   help="write supervisord.conf and nginx.conf into DIR and exit")
    p.add_argument("--lti-settings", type=Path, default=None, metavar="FILE",
                   help="also serve the LTI 1.3 tool under /lti/ with this settings file, and run its LMS worker "
                        "(grades, rosters) (docs/lti.md)")
    p.add_argument("--run-dir", type=Path, default=None,
                   help="where the services keep pid files, sockets and logs (default: a temporary directory)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    ports = [int(p) for p in args.app_ports.split(",")] if args.app_ports else None
    upstreams = args.upstream.split(",") if args.upstream else None
    if ports and len(ports) != args.processes:
        parser().error("--app-ports needs one port per process")
    try:
        stack = Stack(args.processes, port=args.port, database=args.database, data_dir=args.data_dir,
                      proxy=not args.no_proxy, app_address=args.app_address, app_ports=ports, upstreams=upstreams,
                      listen_address=args.listen, run_dir=args.run_dir,
                      lti_settings=args.lti_settings.resolve() if args.lti_settings else None)
    except ValueError as problem:
        parser().error(str(problem))
    if args.write_config:
        where = stack.write_configs(args.write_config)
        print(f"wrote {where / 'supervisord.conf'}" + ("" if args.no_proxy else f" and {where / 'nginx.conf'}"))
        return 0
    signal.signal(signal.SIGTERM, _interrupt)   # from here on, SIGTERM stops it all as Ctrl-C does
    signal.signal(signal.SIGINT, _interrupt)
    try:
        with stack:
            for service in stack.services():
                print(service.line(), flush=True)
            print("ready", flush=True)
            while stack.supervisord.poll() is None:
                time.sleep(1)
            print(f"supervisor exited with {stack.supervisord.returncode}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:   # Ctrl-C or SIGTERM, even while starting: the with block stopped everything
        return 0


def _interrupt(*_) -> None:
    # Once: a second Ctrl-C or SIGTERM must not cut the orderly stop short and leave services running.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
