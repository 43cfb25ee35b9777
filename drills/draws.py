"""The givens a seeded variant draws: pure, so the loader's rules and drills.variants can both use it."""
from __future__ import annotations

import random

from drills.schema import Drill
from drills.scope import split_id

WRITTEN = 0
_RETRIES = 50


def base_id(drill_id: str) -> str:
    """The drill a scoped id was cut from (`one_tenant~break2` -> `one_tenant`)."""
    return split_id(drill_id)[0]


def varies(drill: Drill) -> bool:
    return drill.variants > 1 and any(g.vary is not None for g in drill.givens)


def drawn_givens(drill: Drill, variant: int) -> dict[str, float]:
    """The givens' values in `variant` (the written values for variant 0 or a drill that does not vary).

    Each variant draws from a generator seeded by the base id, the variant and a retry count, and draws
    again (up to a limit) when it would repeat the written numbers or an earlier variant's, so a retake
    always sees numbers it has not seen before while there are enough combinations.
    """
    written = {g.name: g.value for g in drill.givens}
    if variant == WRITTEN or not varies(drill):
        return written
    varying = [g for g in drill.givens if g.vary is not None]   # file order: a new given keeps earlier draws
    taken = {tuple(written[g.name] for g in varying)}
    draw: tuple[float, ...] = ()
    for number in range(1, variant + 1):
        for retry in range(_RETRIES):
            rng = random.Random(f"{base_id(drill.id)}#{number}#{retry}")
            draw = tuple(rng.choice(g.vary.values()) for g in varying)
            if draw not in taken:
                break
        taken.add(draw)
    return written | dict(zip((g.name for g in varying), draw))
