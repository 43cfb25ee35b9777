"""The store's parts and what holds them together: every mixin lives in drills/store/, reaches the core only
through the members drills.store.contract.StorePart declares, and every refusal a lock-in meets is a LockRefused."""
from __future__ import annotations

import ast
import inspect

import pytest

from drills.records import AttemptFinished, LockRefused
from drills.store import StoreCore
from drills.store.contract import StorePart
from drills.store.live import LiveClosed


def _parts() -> list[type]:
    return [base for base in StoreCore.__mro__[1:] if issubclass(base, StorePart) and base is not StorePart]


def _private_calls(cls: type) -> set[str]:
    """Every `self._name` a class's methods touch."""
    tree = ast.parse(inspect.getsource(cls))
    return {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr.startswith("_")}


def _own(cls: type) -> set[str]:
    return {name for name in vars(cls) if name.startswith("_") and not name.startswith("__")}


def test_every_part_of_the_store_is_a_store_part_inside_the_package():
    parts = _parts()
    assert {p.__name__ for p in parts} >= {"AccountsStore", "LiveStore", "ReviewStore", "TimelineStore"}
    assert all(p.__module__.startswith("drills.store.") for p in parts), [p.__module__ for p in parts]


def test_a_part_calls_nothing_private_of_the_core_that_the_contract_does_not_name():
    declared = _own(StorePart) - {"_abc_impl"}
    used = set()
    for part in _parts():
        strays = _private_calls(part) - _own(part) - declared
        assert not strays, f"{part.__name__} calls {sorted(strays)}, which StorePart does not declare"
        used |= _private_calls(part) & declared
    assert used == declared, f"StorePart declares {sorted(declared - used)}, which no part uses: drop them"


def test_the_core_and_the_backends_supply_everything_the_contract_names():
    from drills.store import AttemptStore
    from drills.store.postgres import PostgresAttemptStore

    assert StorePart.__abstractmethods__ >= {"_transaction", "_reading", "_insert_new", "_one", "_all"}
    assert not AttemptStore.__abstractmethods__ and not PostgresAttemptStore.__abstractmethods__
    with pytest.raises(TypeError):
        StoreCore()   # no backend: the plumbing is missing, so it cannot be made by mistake


def test_a_live_refusal_is_a_lock_refused_and_never_travels_as_finished():
    assert issubclass(LiveClosed, LockRefused) and issubclass(AttemptFinished, LockRefused)
    assert not issubclass(LiveClosed, AttemptFinished)


def test_the_store_package_takes_nothing_from_above_but_the_records():
    """Migrations, mixins and plumbing all live in drills/store/; from the rest of drills/ it reads only the
    record types (drills.records) and the time box's pure arithmetic (drills.timebox: which part of an outage an
    attempt is owed), so the package never imports its own parts from outside."""
    import pathlib

    package = pathlib.Path(__file__).resolve().parents[1] / "drills" / "store"
    outside = set()
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            outside |= {n for n in names if n.startswith("drills.") and not n.startswith("drills.store")}
    assert outside <= {"drills.records", "drills.timebox"}, outside
