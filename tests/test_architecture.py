"""House rules that code review alone would miss: the domain never imports the UI stack, and
every session-state or widget key is named once (under its module's registered prefix, or in ui/keys.py)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ("drills", "sims", "labs")
FORBIDDEN = {"streamlit", "plotly"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_domain_packages_do_not_import_streamlit_or_plotly(package):
    offenders = {str(p.relative_to(ROOT)): _imports(p) & FORBIDDEN for p in (ROOT / package).rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_pages_never_open_the_database_directly():
    for path in (ROOT / "pages").glob("*.py"):
        assert "duckdb" not in _imports(path), path.name


def test_no_user_text_path_uses_unsafe_html():
    for folder in ("pages", "ui"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "unsafe_allow_html=True" not in path.read_text(), path.name


# ---- every session-state and widget key is named in ui/keys.py -------------------------------------

KEY_SCAN = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")),
            *sorted(p for p in (ROOT / "ui").rglob("*.py") if p.name != "keys.py")]
STATE_METHODS = {"get", "pop", "setdefault"}
# Files whose keys are not moved yet (none now: every one-module key lives in its module). The list may only shrink: a file here
# that no longer spells a key fails the test until it is dropped from the list.
NOT_MOVED_YET: set[str] = set()


def _is_session_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def _spells_a_key(node: ast.AST) -> bool:
    """A string literal, an f-string, or a sum with either in it; names, attributes and calls pass."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _spells_a_key(node.left) or _spells_a_key(node.right)
    return False


def _key_nodes(tree: ast.AST) -> set[ast.AST]:
    """What stands where a key goes: a widget's key=, st.session_state[...] and its get/pop/setdefault/in."""
    found: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            # a widget's key= (and helpers' chart_key= and the like) ...
            found.update(kw.value for kw in node.keywords if kw.arg and (kw.arg == "key" or kw.arg.endswith("_key")))
            # ... and st.session_state.get / pop / setdefault(KEY, ...)
            if (isinstance(node.func, ast.Attribute) and node.func.attr in STATE_METHODS
                    and _is_session_state(node.func.value) and node.args):
                found.add(node.args[0])
        elif isinstance(node, ast.Subscript) and _is_session_state(node.value):
            found.add(node.slice)                                  # st.session_state[KEY], also in del and =
        elif isinstance(node, ast.Compare) and any(_is_session_state(c) for c in node.comparators):
            found.add(node.left)                                   # KEY in st.session_state
    return found


