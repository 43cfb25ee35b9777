"""Keep what lives as long as the process (modules, classes, the catalogue) out of the collector's full passes.

Streamlit's full collection after every run is off (.streamlit/config.toml), but Python's own collector still makes
a full pass now and then, over every object in the process: 110-145 ms of CPU each on this app's heap, with every
session waiting on the GIL meanwhile (two or three in a 40-session run on one process). gc.freeze() moves what is
alive into a permanent generation the passes skip; after it a full pass took 6-8 ms. Most long-lived objects come
from imports, so the frame freezes at the start of a run when the process has imported modules since the last
freeze (the first runs of each page).

What is alive at a freeze stays frozen: the sessions of that moment are freed by reference counting as usual, but
cycles among their objects would never be collected. So every REFREEZE_S the frozen objects are put back, one
full pass collects what has become garbage, and what is left is frozen again: a leak bounded to the sessions
alive at the last freeze, for one pass (~130 ms, in one run) per process every ten minutes.
"""
from __future__ import annotations

import gc
import sys
import threading
import time

REFREEZE_S = 600.0
_lock = threading.Lock()
_modules_at_freeze = 0            # len(sys.modules) when the process last froze its heap
_frozen_at = float("-inf")        # time.monotonic() of that freeze


def freeze_after_imports(clock=time.monotonic) -> bool:
    """Freeze the heap when modules were imported since the last freeze, or the last one is REFREEZE_S old
    (collecting first what the frozen objects left as garbage); True when it froze."""
    global _modules_at_freeze, _frozen_at
    if len(sys.modules) == _modules_at_freeze and clock() - _frozen_at < REFREEZE_S:
        return False
    with _lock:
        modules, at = len(sys.modules), clock()
        if modules == _modules_at_freeze and at - _frozen_at < REFREEZE_S:
            return False
        if modules == _modules_at_freeze:   # only old: give the frozen objects one full pass
            gc.unfreeze()
            gc.collect()
        gc.freeze()
        _modules_at_freeze, _frozen_at = modules, at
        return True
