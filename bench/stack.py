"""The stack the benchmarks and tests start: deploy/stack.py's, named here for bench_load and the tests.

Serving a class is `python -m deploy` (deploy/__main__.py); this module only keeps the old imports working.
"""
from __future__ import annotations

from deploy.stack import NGINX, ROOT, Stack, free_port, start_app, start_nginx, stop_process, wait_healthy

__all__ = ["NGINX", "ROOT", "Stack", "free_port", "start_app", "start_nginx", "stop_process", "wait_healthy"]
