"""Crash safety of the attempt stores: a killed writer loses no lock-in it acknowledged.

Everything else both stores promise is in tests/test_store_contract.py.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from drills.backends import open_store
from drills.store import MIGRATIONS

ROOT = Path(__file__).resolve().parent.parent

WRITER = r"""
import sys
from drills.backends import open_store
store = open_store(sys.argv[1])
attempt = store.start_attempt("one_tenant", "crash", "", 2700, seed=1)
print("attempt", attempt.id, flush=True)
n = 0
while True:
    store.lock_answer(attempt.id, f"q{n}", "p", "numeric", value=n)
    print("ack", n, flush=True)
    n += 1
"""


@pytest.mark.parametrize("backend", ["duckdb", "postgres"])
def test_sigkill_mid_stream_loses_no_acknowledged_lockin(backend, tmp_path, request):
    target = str(tmp_path / "crash.duckdb") if backend == "duckdb" else request.getfixturevalue("pg_url")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, target], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    attempt_id = int(proc.stdout.readline().split()[1])
    acked = -1
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 300:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    reopened = open_store(target)
    stored = reopened.answers(attempt_id)
    assert all(f"q{n}" in stored for n in range(acked + 1))
    assert reopened.schema_version() == MIGRATIONS[-1][0]
    reopened.close()


def test_migrations_are_numbered_once_each_and_kept_in_version_order():
    """Every feature's numbers are in drills.store.migrations' one list, written in version order,
    a database gains them in version order and MIGRATIONS[-1] is the latest (the app's cache key)."""
    versions = [version for version, _ in MIGRATIONS]
    assert versions == sorted(set(versions))
