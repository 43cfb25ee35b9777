"""Hand-written mutants, each applied to a temporary copy of the tree, and the tests that must notice it.

Run: python -m bench.mutants [--changed] [--only ID ...] [--list] [--jobs N]
Mutants are listed beside the code they mutate, in a `mutants.yaml` of that package (drills/, sims/, ui/, ...):
each names its file, one exact piece of text and what it becomes, the behaviour it breaks, and the tests (files,
or pytest node ids) that hold that behaviour. A mutant is killed when those tests fail on the mutated copy; it survives when they pass.
`--changed` keeps the mutants of files a change touches (git diff against main, committed or not). The worktree
is never written: the tracked tree is copied once per job to a temporary folder and each mutant is applied there
and undone. The tests run unmutated first (all in one run; set by set only if that fails), so a failing baseline is not
counted as a kill.
Prints a table (mutant, file, killed/survived) and the total; exits 1 when any mutant survives.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
LISTS = "mutants.yaml"
TIMEOUT_S = 900   # a mutant whose tests run this long (a loop that never ends) counts as killed, and says so


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str        # relative to the repository's root
    find: str        # exact text, once in the file
    replace: str
    tests: tuple[str, ...]
    breaks: str      # the behaviour the mutant breaks, in a line
    listed_in: str


class MutantListError(ValueError):
    """A mutant list that cannot be applied as written (names the list and the mutant)."""


def mutant_lists(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in root.rglob(LISTS) if not any(part.startswith((".", "node_modules")) or part == "tmp"
                                                          for part in p.relative_to(root).parts))


def load_mutants(root: Path = ROOT) -> list[Mutant]:
    """Every listed mutant, checked: ids unique, the text found exactly once, the test files present."""
    found: list[Mutant] = []
    for listing in mutant_lists(root):
        where = listing.relative_to(root).as_posix()
        for entry in yaml.safe_load(listing.read_text(encoding="utf-8")) or ():
            try:
                mutant = Mutant(id=entry["id"], file=entry["file"], find=entry["find"], replace=entry["replace"],
                                tests=tuple(entry["tests"]), breaks=entry["breaks"], listed_in=where)
            except (KeyError, TypeError) as error:
                raise MutantListError(f"{where}: a mutant without {error}: {entry!r}") from None
            found.append(mutant)
    problems = []
    seen: set[str] = set()
    for mutant in found:
        label = f"{mutant.listed_in}: {mutant.id}"
        if mutant.id in seen:
            problems.append(f"{label}: the id is taken")
        seen.add(mutant.id)
        target = root / mutant.file
        count = target.read_text(encoding="utf-8").count(mutant.find) if target.is_file() else -1
        if count != 1:
            problems.append(f"{label}: {mutant.file} holds its text {count if count >= 0 else 'no'} time(s), not once")
        if mutant.find == mutant.replace:
            problems.append(f"{label}: the replacement changes nothing")
        problems += [f"{label}: no test file {t}" for t in mutant.tests if not (root / t.split("::")[0]).is_file()]
    if problems:
        raise MutantListError("\n".join(problems))
    return found


def changed_files(root: Path = ROOT, base: str = "main") -> set[str]:
    """Files a change touches: committed since it left `base`, staged, unstaged, and new."""
    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if line]

    merge_base = git("merge-base", base, "HEAD")[0]
    return set(git("diff", "--name-only", merge_base)) | set(git("ls-files", "--others", "--exclude-standard"))


def copy_tree(root: Path, into: Path) -> Path:
    """The tracked and new files of the tree (not git-ignored ones: databases, node_modules) under `into`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = root / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


