"""House rules that code review alone would miss: the domain never imports the UI stack."""
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
