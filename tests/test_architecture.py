"""House rules that code review alone would miss: the domain never imports the UI stack, and
every session-state or widget key is named in ui/keys.py."""
from __future__ import annotations

import ast
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
        for path in (ROOT / folder).glob("*.py"):
            assert "unsafe_allow_html=True" not in path.read_text(), path.name


# ---- every session-state and widget key is named in ui/keys.py -------------------------------------

KEY_SCAN = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")),
            *sorted(p for p in (ROOT / "ui").glob("*.py") if p.name != "keys.py")]
STATE_METHODS = {"get", "pop", "setdefault"}
# Files whose keys are not moved yet (both are being rewritten). The list may only shrink: a file here
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


def _literal_keys(path: Path) -> set[str]:
    found: set[ast.AST] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
    return {ast.unparse(n) for n in found if _spells_a_key(n)}


def test_session_state_and_widget_keys_are_named_in_ui_keys():
    """Keys spelled inline drift apart (a callback reading "ht_burst" after the widget was renamed):
    every key is a constant or a helper in ui/keys.py, written with a comment saying what it holds."""
    spelled = {p.relative_to(ROOT).as_posix(): sorted(_literal_keys(p)) for p in KEY_SCAN}
    assert {f: k for f, k in spelled.items() if k and f not in NOT_MOVED_YET} == {}, "name these in ui/keys.py"
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
        'st.session_state.pop(key, None)\n')
    assert _literal_keys(sample) == {"'go'", "f'go::{i}'", "'backlog'", "'seen'", "'flash'", "'visits'", "'note'",
                                     "'open'", "'pin::' + name"}


def _record_rewrites(source: str, tables) -> list[str]:
    """Statements in `source` that would change or remove rows of `tables` (UPDATE t, DELETE FROM t)."""
    import re

    names = "|".join(sorted(tables))
    return re.findall(rf"\b(?:UPDATE|DELETE\s+FROM)\s+(?:{names})\b", source, flags=re.IGNORECASE)


def test_record_tables_only_ever_gain_rows():
    # The DuckDB tallies and the PostgreSQL report copy both read only the rows added since their last pass;
    # an UPDATE or DELETE of a record row would leave them stale without any error.
    from drills.store_pg import APPENDED_TABLES

    assert _record_rewrites("DELETE FROM answers WHERE 1; update attempts set x = 1", APPENDED_TABLES) == \
        ["DELETE FROM answers", "update attempts"]   # the scan finds what it looks for
    found = {str(p.relative_to(ROOT)): _record_rewrites(p.read_text(encoding="utf-8"), APPENDED_TABLES)
             for folder in ("drills", "ui", "pages") for p in (ROOT / folder).rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}