def run_tests(tree: Path, tests: tuple[str, ...]) -> str:
    """'pass', 'fail' or 'timeout' for `tests` run in `tree` (one process: the machine is shared)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FAULTLINES_DB", None)   # tests/conftest.py gives every run a scratch database of its own
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
                               "-o", "timeout=600", *tests], cwd=tree, env=env, capture_output=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "pass" if done.returncode == 0 else "fail"


def try_mutant(tree: Path, mutant: Mutant) -> str:
    """Apply `mutant` to the copy in `tree`, run its tests, put the file back: 'killed', 'killed (timeout)' or
    'survived'."""
    target = tree / mutant.file
    original = target.read_text(encoding="utf-8")
    target.write_text(original.replace(mutant.find, mutant.replace, 1), encoding="utf-8")
    try:
        outcome = run_tests(tree, mutant.tests)
    finally:
        target.write_text(original, encoding="utf-8")
    return {"fail": "killed", "timeout": "killed (timeout)"}.get(outcome, "survived")


def run(mutants: list[Mutant], jobs: int = 1, root: Path = ROOT, echo=print) -> dict[str, str]:
    """Mutant id -> its outcome; a mutant whose tests fail unmutated is 'baseline fails' (neither kill nor survivor)."""
    outcomes: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="faultlines-mutants-") as scratch:
        trees = [copy_tree(root, Path(scratch) / f"tree{n}") for n in range(max(1, jobs))]
        # One unmutated run of every named test (one process: a test set's own run would import it all again);
        # only when that fails is each set run alone, to count the mutants of the sets that pass.
        every = tuple(sorted({t for m in mutants for t in m.tests}))
        failing: set[tuple[str, ...]] = set()
        if run_tests(trees[0], every) != "pass":
            for tests in sorted({m.tests for m in mutants}):
                if run_tests(trees[0], tests) != "pass":
                    failing.add(tests)
                    echo(f"baseline fails, its mutants are not counted: {' '.join(tests)}")
        free = list(trees)
        todo = [m for m in mutants if m.tests not in failing]
        outcomes.update({m.id: "baseline fails" for m in mutants if m.tests in failing})

        def one(mutant: Mutant) -> tuple[str, str]:
            tree = free.pop()
            try:
                return mutant.id, try_mutant(tree, mutant)
            finally:
                free.append(tree)

        with concurrent.futures.ThreadPoolExecutor(len(trees)) as pool:
            for mutant_id, outcome in pool.map(one, todo):
                outcomes[mutant_id] = outcome
                echo(f"  {mutant_id}: {outcome}", flush=True)
    return outcomes


def table(mutants: list[Mutant], outcomes: dict[str, str]) -> str:
    rows = [("mutant", "file", "outcome")] + [(m.id, m.file, outcomes.get(m.id, "not run")) for m in mutants]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    killed = sum(outcome.startswith("killed") for outcome in outcomes.values())
    survived = [m.id for m in mutants if outcomes.get(m.id) == "survived"]
    lines.append(f"total: {len(mutants)} mutants, {killed} killed, {len(survived)} survived"
                 + (f" ({', '.join(survived)})" if survived else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutants", description=__doc__.splitlines()[0])
    parser.add_argument("--changed", action="store_true", help="only the mutants of files changed against --base")
    parser.add_argument("--base", default="main", help="what --changed compares with (default main)")
    parser.add_argument("--only", nargs="+", metavar="ID", help="only these mutants")
    parser.add_argument("--list", action="store_true", help="list the mutants and what each breaks; run nothing")
    parser.add_argument("--jobs", type=int, default=1, help="copies of the tree run side by side (default 1)")
    args = parser.parse_args(argv)
    mutants = load_mutants()
    if args.changed:
        touched = changed_files(base=args.base)
        mutants = [m for m in mutants if m.file in touched or m.listed_in in touched
                   or any(t in touched for t in m.tests)]
    if args.only:
        unknown = set(args.only) - {m.id for m in mutants}
        if unknown:
            parser.error(f"no such mutant: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m.id in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.id}  {m.file}: {m.breaks}")
        return 0
    if not mutants:
        print("no mutants to run")
        return 0
    print(f"{len(mutants)} mutants, {len({m.tests for m in mutants})} test sets, on {args.jobs} copy(ies) of the tree")
    outcomes = run(mutants, args.jobs)
    print(table(mutants, outcomes))
    return 1 if any(outcome == "survived" for outcome in outcomes.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
