"""bench/bench_load.py's CPU readings: the idle baseline counts a live thread's CPU finer than a scheduler tick."""
from __future__ import annotations

import os
import threading
import time

from bench.bench_load import live_threads_cpu_s, process_cpu_s


def test_a_live_threads_cpu_is_counted_below_one_tick():
    burnt, release = threading.Event(), threading.Event()

    def burn() -> None:
        began = time.thread_time()
        while time.thread_time() - began < 0.003:   # 3 ms of CPU: under one 10 ms tick of /proc/<pid>/stat
            pass
        burnt.set()
        release.wait()

    before = live_threads_cpu_s(os.getpid())
    worker = threading.Thread(target=burn)
    worker.start()
    burnt.wait()
    after = live_threads_cpu_s(os.getpid())
    release.set()
    worker.join()
    assert 0.003 <= after - before < 1.0
    assert after <= process_cpu_s(os.getpid()) + 0.02   # the same clock as the process's own, to a tick or two


def test_a_class_of_up_to_1000_websocket_sessions_may_run_and_no_more():
    from bench.bench_load import sessions_refused

    assert sessions_refused([500], ["ws"]) is None
    assert sessions_refused([1000], ["ws", "ws-bare"]) is None
    assert "1,000" in sessions_refused([1001], ["ws"])
    assert sessions_refused([0], ["ws"]) is not None
    assert sessions_refused([61], ["ws", "browser"]) is not None    # Chromium contexts stay few
