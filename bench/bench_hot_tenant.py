"""Benchmark for the hot-tenant lab: ordered appends behind one owner, batch sizes 1, 5 and 25.

Run ``python -m bench.bench_hot_tenant [--repeat N]``; prints figures, asserts nothing about time.

The brief's arithmetic assumes one ordered write takes 10 ms (100 events/s) and that a batch of
five might take the same 10 ms (500 events/s). Here each batch is one DuckDB transaction on a
file database (claim the sequence numbers, insert the batch, commit), so the measured ratio of
batch latency to single-append latency says whether batching buys what the arithmetic hopes.
The bounded latest-10 read is measured beside the naive read as a second section.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.timing import fmt_ms, measure
from labs.hot_tenant import Database, EventStore, OrderedStream, latest, latest_naive

BATCH_SIZES = (1, 5, 25)
TARGET_EVENTS_PER_S = 250.0          # the hot tenant's offered rate in brief 004
BRIEF_WRITE_S = 0.010                # the brief's assumed time for one ordered write
READ_EVENTS = 2_000                  # events spread over 8 buckets for the read section


def brief_ceiling(batch: int) -> float:
    """Events/s if a batch of this size took the brief's 10 ms, as a single write does."""
    return batch / BRIEF_WRITE_S


def bench_appends(path: str, repeat: int) -> list[tuple[int, dict[str, float]]]:
    """Median and tails of one append per batch size, against the database at ``path``."""
    rows = []
    with Database(path) as db:
        stream = OrderedStream(db=db)
        lease = stream.acquire("bench", "owner-1")
        for batch in BATCH_SIZES:
            payloads = [f"event-{k}" for k in range(batch)]
            rows.append((batch, measure(lambda: stream.append(lease, payloads), repeat=repeat, warmup=3)))
        # the owner's work must have produced a gap-free stream, or the numbers mean nothing
        head = stream.head("bench")
        assert len(stream.read("bench", limit=head.last_seq)) == head.last_seq
    return rows


def bench_reads(repeat: int) -> list[tuple[str, dict[str, float], object]]:
    store = EventStore()
    store.create_tenant("bench", 8)
    store.write_burst("bench", [(f"evt-{i}", i, "") for i in range(READ_EVENTS)])
    bounded = latest(store, "bench", 10)
    naive = latest_naive(store, "bench", 10)
    assert bounded.events == naive.events
    return [
        ("bounded merge", measure(lambda: latest(store, "bench", 10), repeat=repeat), bounded),
        ("naive 10 x 8", measure(lambda: latest_naive(store, "bench", 10), repeat=repeat), naive),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=60, help="timed appends per batch size")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-hot-tenant-") as tmp:
        appends = bench_appends(str(Path(tmp) / "stream.duckdb"), args.repeat)
    in_memory = bench_appends(":memory:", args.repeat)

    single = appends[0][1]["median"]
    print("Ordered appends behind one owner (DuckDB file, one transaction per batch)")
    print(f"{'batch':>5}  {'latency':<62}  {'events/s':>9}  {'vs batch 1':>10}  {'brief ceiling':>13}")
    for batch, stats in appends:
        rate = batch / stats["median"]
        print(f"{batch:>5}  {fmt_ms(stats):<62}  {rate:>9,.0f}  {stats['median'] / single:>9.2f}x  "
              f"{brief_ceiling(batch):>9,.0f}/s")
    print("Reference, same appends in memory (the gap to the rows above is the cost of the file commit):")
    for batch, stats in in_memory:
        print(f"{batch:>5}  {fmt_ms(stats):<62}  {batch / stats['median']:>9,.0f}")
    print(f"Brief: one write per {BRIEF_WRITE_S * 1e3:.0f} ms sustains {brief_ceiling(1):,.0f} events/s; "
          f"a batch of 5 in the same {BRIEF_WRITE_S * 1e3:.0f} ms would sustain {brief_ceiling(5):,.0f}.")
    for batch, stats in appends:
        rate = batch / stats["median"]
        verdict = "meets" if rate >= TARGET_EVENTS_PER_S else "misses"
        print(f"  batch {batch:>2}: {rate:>9,.0f} events/s at the median "
              f"({batch / stats['p95']:,.0f} at p95) {verdict} the {TARGET_EVENTS_PER_S:.0f}/s target")

    print()
    print(f"Latest 10 of {READ_EVENTS:,} events in 8 buckets (in-memory DuckDB, cap of 4 concurrent fetches)")
    for name, stats, page in bench_reads(max(10, args.repeat // 3)):
        print(f"  {name:<14} {fmt_ms(stats)}  candidates {page.candidates_read:>3}  "
              f"queries {page.fetches:>2}  peak concurrent {page.peak_concurrent_fetches}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
