"""Issue-22 report figures: item analysis, alpha, integrity, time per attempt and the grader gap over the
instructor benchmark's synthetic class (bench.bench_instructor.build), against a bare scan of the answers.

Run: python -m bench.bench_items [--answers 1000000 --candidates 10000 --repeat 5]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.bench_instructor import build
from bench.timing import fmt_ms, measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1_000_000)
    parser.add_argument("--candidates", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, default=None, help="reuse or create this file (default: a temp dir)")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "bench_items.duckdb"
    if not db.exists():
        start = time.perf_counter()
        print(f"built {build(db, args.answers, args.candidates)} in {time.perf_counter() - start:.1f} s")
    from drills.loader import load_catalogue
    from drills.reports import aggregates, grader_gap, items
    from drills.reports.integrity import integrity
    from drills.reports.source import Filters
    from drills.schema import NumericQuestion
    from drills.store import AttemptStore

    loaded = load_catalogue().drills["one_tenant"]
    sim = {q.id: 100.0 for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    store = AttemptStore(db)
    key = items.key_for(store, loaded, lambda _loaded: sim)
    everyone = Filters("one_tenant")
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    ref = measure(lambda: store.query("SELECT COUNT(*), AVG(value) FROM answers").fetchall(), repeat=args.repeat)
    print(f"{'reference: bare scan of answers':40s} {fmt_ms(ref)}")
    for name, fn in (
            ("item_stats [first attempts]", lambda: items.item_stats(store, key, everyone, True, loaded)),
            ("item_stats [every attempt]", lambda: items.item_stats(store, key, everyone, False, loaded)),
            ("alpha [first attempts]", lambda: items.alpha(store, key, everyone, True)),
            ("integrity", lambda: integrity(store, loaded, everyone)),
            ("time_per_attempt", lambda: aggregates.time_per_attempt(store, key, everyone)),
            ("gap_by_skill", lambda: grader_gap.gap_by_skill(store, everyone))):
        stats = measure(fn, repeat=args.repeat)
        print(f"{name:40s} {fmt_ms(stats)}  ({stats['median'] / ref['median']:.0f}x the scan)")
    print(f"load average at end:   {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    store.close()


if __name__ == "__main__":
    main()
