"""`python -m tests`: the project's one test command (README), also called by .ci/run.

Checks the browser the Playwright tests drive is there, then runs pytest with any extra args.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    if not CHROMIUM.exists():
        if shutil.which("apt-get"):
            print("Installing Debian's chromium for the browser tests…", flush=True)
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True)
        else:
            print("warning: /usr/bin/chromium is missing; browser tests will fail", file=sys.stderr)
    import pytest

    # Settings live here rather than in a top-level pytest.ini, to keep the top level to the design card.
    targets = [] if any(Path(a.split("::")[0]).exists() for a in argv) else [str(ROOT / "tests")]
    code = pytest.main(["-q", "-ra", "-p", "no:cacheprovider", "-o", "timeout=600", "--rootdir", str(ROOT),
                        *targets, *argv])
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
