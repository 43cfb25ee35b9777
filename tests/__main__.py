"""`python -m tests`: the project's one test command (README), also called by .ci/run.

Checks the Debian packages some tests drive are there (installing them as root), then runs pytest twice: the
whole selection, then its AppTest tests again in plain mode (FAULTLINES_PLAIN_STREAMLIT=1, tests/plain_mode.py), so
the app is shown to keep its promises with every lean on Streamlit's internals turned off. `--no-plain` skips the
second pass (a quick local run); CI never passes it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
PLAIN_MODE_ENV = "FAULTLINES_PLAIN_STREAMLIT"   # ui.runtime.seam.PLAIN_ENV (not imported: tests run before the app)
NO_TESTS_COLLECTED = 5   # pytest.ExitCode.NO_TESTS_COLLECTED
ROOT = Path(__file__).resolve().parent.parent


# Debian packages some tests drive, by the file each installs: the browser tests' chromium, and the
# nginx in front of the multi-process stack test.
DEBIAN_PACKAGES = {CHROMIUM: "chromium", Path("/usr/sbin/nginx"): "nginx"}


def install_node_tools() -> None:
    """npm ci the pinned Node tools the tests drive (package.json): oidc-provider and axe-core.

    Skipped when node_modules already holds what the lock file pins (npm's own record of it, node_modules/
    .package-lock.json, lists the same packages), so a second run costs nothing. By content, not by age: a git
    worktree whose node_modules links to another checkout's has a younger lock file, and `npm ci` there would
    empty the other checkout's node_modules.
    """
    lock, installed = ROOT / "package-lock.json", ROOT / "node_modules" / ".package-lock.json"
    try:
        if installed.exists() and _pinned(installed) == _pinned(lock):
            return
    except ValueError:   # a record npm left half-written: install again
        pass
    npm = shutil.which("npm")
    if npm is None:
        print("warning: npm is missing; the sign-in and accessibility tests will fail", file=sys.stderr)
        return
    print("Installing the tests' Node tools (npm ci)…", flush=True)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=ROOT, check=True)


def _pinned(lock_file: Path) -> dict:
    """The packages a lock file pins, by path (the root project's own entry left out: npm's record has none)."""
    return {path: entry for path, entry in json.loads(lock_file.read_text()).get("packages", {}).items() if path}


# Commands some tests run, by the Debian package that brings them when they are not on PATH at all
# (a NodeSource or nvm node already has its own npm, which Debian's npm would conflict with).
DEBIAN_COMMANDS = {"node": "nodejs", "npm": "npm"}


MAIN_WORKERS = 2    # a worker a core: on three, the heavy walks starved each other's browsers (see parallel)
PLAIN_WORKERS = 2   # the AppTest pass computes all the time: a worker a core


def parallel(argv: list[str], workers: int) -> list[str]:
    """pytest-xdist workers, each taking whole files (a file's module fixtures, such as one app server for every
    page, stay in one worker). Three workers took the main pass on this 2-core machine from 903-915 s to 772-913 s,
    but when three browser walks met at the start (load average 17), Chromium was starved for over a minute: one
    of two clean CI runs lost three walks to Playwright's 60 s waits (a click never found its button stable), so
    the main pass is back on two. Files go out in the
    collection's order, the heavy ones first (tests/conftest.py), rather than pytest-xdist's most-tests-first,
    which leaves a one-test walk of minutes for last on one worker while the others idle. `-n 0` (or any -n
    given) overrides it; one core runs serially."""
    if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in argv) or (os.cpu_count() or 1) < 2:
        return []
    return ["-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]


def main(argv: list[str]) -> int:
    missing = [package for path, package in DEBIAN_PACKAGES.items() if not path.exists()]
    missing += [package for command, package in DEBIAN_COMMANDS.items() if shutil.which(command) is None]
    if missing:
        if shutil.which("apt-get"):
            print(f"Installing Debian's {', '.join(missing)} for the tests…", flush=True)
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], check=True)
        else:
            print(f"warning: {', '.join(missing)} missing; the tests that need them will fail", file=sys.stderr)
    install_node_tools()   # after the Debian packages, which may just have brought npm
    import pytest

    plain_pass = "--no-plain" not in argv
    argv = [a for a in argv if a != "--no-plain"]
    # Settings live here rather than in a top-level pytest.ini, to keep the top level to the design card.
    targets = [] if any(Path(a.split("::")[0]).exists() for a in argv) else [str(ROOT / "tests")]
    common = ["-q", "-ra", "-p", "no:cacheprovider", "-o", "timeout=600", "--rootdir", str(ROOT)]
    code = int(pytest.main([*common, *parallel(argv, MAIN_WORKERS), "--durations=25", *targets, *argv]))
    if not plain_pass:
        return code
    print(f"\nThe AppTest tests again in plain mode ({PLAIN_MODE_ENV}=1)…", flush=True)
    before = os.environ.get(PLAIN_MODE_ENV)
    os.environ[PLAIN_MODE_ENV] = "1"   # read by ui.runtime.seam on every call, and inherited by xdist's workers
    try:
        plain = int(pytest.main([*common, *parallel(argv, PLAIN_WORKERS), "-p", "tests.plain_mode", "--durations=10",
                                 *targets, *argv]))
    finally:
        if before is None:
            del os.environ[PLAIN_MODE_ENV]
        else:
            os.environ[PLAIN_MODE_ENV] = before
    # No AppTest among the selected tests is no failure of the second pass.
    return code or (0 if plain == NO_TESTS_COLLECTED else plain)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
