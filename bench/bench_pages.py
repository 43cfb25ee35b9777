"""Page loads as a candidate and an instructor meet them: each page's first and warm load, Finish to results,
instructor sign-in to board, through the websocket driver (bench/load_ws.py) against one app process.

Run: python -m bench.bench_pages [--candidates 40] [--repeat 10]
The store is the demo class (`python -m drills.demo --candidates N`); "first" is the first load of a page in a
freshly started process (imports, caches), "warm" the median and p95 of `--repeat` fresh sessions after it.
A load is the websocket opened and the page's script run finished, reruns it asks for included. The bare
health endpoint's round trip, measured in the same run, is the reference. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.load_ws import DRILL_TITLE, Page, ProtocolError, StreamlitSession, click, submit_form, text
from bench.stack import ROOT, Stack
from bench.timing import summarise
from streamlit.proto.WidgetStates_pb2 import WidgetState

PASSPHRASE = "bench passphrase, not a secret"
# URL paths of the pages a visitor opens directly ("" is the catalogue), as app.py names them.
PAGES = ("", "drill", "results", "history", "review", "sim_hot_shard", "sim_concurrency_pool", "sim_retry_storm",
         "sim_platform", "hot_tenant", "pg_lab", "instructor")
TIMEOUT_S = 120.0


async def load(url: str, path: str = "", query: str = "") -> tuple[float, StreamlitSession]:
    """Open a session on `path` (as a browser's first request does) and time it to the end of the page's run."""
    started = time.perf_counter()
    session = await StreamlitSession.open(url)
    session.query_string = query
    await session.rerun(timeout=TIMEOUT_S, page_name=path)
    return time.perf_counter() - started, session


async def timed(session: StreamlitSession, widgets) -> float:
    started = time.perf_counter()
    await session.rerun(widgets, timeout=TIMEOUT_S)
    return time.perf_counter() - started


def checkbox(page: Page, label: str, value: bool) -> WidgetState:
    box = page.widget("checkbox", label)
    return WidgetState(id=box.id, bool_value=value)


async def finish_to_results(url: str, handle: str) -> float:
    """Start the drill, open its score step (the attempt link, as a reload does), tick "Finish anyway", and
    time Finish to the end of the results page's run."""
    _, session = await load(url)
    try:
        page = session.page
        await session.rerun([text(page.widget("text_input", "Your handle"), handle),
                             click(page.widget("button", f"Start the clock: {DRILL_TITLE}"))], timeout=TIMEOUT_S)
        token = session.query("attempt")
        if token is None:
            raise ProtocolError(f"starting did not open an attempt{session.page.problems()}")
    finally:
        await session.close()
    _, session = await load(url, "drill", f"attempt={token}&part=score")
    try:
        await session.rerun([checkbox(session.page, "Finish anyway", True)], timeout=TIMEOUT_S)
        took = await timed(session, [click(session.page.widget("button", "Finish and see results"))])
        if not any(t.body.startswith("Results") for t in session.page.of_kind("heading")):
            raise ProtocolError(f"Finish did not land on the results{session.page.problems()}")
        return took
    finally:
        await session.close()


async def sign_in_to_board(url: str) -> float:
    """The instructor page, name and passphrase typed, Sign in pressed: timed to the end of the board's run."""
    _, session = await load(url, "instructor")
    try:
        page = session.page
        name = page.widget("text_input", "Your name (recorded with every override and time grant)")
        secret = page.widget("text_input", "Instructor passphrase")
        took = await timed(session, submit_form(page, name.form_id, {name.id: "Prof Bench", secret.id: PASSPHRASE}))
        if not session.page.of_kind("metric"):
            raise ProtocolError(f"signing in did not draw the board{session.page.problems()}")
        return took
    finally:
        await session.close()


def health_round_trip(url: str, repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as resp:
            resp.read()
        samples.append(time.perf_counter() - started)
    return samples


def demo_store(path: Path, candidates: int) -> None:
    env = {**os.environ, "FAULTLINES_DB": str(path)}
    subprocess.run([sys.executable, "-m", "drills.demo", "--candidates", str(candidates)], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL)


async def measure_all(url: str, repeat: int) -> list[tuple[str, float | None, list[float]]]:
    rows = []
    for path in PAGES:
        first, session = await load(url, path)
        await session.close()
        warm = []
        for _ in range(repeat):
            took, session = await load(url, path)
            await session.close()
            warm.append(took)
        rows.append((f"/{path}", first, warm))
    first = await finish_to_results(url, "bench-first")
    rows.append(("Finish -> results", first,
                 [await finish_to_results(url, f"bench-{i}") for i in range(repeat)]))
    first = await sign_in_to_board(url)
    rows.append(("instructor sign-in -> board", first, [await sign_in_to_board(url) for _ in range(repeat)]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_pages", description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=40, help="the demo class's size (default 40)")
    parser.add_argument("--repeat", type=int, default=10, help="warm loads per page (default 10)")
    args = parser.parse_args(argv)
    from drills import access

    scratch = Path(tempfile.mkdtemp(prefix="faultlines-bench-pages-"))
    db = scratch / "demo.duckdb"
    demo_store(db, args.candidates)
    os.environ[access.HASH_ENV] = access.hash_passphrase(PASSPHRASE)   # the passphrase path, embedded default
    print(f"bench_pages: one app process, demo class of {args.candidates} candidates, {args.repeat} warm loads each; "
          f"load average {os.getloadavg()[0]:.2f}")
    with Stack(1, database=str(db), proxy=False) as stack:
        reference = summarise(health_round_trip(stack.url, 20))
        rows = asyncio.run(measure_all(stack.url, args.repeat))
    print(f"{'page':<30} {'first s':>8} {'warm p50 s':>11} {'warm p95 s':>11} {'p50 / health':>13}")
    for label, first, warm in rows:
        stats = summarise(warm)
        print(f"{label:<30} {first:8.3f} {stats['median']:11.3f} {stats['p95']:11.3f} "
              f"{stats['median'] / reference['median']:12.0f}x")
    print(f"{'reference: GET /_stcore/health':<30} {'':8} {reference['median']:11.4f} {reference['p95']:11.4f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
