"""What a process reads once for all the pages of a live room it serves, and every page then shares.

After a move the listener reruns every page of the room at once (ui.live.push); what they all draw alike (the
session's row as of a step, a closed question's report) is built by the first page while the others wait for it.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class SharedReads:
    """Values built once per key, the newest `kept` of them kept; thread-safe, read-only for their callers."""

    def __init__(self, kept: int = 16):
        self._kept = kept
        self._lock = threading.Lock()
        self._values: OrderedDict = OrderedDict()
        self._building: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable, build: Callable[[], Any], *,
            keep: Callable[[Any], bool] = lambda value: True) -> Any:
        """The value of `key`, built by `build()` if no page built it yet (the first builds, the others wait).
        A built value `keep` refuses is returned but not kept (a read that raced a move)."""
        found = self._values.get(key)
        if found is not None:
            return found
        with self._lock:
            lock = self._building.setdefault(key, threading.Lock())
        with lock:
            found = self._values.get(key)
            if found is not None:
                return found
            found = build()
            with self._lock:
                if found is not None and keep(found):
                    self._values[key] = found
                    while len(self._values) > self._kept:
                        self._building.pop(self._values.popitem(last=False)[0], None)
                else:
                    self._building.pop(key, None)
        return found

    def __len__(self) -> int:
        return len(self._values)