def _literal_keys(path: Path) -> set[str]:
    """Keys spelled where they are used, and module constants that are bare strings used as keys: a module's
    own key is made by its registered prefix (K = keys.register(...); NAME = K("name")), never typed."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = _key_nodes(tree)
    bare = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name) and _spells_a_key(node.value)}
    named = {n.id for n in used if isinstance(n, ast.Name) and n.id in bare}
    typed = {f"{name} = {ast.unparse(bare[name])}" for name in named}
    return {ast.unparse(n) for n in used if _spells_a_key(n)} | typed


def test_session_state_and_widget_keys_are_named_in_ui_keys():
    """Keys spelled inline drift apart (a callback reading "ht_burst" after the widget was renamed):
    every key is a constant or a helper, in the module that uses it under the prefix it registered
    (ui.keys.register), or in ui/keys.py when modules share it; each with a comment saying what it holds."""
    spelled = {p.relative_to(ROOT).as_posix(): sorted(_literal_keys(p)) for p in KEY_SCAN}
    assert {f: k for f, k in spelled.items() if k and f not in NOT_MOVED_YET} == {}, \
        "make these with the module's registered prefix (ui.keys.register), or name them in ui/keys.py if shared"
    assert {f for f in NOT_MOVED_YET if not spelled.get(f)} == set(), "keys moved: drop it from NOT_MOVED_YET"


def test_the_key_scan_catches_each_way_of_spelling_a_key(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        'st.button("Go", key="go")\n'
        'st.button("Go", key=f"go::{i}")\n'
        'animate(frames, chart_key="backlog")\n'
        'st.session_state["seen"] = 1\n'
        'st.session_state.get("flash")\n'
        'st.session_state.setdefault("visits", set())\n'
        'st.session_state.pop("note", None)\n'
        'if "open" in st.session_state: pass\n'
        'st.session_state.pop("pin::" + name, None)\n'
        'st.button("Go", key=keys.GO)\n'
        'st.button("Go", key=keys.go(i))\n'
        'st.session_state[keys.SEEN] = 1\n'
        'st.session_state.get(keys.FLASH)\n'
        'st.session_state.pop(keys.PIN_PREFIX + name, None)\n'
        'st.session_state.pop(key, None)\n'
        'TYPED = "typed"\n'
        'MADE = K("made")\n'
        'st.button("Typed", key=TYPED)\n'
        'st.button("Made", key=MADE)\n')
    assert _literal_keys(sample) == {"'go'", "f'go::{i}'", "'backlog'", "'seen'", "'flash'", "'visits'", "'note'",
                                     "'open'", "'pin::' + name", "TYPED = 'typed'"}


def test_each_shared_key_is_named_once():
    """Two names for one value share one key without saying so (HOT_TENANT_TAB and SIM_TAB were both "tab")."""
    from ui import keys

    names: dict[str, list[str]] = {}
    for name, value in vars(keys).items():
        if name.isupper() and not name.startswith("_") and isinstance(value, str):
            names.setdefault(value, []).append(name)
    assert {value: found for value, found in names.items() if len(found) > 1} == {}


def test_a_key_prefix_belongs_to_one_module(monkeypatch):
    from ui import keys

    monkeypatch.setattr(keys, "_PREFIXES", dict(keys._PREFIXES))
    monkeypatch.setattr(keys, "_MADE", dict(keys._MADE))
    mine = keys.register("probe", "ui.probe")
    assert mine("field") == "probe::field" and mine.item("form", 7) == "probe::form::7"
    assert keys.register("probe", "ui.probe")("other") == "probe::other"   # a reload of the same module
    with pytest.raises(ValueError, match="already registered by ui.probe"):
        keys.register("probe", "ui.elsewhere")
    theirs = keys.register("elsewhere", "ui.elsewhere")
    with pytest.raises(ValueError, match="already ui.probe's"):
        theirs.kept("probe::field")                     # another module's key, spelled out
    with pytest.raises(ValueError, match="shared key"):
        theirs.kept(keys.ATTEMPT_TOKEN)                  # a shared key taken as a module's own
    with pytest.raises(ValueError, match="one word"):
        keys.register("a::b", "ui.probe")


def test_every_ui_module_registers_its_keys_without_a_clash():
    """Importing a module registers its prefix and makes its keys; a clash anywhere raises here."""
    import importlib

    for path in sorted((ROOT / "ui").rglob("*.py")):
        importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
    from ui import keys

    owners = set(keys._PREFIXES.values())
    assert all(owner.startswith("ui.") for owner in owners)


def _record_rewrites(source: str, tables) -> list[str]:
    """Statements in `source` that would change or remove rows of `tables` (UPDATE t, DELETE FROM t)."""
    import re

    names = "|".join(sorted(tables))
    return re.findall(rf"\b(?:UPDATE|DELETE\s+FROM)\s+(?:{names})\b", source, flags=re.IGNORECASE)


def test_record_tables_only_ever_gain_rows():
    # The DuckDB tallies and the PostgreSQL report copy both read only the rows added since their last pass;
    # an UPDATE or DELETE of a record row would leave them stale without any error.
    from drills.store.postgres import APPENDED_TABLES

    assert _record_rewrites("DELETE FROM answers WHERE 1; update attempts set x = 1", APPENDED_TABLES) == \
        ["DELETE FROM answers", "update attempts"]   # the scan finds what it looks for
    found = {str(p.relative_to(ROOT)): _record_rewrites(p.read_text(encoding="utf-8"), APPENDED_TABLES)
             for folder in ("drills", "ui", "pages") for p in (ROOT / folder).rglob("*.py")}
    # A numbered migration may fill a new column of old rows (31 keys the handles): a store runs its migrations
    # before it reads anything, and a report copy that meets a new migration copies every row again.
    assert found.pop("drills/store/migrations.py") == ["UPDATE candidates"]
    assert {k: v for k, v in found.items() if v} == {}


# ---- no import circles, not even one hidden behind an import inside a function -----------------------

CIRCLE_SCAN = ("drills", "sims", "labs", "ui", "pages", "bench")
CIRCLES_ALLOWED: set[frozenset[str]] = set()   # none: a new circle is a design problem, not an exception


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _nodes_that_run(node: ast.AST):
    """Every node under `node`, but not the body of an `if TYPE_CHECKING:` block (its else still runs)."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for other in child.orelse:
                yield other
                yield from _nodes_that_run(other)
        else:
            yield from _nodes_that_run(child)


