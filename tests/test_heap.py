"""The heap is frozen after new imports and refreshed every ten minutes, not on every run (ui/runtime/heap.py)."""
from __future__ import annotations

import gc
import sys
import types

from ui.runtime import heap


def test_a_run_freezes_after_new_imports_and_refreshes_an_old_freeze(monkeypatch):
    done = []
    monkeypatch.setattr(gc, "freeze", lambda: done.append("freeze"))
    monkeypatch.setattr(gc, "unfreeze", lambda: done.append("unfreeze"))
    monkeypatch.setattr(gc, "collect", lambda generation=2: done.append("collect") or 0)
    monkeypatch.setattr(heap, "_modules_at_freeze", 0)
    monkeypatch.setattr(heap, "_frozen_at", float("-inf"))
    clock = [1000.0]
    now = lambda: clock[0]   # noqa: E731
    assert heap.freeze_after_imports(now) and done == ["freeze"]
    clock[0] += heap.REFREEZE_S - 1
    assert not heap.freeze_after_imports(now) and done == ["freeze"], "nothing new imported, the freeze is fresh"
    monkeypatch.setitem(sys.modules, "faultlines_test_heap_import", types.ModuleType("faultlines_test_heap_import"))
    assert heap.freeze_after_imports(now) and done == ["freeze", "freeze"], "a new import: frozen again, no pass"
    clock[0] += heap.REFREEZE_S
    assert heap.freeze_after_imports(now)
    assert done[2:] == ["unfreeze", "collect", "freeze"], "an old freeze: a full pass over it, then frozen again"
    assert not heap.freeze_after_imports(now)


def test_frozen_objects_are_left_out_of_collections():
    # The CPython behaviour this leans on (public since 3.7): gc.freeze() moves what is tracked into a permanent
    # generation that collections skip, and gc.unfreeze() puts it back.
    kept = [[] for _ in range(1000)]
    gc.freeze()
    try:
        assert gc.get_freeze_count() >= len(kept)
        assert gc.is_tracked(kept[0])
        assert not any(found is kept[0] for found in gc.get_objects(generation=2)), "frozen: in no generation"
    finally:
        gc.unfreeze()
    assert any(found is kept[0] for found in gc.get_objects(generation=2)), "unfrozen: back in the oldest"
