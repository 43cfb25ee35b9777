"""Drill engine figures: page script runs under AppTest and lock-in commit latency.

Run: python -m bench.bench_drill   (prints medians, p95/p99 and ratios to same-run references)
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from bench.timing import fmt_ms, measure, summarise

ROOT = Path(__file__).resolve().parent.parent


def _navigation_mode() -> None:
    """Same steady state as a running server (see tests/conftest.py and ui/frame.py)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


def bench_pages(db: Path, repeat: int) -> None:
    from streamlit.testing.v1 import AppTest

    from drills.loader import load_catalogue
    from drills.store import AttemptStore

    loaded = load_catalogue().drills["one_tenant"]
    store = AttemptStore(db)
    attempt = store.start_attempt("one_tenant", "bench", "b", 2700)
    for q in loaded.drill.all_questions():
        if q.kind == "numeric" and q.id in loaded.values:
            store.lock_answer(attempt.id, q.id, "x", "numeric", value=loaded.values[q.id] * 1.1,
                              low=0, high=loaded.values[q.id] * 2 + 1)
    for part in loaded.drill.parts:
        for section in part.reveal:
            store.record_reveal(attempt.id, part.id, section.stage)
    store.close()

    empty = Path(tempfile.mkdtemp()) / "empty.py"
    empty.write_text("import streamlit as st\nst.write('x')\n")
    reference = AppTest.from_file(str(empty), default_timeout=60).run()
    ref = measure(reference.run, repeat=repeat)
    print(f"{'reference: one-line script':34s} {fmt_ms(ref)}")

    cases = [("home", {}), ("drill", {"part": "board"}), ("drill", {"part": "break1"}),
             ("drill", {"part": "score"}), ("results", {})]
    for page, params in cases:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        if page != "home":
            at.query_params["attempt"] = attempt.token
        for key, value in params.items():
            at.query_params[key] = value
        at.run()
        if page != "home":
            at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, at.exception
        stats = measure(at.run, repeat=repeat)
        label = f"{page}" + (f" ({params['part']})" if params else "")
        print(f"{label:34s} {fmt_ms(stats)}  ratio to reference {stats['median'] / ref['median']:5.1f}x")


def _lockin_latency(store, count: int) -> dict[str, float]:
    """Wall time of `count` lock-ins, each one committed transaction (answer and event)."""
    attempt = store.start_attempt("one_tenant", "lock", "", 2700)
    samples = []
    for n in range(count):
        start = time.perf_counter()
        store.lock_answer(attempt.id, f"q{n}", "p", "numeric", value=n, low=n - 1, high=n + 1)
        samples.append(time.perf_counter() - start)
    return summarise(samples)


def bench_lockins(db: Path, count: int) -> None:
    import duckdb

    from drills.store import AttemptStore

    store = AttemptStore(db)
    lock = _lockin_latency(store, count)
    store.close()

    raw = duckdb.connect(str(db.with_name("raw.duckdb")))
    raw.execute("CREATE TABLE t (k VARCHAR PRIMARY KEY, v DOUBLE)")
    samples = []
    for n in range(count):
        start = time.perf_counter()
        raw.execute("INSERT INTO t VALUES (?, ?)", [f"k{n}", n])
        samples.append(time.perf_counter() - start)
    bare = summarise(samples)
    print(f"{'reference: bare DuckDB insert':34s} {fmt_ms(bare)}")
    print(f"{'AttemptStore.lock_answer':34s} {fmt_ms(lock)}  ratio to reference "
          f"{lock['median'] / bare['median']:5.1f}x")


def bench_lockins_by_backend(folder: Path, count: int) -> None:
    """The same lock-ins through open_store on a DuckDB file and on embedded PostgreSQL 18 (Unix socket)."""
    from drills.backends import open_store
    from labs.postgres.server import create_database, embedded

    duck_store = open_store(str(folder / "backend.duckdb"))
    duck = _lockin_latency(duck_store, count)
    duck_store.close()
    with embedded() as server:
        pg_store = open_store(create_database(server, "bench_lockins"))
        pg = _lockin_latency(pg_store, count)
        pg_store.close()
    print(f"{'reference: DuckDB AttemptStore':34s} {fmt_ms(duck)}")
    print(f"{'PostgresAttemptStore.lock_answer':34s} {fmt_ms(pg)}  ratio to reference "
          f"{pg['median'] / duck['median']:5.1f}x")


def main() -> None:
    repeat = int(os.environ.get("BENCH_REPEAT", "15"))
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
        os.environ["FAULTLINES_DB"] = str(db)
        _navigation_mode()
        print("== Page script runs under AppTest (warm, same attempt with Board and Break 1 answered)")
        bench_pages(db, repeat)
        print("\n== Lock-in commit (one transaction: answer + event), file-backed DuckDB")
        bench_lockins(Path(folder) / "locks.duckdb", 1000)
        print("\n== Lock-in commit by backend (open_store): DuckDB file vs PostgreSQL")
        bench_lockins_by_backend(Path(folder), 1000)


if __name__ == "__main__":
    main()
