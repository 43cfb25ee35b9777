"""What each seam to Streamlit's internals buys (ui/runtime/seam.py), each measured against its plain-mode fallback
in the same run: the theme built once, app.py's pages built once, the secrets absence kept, one event-loop wake-up
per burst, and one read of the attempt per run (AppTest, counted).

Run: flock /tmp/bench.lock python -m bench.bench_seam [--repeat 200]
CPU time of this process (time.process_time), medians; the ratio is plain over optimised. The push and the skip
count are figures of a real server (bench/bench_live_ws.py, tests/test_seam.py's run counts). Prints; asserts nothing.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import copy
import os
import threading
import time
from pathlib import Path

import streamlit as st

from bench.timing import measure
from ui.runtime import seam

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = 120   # what a board run sends, about (ui/runtime/loop_wakeups.py)


def _line(name: str, optimised: float, plain: float, unit: str = "us") -> None:
    scale = 1e6 if unit == "us" else 1e3
    ratio = plain / optimised if optimised else float("nan")
    print(f"{name:<44} optimised {optimised * scale:9.1f} {unit}   plain {plain * scale:9.1f} {unit}   "
          f"plain/optimised {ratio:6.1f}x")


def _cpu(fn, repeat: int) -> float:
    return measure(fn, repeat=repeat, warmup=3, clock=time.process_time)["median"]


def theme(repeat: int) -> None:
    from streamlit import config
    from streamlit.proto.NewSession_pb2 import CustomThemeConfig

    from ui.runtime import theme_cache

    config.get_config_options(force_reparse=True)
    built = seam.theme_builder()
    once = theme_cache.cached(built)
    sections = ("theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar", "theme.dark.sidebar")

    def every(populate):
        for section in sections:
            populate(CustomThemeConfig(), section)

    _line("theme of a run's new_session (6 sections)", _cpu(lambda: every(once), repeat),
          _cpu(lambda: every(built), repeat))


def _declare():
    """app.py's own _declare, taken from its source (importing app.py would run the app)."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    found = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_declare")
    namespace = {"st": st}
    exec(compile(ast.Module(body=[found], type_ignores=[]), "app.py", "exec"), namespace)
    return namespace["_declare"]


def pages(repeat: int) -> None:
    declare = _declare()
    kept = declare()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        _line("app.py's 13 pages for a run", _cpu(lambda: {s: [copy.copy(p) for p in ps] for s, ps in kept.items()},
                                                   repeat), _cpu(declare, repeat))
    finally:
        os.chdir(cwd)


def secrets(repeat: int) -> None:
    from ui import identity

    reads = 6   # a run reads the secrets about this often (auth, instructors, claim, hash)
    os.environ.pop(seam.PLAIN_ENV, None)
    identity._no_secrets = (None, float("-inf"))
    identity._secret("auth")
    optimised = _cpu(lambda: [identity._secret("auth") for _ in range(reads)], repeat)
    os.environ[seam.PLAIN_ENV] = "1"
    identity._no_secrets = (None, float("-inf"))   # what the optimised reads kept
    try:
        plain = _cpu(lambda: [identity._secret("auth") for _ in range(reads)], repeat)
    finally:
        del os.environ[seam.PLAIN_ENV]
    _line(f"{reads} reads of st.secrets with no file", optimised, plain)


def wakeups(repeat: int) -> None:
    from ui.runtime.loop_wakeups import _SessionQueue

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    done = threading.Event()
    counted = [0]

    def tick():
        counted[0] += 1
        if counted[0] == MESSAGES:
            done.set()

    def burst(post) -> None:
        counted[0] = 0
        done.clear()
        for _ in range(MESSAGES):
            post(tick)
        done.wait(10)

    queue = _SessionQueue(loop)
    try:
        # wall time here: the loop's thread does half the work, which process_time of this thread would not see
        optimised = measure(lambda: burst(queue.call_soon), repeat=repeat, warmup=3)["median"]
        plain = measure(lambda: burst(loop.call_soon_threadsafe), repeat=repeat, warmup=3)["median"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    _line(f"{MESSAGES} script events to the event loop (wall)", optimised, plain)


def attempt_reads() -> None:
    """Store reads of the attempt in one drill page run, optimised and plain (AppTest; a count, not a time)."""
    import tempfile

    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest

    from drills.store import AttemptStore

    init = PagesManager.__init__

    def in_navigation_mode(self, *args, **kwargs):   # as tests/conftest.py's app_test: a server's steady state
        init(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = in_navigation_mode

    counts = {}
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["FAULTLINES_DB"] = str(Path(scratch) / "bench.duckdb")
        store = AttemptStore(os.environ["FAULTLINES_DB"])
        token = store.start_attempt("one_tenant", "bench", "", 45 * 60).token
        store.close()
        from ui import context

        original, asked = AttemptStore.attempt_by_token, context.attempt_this_run
        reads, asks = [0], [0]

        def counted(self, *args, **kwargs):
            reads[0] += 1
            return original(self, *args, **kwargs)

        def counted_ask(token):
            asks[0] += 1
            return asked(token)

        from ui.drill import timer

        AttemptStore.attempt_by_token = counted
        context.attempt_this_run = timer.attempt_this_run = counted_ask
        try:
            for mode, plain in (("optimised", False), ("plain", True)):
                if plain:
                    os.environ[seam.PLAIN_ENV] = "1"
                at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
                at.query_params["attempt"] = token
                at.run()
                at.switch_page("pages/drill.py")
                at.run()   # warm
                reads[0] = asks[0] = 0
                at.run()
                assert not at.exception, at.exception
                counts[mode] = reads[0]
                counts["asked"] = asks[0]
                os.environ.pop(seam.PLAIN_ENV, None)
        finally:
            AttemptStore.attempt_by_token = original
            context.attempt_this_run = timer.attempt_this_run = asked
    print(f"{'store reads of the attempt, a drill page run':<44} optimised {counts['optimised']:9d}      "
          f"plain {counts['plain']:9d}      (asked {counts['asked']} times)")


def main() -> None:
    from streamlit import logger

    logger.set_log_level("error")   # bare mode's "missing ScriptRunContext" lines
    parser = argparse.ArgumentParser(prog="python -m bench.bench_seam", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per figure (default 200)")
    args = parser.parse_args()
    os.environ.pop(seam.PLAIN_ENV, None)
    theme(args.repeat)
    pages(args.repeat)
    secrets(args.repeat)
    wakeups(max(20, args.repeat // 4))
    attempt_reads()


if __name__ == "__main__":
    main()
