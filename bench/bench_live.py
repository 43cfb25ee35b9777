"""Benchmark for the live room: from the instructor's Close to every process holding the room's distribution.

Run ``python -m bench.bench_live [--seats 200] [--processes 3] [--closes 8]``; prints figures, asserts nothing.

An embedded PostgreSQL 18 holds one class's room of `--seats` seats. `--processes` watcher processes each run
the app's NotifyWatch (one LISTEN thread); on each Close, each process notices the notification and reads what a
candidate's page draws for a closed numeric question (the session, seats, answers, steps, the class's attempts
for their variants) and builds the strip (drills.live.numeric_room). The time is taken from Close's commit to
that process having the distribution, all on one machine's clock. Not measured: Streamlit's rerun and the
websocket delta to each browser (the 200-websocket load bench of the issue was not built; see the report).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

from drills import live
from drills.backends import open_store
from drills.store.live import CLOSE, END, NEXT, REVEAL
from drills.live_watch import NotifyWatch
from drills.loader import load_catalogue
from drills.scope import ScopedDrills
from drills.variants import in_variant
from labs.postgres.server import create_database, embedded

DRILL = "one_tenant~break2"


def _distribution(store, loaded, session_id: int):
    """What a candidate's page reads and computes for a closed numeric question (ui.live.report.room_distribution)."""
    session = store.live_session(session_id)
    if loaded.drill.question(session.question_id).kind != "numeric":
        return -1   # a question passed on the way to the next numeric one
    seats = store.live_seats(session_id)
    answers = store.live_answers(session_id)
    until = live.closed_at(store.live_steps(session_id)).get(session.question_id)
    variants = {a.id: a.variant for a in store.attempts(cohort=session.cohort, drill_id=session.drill_id)}
    graders = {v: live.Grader(in_variant(loaded, v), {}) for v in set(variants.values())}
    room = live.numeric_room(loaded.drill.question(session.question_id), session.part_id, seats,
                             {s.attempt_id: graders[variants[s.attempt_id]] for s in seats}, answers,
                             own_attempt=seats[0].attempt_id, until=until)
    return len(room.guesses)


def _watcher(url: str, session_id: int, ready, out) -> None:
    loaded = ScopedDrills(load_catalogue().drills)[DRILL]
    store = open_store(url)
    watch = NotifyWatch(url)
    watch.listening.wait(30)
    ready.put(os.getpid())
    seen = watch.version(session_id)
    while True:
        now = watch.version(session_id)
        if now == seen:
            time.sleep(0.005)   # the page fragment's poll of the in-process version, here every 5 ms
            continue
        seen = now
        session = store.live_session(session_id)
        if session.state == "ended":
            break
        if session.state != "closed":
            continue
        guesses = _distribution(store, loaded, session_id)
        out.put((session.version, time.time(), guesses))
    watch.close()
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, default=200)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--closes", type=int, default=8)
    args = parser.parse_args()
    loaded = ScopedDrills(load_catalogue().drills)[DRILL]
    order = live.questions_in_order(loaded)
    numeric = [i for i, (qid, _) in enumerate(order) if loaded.drill.question(qid).kind == "numeric"
               and not loaded.drill.question(qid).sim]
    with embedded() as server:
        url = create_database(server, "bench_live")
        store = open_store(url)
        session = store.start_live_session("c1", DRILL, "bench")
        seats = [store.live_join(session.id, store.ensure_candidate(f"s{i}", "c1"), 600) for i in range(args.seats)]
        ctx = mp.get_context("spawn")
        ready, out = ctx.Queue(), ctx.Queue()
        procs = [ctx.Process(target=_watcher, args=(url, session.id, ready, out))
                 for _ in range(args.processes)]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=120)
        delays, cpu = [], []
        step = -1
        for n in range(args.closes):
            target = numeric[n % len(numeric)]
            while step < target:   # move the room to the next numeric question, revealing the ones between
                current = store.live_session(session.id)
                if current.state == "open":
                    current = store.live_move(session.id, CLOSE, seen_version=current.version, questions=order,
                                              actor="bench")
                if current.state == "closed":
                    current = store.live_move(session.id, REVEAL, seen_version=current.version, questions=order,
                                              actor="bench")
                current = store.live_move(session.id, NEXT, seen_version=current.version, questions=order,
                                          actor="bench")
                step = current.step_no
            qid, pid = order[target]
            truth = loaded.truth(qid)
            for i, seat in enumerate(seats):
                store.lock_answer(seat.attempt_id, qid, pid, "numeric", value=truth * (0.5 + i / args.seats),
                                  low=truth * 0.4, high=truth * (0.9 + i / args.seats))
            c0 = time.process_time()
            current = store.live_move(session.id, CLOSE, seen_version=store.live_session(session.id).version,
                                      questions=order, actor="bench")
            closed_at = time.time()
            cpu.append(time.process_time() - c0)
            heard = 0
            while heard < len(procs):   # closes of the questions passed on the way report too: skipped
                version, at, guesses = out.get(timeout=60)
                if version == current.version:
                    assert guesses == args.seats
                    delays.append(at - closed_at)
                    heard += 1
            step = target
        store.live_move(session.id, END, seen_version=store.live_session(session.id).version, questions=order,
                        actor="bench")
        for p in procs:
            p.join(timeout=30)
        store.close()
    delays.sort()
    ms = [d * 1000 for d in delays]
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    print(f"live room on PostgreSQL: {args.seats} seats, {args.processes} processes, {args.closes} closes "
          f"({len(ms)} process-closes)")
    print(f"  close -> distribution ready in each process: p50 {statistics.median(ms):.1f} ms, "
          f"p95 {p95:.1f} ms, max {ms[-1]:.1f} ms")
    print(f"  instructor's Close itself (client CPU): median {statistics.median(cpu) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
