"""Failover spreads a dead process's browsers over the live ones (deploy/nginx.conf.template, issue 40).

The class's nginx, as deploy.stack writes it, in front of three stand-in app processes that answer with their
own port: each browser's fl_backend cookie stays on one process, and when that process dies its browsers move
to the processes left, in shares close to even, not all onto one.
"""
from __future__ import annotations

import threading
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from deploy.stack import free_port, start_nginx, stop_process

BROWSERS = 300


class _Process(ThreadingHTTPServer):
    """A stand-in app process: every GET (its health check included) answers with its port."""

    def __init__(self) -> None:
        port = self.port = free_port()

        class Answer(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.end_headers()
                self.wfile.write(str(port).encode())

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", port), Answer)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def die(self) -> None:
        self.shutdown()
        self.server_close()   # connections are refused from now on, as for a killed process


def _served_by(url: str, cookie: str) -> int:
    request = urllib.request.Request(f"{url}/", headers={"Cookie": f"fl_backend={cookie}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return int(response.read())


def test_a_dead_process_browsers_spread_over_the_live_ones(tmp_path):
    processes = [_Process() for _ in range(3)]
    listen = free_port()
    nginx = start_nginx(listen, [p.port for p in processes], tmp_path)
    url = f"http://127.0.0.1:{listen}"
    try:
        cookies = [f"browser-{n}" for n in range(BROWSERS)]
        before = {c: _served_by(url, c) for c in cookies}
        assert {c: _served_by(url, c) for c in cookies} == before, "each browser stays on its process"
        assert all(n >= BROWSERS // 6 for n in Counter(before.values()).values()), Counter(before.values())
        dead = processes[0]
        dead.die()
        after = {c: _served_by(url, c) for c in cookies}
        assert dead.port not in after.values()
        assert all(after[c] == before[c] for c in cookies if before[c] != dead.port), "the others stay put"
        moved = Counter(after[c] for c in cookies if before[c] == dead.port)
        assert set(moved) == {processes[1].port, processes[2].port}, moved
        assert min(moved.values()) >= sum(moved.values()) / 5, f"the moved browsers pile onto one process: {moved}"
    finally:
        stop_process(nginx)
        for p in processes[1:]:
            p.die()