def _imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports, at module level or inside a function (a deferred import still
    runs, it only hides the circle); `if TYPE_CHECKING:` blocks never run and are skipped."""
    found: set[str] = set()
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in _nodes_that_run(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.update(f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names)
    resolved = set()
    for module in found:
        while module and module not in known:   # drills.store.open_store -> drills.store
            module = module.rpartition(".")[0]
        if module and module != name:
            resolved.add(module)
    return resolved


def _import_circles(root: Path, folders) -> list[frozenset[str]]:
    """Every set of modules that import one another in a ring (Tarjan's strongly connected components)."""
    paths = {_module_name(p, root): p for folder in folders for p in sorted((root / folder).rglob("*.py"))}
    graph = {name: _imported_modules(name, path, set(paths)) for name, path in paths.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[frozenset[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            ring = {stack.pop()}
            while module not in ring:
                ring.add(stack.pop())
            if len(ring) > 1:
                circles.append(frozenset(ring))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return circles


def test_no_module_imports_itself_through_a_circle():
    """A circle works only while every module in it is imported in one order; a function-level import
    that breaks it moves the failure to run time. Each module should sit on one floor of the house."""
    circles = {tuple(sorted(c)) for c in _import_circles(ROOT, CIRCLE_SCAN) if c not in CIRCLES_ALLOWED}
    assert circles == set()
    gone = {tuple(sorted(c)) for c in CIRCLES_ALLOWED} - {tuple(sorted(c)) for c in _import_circles(ROOT, CIRCLE_SCAN)}
    assert gone == set(), "this circle is broken now: drop it from CIRCLES_ALLOWED"


def test_the_circle_scan_sees_a_circle_hidden_in_a_function(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import c\n")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from pkg import a\n    return a\n")
    (pkg / "sub" / "c.py").write_text("from ..a import x\nfrom typing import TYPE_CHECKING\n"
                                      "if TYPE_CHECKING:\n    from pkg.sub import d\n")
    (pkg / "sub" / "d.py").write_text("import pkg.sub.c\n")
    assert _import_circles(tmp_path, ["pkg"]) == [frozenset({"pkg.a", "pkg.b"})]


# ---- the attempt store: a package of one job per module ------------------------------------------------

def test_the_store_is_a_package_of_one_job_per_module():
    """SQL once (core), the numbered migrations, DuckDB plumbing and the PostgreSQL backend, each on its own;
    the old two-module store (store.py beside store_pg.py) is gone, so nothing can import it by accident."""
    package = ROOT / "drills" / "store"
    modules = {p.name for p in package.glob("*.py")}
    assert {"__init__.py", "core.py", "migrations.py", "duckdb.py", "postgres.py"} <= modules
    assert not (ROOT / "drills" / "store.py").exists() and not (ROOT / "drills" / "store_pg.py").exists()
    from drills.store import AttemptStore, StoreCore
    from drills.store.postgres import PostgresAttemptStore

    assert StoreCore.lock_answer is AttemptStore.lock_answer is PostgresAttemptStore.lock_answer   # written once
    long = {p.name: n for p in package.glob("*.py") if (n := len(p.read_text().splitlines())) > 400}
    assert long == {}, "a store module over 400 lines: give part of its job a module of its own"


def test_the_duckdb_store_never_loads_the_postgresql_driver():
    """A DuckDB-only process (every test, the demo) imports drills.store without psycopg; only
    drills.backends and drills.store.postgres reach the server's driver."""
    import subprocess
    import sys

    probe = "import sys, drills.store; print(sorted(m for m in ('psycopg', 'psycopg_pool') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---- thin pages, modules of one job, one definition ---------------------------------------------------

PAGE_LINES = 120
MODULE_LINES = 400


def test_pages_are_thin():
    """A page reads widgets and calls ui/; its logic lives in ui/ or the model, where tests can reach it."""
    long = {p.name: n for p in sorted((ROOT / "pages").glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= PAGE_LINES}
    assert long == {}


def test_the_platform_model_is_in_modules_of_one_job():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "sims" / "platform").glob("*.py")}
    assert {"params.py", "tenants.py", "model.py", "calm.py", "stats.py"} <= set(sizes)
    assert {name: n for name, n in sizes.items() if n > MODULE_LINES} == {}


def test_percentile_is_defined_once():
    """Two definitions (linear in the spread band, nearest rank in the platform's waits) once disagreed."""
    found = [p.relative_to(ROOT).as_posix() for folder in ("drills", "sims", "labs", "ui", "pages")
             for p in sorted((ROOT / folder).rglob("*.py"))
             if any(isinstance(n, ast.FunctionDef) and "percentile" in n.name
                    for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert found == ["sims/spread.py"]


def test_tests_run_websocket_coroutines_off_the_main_thread():
    """A browser test leaves Playwright's loop running on its worker's main thread, so a later file's
    asyncio.run() fails there (it did in CI, by file order): tests use bench.load_ws.run_blocking."""
    offenders = [p.name for p in sorted((ROOT / "tests").glob("test_*.py"))
                 if p.name != Path(__file__).name and re.search(r"\basyncio\.run\(", p.read_text())]
    assert offenders == []


# ---- Streamlit's internals are reached through one module ------------------------------------------------

SEAM = "ui/runtime/seam.py"
# What Streamlit documents as importable; anything else under streamlit (runtime, proto, web, config, errors, ...)
# is its inside, which only the seam may import.
STREAMLIT_PUBLIC = {"streamlit", "streamlit.components.v1"}
APP_CODE = ("app.py", "pages", "ui", "drills", "sims", "labs", "deploy")


def _streamlit_internals(path: Path) -> set[str]:
    """The Streamlit modules below its documented API that `path` imports, wherever (a function's body too), also
    through importlib or __import__ with a literal name, and `from streamlit import runtime` of a submodule."""
    import importlib.util

    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "streamlit")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "streamlit":
            found.add(node.module)
            if node.module == "streamlit":
                found.update(f"streamlit.{alias.name}" for alias in node.names
                             if importlib.util.find_spec(f"streamlit.{alias.name}") is not None)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and node.args[0].value.startswith("streamlit") \
                and getattr(node.func, "attr", getattr(node.func, "id", "")) in {"import_module", "__import__"}:
            found.add(node.args[0].value)
    return found - STREAMLIT_PUBLIC


def _app_files() -> list[Path]:
    return [p for name in APP_CODE for p in sorted([ROOT / name] if name.endswith(".py") else (ROOT / name).rglob("*.py"))]


def test_only_the_seam_imports_streamlit_internals():
    offenders = {p.relative_to(ROOT).as_posix(): sorted(found) for p in _app_files()
                 if p.relative_to(ROOT).as_posix() != SEAM and (found := _streamlit_internals(p))}
    assert offenders == {}, "reach Streamlit's internals through ui/runtime/seam.py, with a fallback"
    assert _streamlit_internals(ROOT / SEAM), "the seam is where the internals are imported"


def test_the_internals_scan_sees_each_way_of_importing_them(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import streamlit as st\n"
                     "import streamlit.components.v1 as components\n"
                     "from streamlit import config\n"
                     "def later():\n"
                     "    from streamlit.runtime.scriptrunner import get_script_run_ctx\n"
                     "    import streamlit.proto.ClientState_pb2\n"
                     "    importlib.import_module('streamlit.web.server')\n", encoding="utf-8")
    assert _streamlit_internals(probe) == {"streamlit.config", "streamlit.runtime.scriptrunner",
                                           "streamlit.proto.ClientState_pb2", "streamlit.web.server"}


def test_the_house_keeps_its_rooms_small():
    # Issue 35's promise: no module over 600 lines, and no more than 15 modules directly in ui/ (the rest live
    # in the feature packages). Numbers written here, not read from the code.
    folders = ("drills", "sims", "labs", "ui", "pages", "bench", "deploy")
    long = {p.relative_to(ROOT).as_posix(): n for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
    assert len(list((ROOT / "ui").glob("*.py"))) <= 15
