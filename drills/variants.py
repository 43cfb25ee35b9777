"""Drawn numbers: each attempt of a drill that varies gets its own numbers, drawn from the givens' `vary`.

An attempt's `variant` is its draw number: 0 is the drill as written; any other number comes from the
attempt's own random seed (drills.draws.draw_for_seed) and draws every varying given from the whole of its
`vary` space, so one draw number always gives the same numbers, in the full drill and in any of its scopes,
while two candidates almost never share one. A draw whose numbers break a condition the text relies on
(`holds:`) is never given: pick_variant takes the seed's next draw. Formulas, reveal text and truths all
follow the drawn givens, because they are recomputed from them (`LoadedDrill.values`). A simulation-backed question follows too
when its preset names the drill values its run is built from (`sims.presets.SimPreset.inputs`); each preset
also says what every number of its run stands for in the drill (`SimPreset.mirrors`), and the check refuses a
variant whose drawn numbers the run would not use (`drills.lint.rule_simulations`).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from types import MappingProxyType
from typing import Collection, Mapping

from drills.draws import WRITTEN, base_id, drawn_givens, seed_draws, varies
from drills.formulas import format_quantity
from drills.lint import variant_values
from drills.lint.conditions import broken_holds
from drills.loaded import LoadedDrill
from drills.schema import Drill

_CACHED_DRAWS = 512
_RETAKE_CANDIDATES = 8   # fresh draws a retake weighs against the truths already seen
_COMPARED_RETAKES = 12   # earlier draws it compares with (the most recent ones)
_RECENT_DRAWS = 64       # draws whose numbers are kept: a start computes its draw's, its first page wants them again

# The numbers of recent draws, by (drill object, draw): a new attempt's draw is computed when it is picked
# (usable_numbers) and again when its first page puts the drill in that variant (in_variant), ~2 ms each.
_RECENT: OrderedDict[tuple[int, int], tuple[Drill, dict[str, float], list]] = OrderedDict()
_RECENT_LOCK = threading.Lock()   # script threads of many sessions pick and open draws at once


def _draw_values(drill: Drill, draw: int) -> tuple[dict[str, float], list]:
    """variant_values(drill, draw), kept for the last few draws asked (copies: callers may keep or change them).
    A draw that cannot be computed raises, as variant_values does, and is not kept."""
    key = (id(drill), draw)
    with _RECENT_LOCK:
        kept = _RECENT.get(key)
    if kept is None or kept[0] is not drill:   # the drill object itself is kept, so its id is not reused meanwhile
        values, findings = variant_values(drill, draw)
        kept = (drill, values, findings)
        with _RECENT_LOCK:
            _RECENT[key] = kept
            _RECENT.move_to_end(key)
            while len(_RECENT) > _RECENT_DRAWS:
                _RECENT.popitem(last=False)
    return dict(kept[1]), list(kept[2])

__all__ = ["drawn_numbers", "WRITTEN", "base_id", "changed_givens", "drawn_givens", "in_variant", "label", "pick_variant",
           "variant_for", "variant_values", "varies"]


def in_variant(loaded: LoadedDrill, variant: int) -> LoadedDrill:
    """The drill as an attempt of `variant` sees it: same questions and text, the variant's numbers.

    Kept on the loaded drill, so the pages of one attempt compute a variant once per catalogue.
    """
    if variant == loaded.variant:
        return loaded
    if variant == WRITTEN or not varies(loaded.drill):
        return loaded.variant_cache.get(WRITTEN, loaded) if loaded.variant != WRITTEN else loaded
    cache = loaded.variant_cache
    if len(cache) > _CACHED_DRAWS:   # every attempt draws its own numbers: keep the cache bounded
        written = cache.get(WRITTEN)
        cache.clear()
        if written is not None:
            cache[WRITTEN] = written
    if variant not in cache:
        values, findings = _draw_values(loaded.whole or loaded.drill, variant)   # a cut quotes the whole's numbers
        if findings:   # the content tests draw every variant, so this means a drill was edited carelessly
            raise ValueError(f"{loaded.drill.id} variant {variant}: {findings[0].message}")
        if loaded.variant == WRITTEN:
            cache.setdefault(WRITTEN, loaded)
        cache[variant] = replace(loaded, values=MappingProxyType(values), variant=variant)
    return cache[variant]


def usable_numbers(drill: Drill, draw: int) -> dict[str, float] | None:
    """The draw's numbers, or None for a draw nobody may be asked in: one the loader would refuse (a formula
    fails, a joint condition breaks) or whose numbers break a `holds:` condition of the text."""
    try:
        values, findings = _draw_values(drill, draw)
    except Exception:   # a draw the loader would refuse anyway
        return None
    return None if findings or broken_holds(drill, values) is not None else values


def pick_variant(drill: Drill, seed: int, had: Collection[int] = ()) -> int:
    """The draw a new attempt gets: its own, from its seed over the whole `vary` space.

    The written numbers only for a candidate's first attempt of a drill that says so
    (`first_attempt_as_written`); `had` is the draws of the candidate's earlier attempts, none repeated.
    A draw the loader would refuse (a formula fails, a joint condition breaks) or whose numbers break a
    `holds:` condition of the text is never given: the seed's next draw is taken instead (drills.draws.
    seed_draws), so the same seed always gets the same draw.
    """
    if not varies(drill):
        return WRITTEN
    if drill.first_attempt_as_written and not had:
        return WRITTEN
    taken = set(had)
    computed: dict[int, dict[str, float] | None] = {}

    def numbers(draw: int) -> dict[str, float] | None:   # None: a draw no attempt may get
        if draw not in computed:
            computed[draw] = usable_numbers(drill, draw)
        return computed[draw]

    wanted = _RETAKE_CANDIDATES if taken else 1
    fresh: list[int] = []
    for draw in seed_draws(seed):
        if draw not in taken and draw not in fresh and numbers(draw) is not None:
            fresh.append(draw)
            if len(fresh) == wanted:
                break
    if not fresh:   # no draw of this seed keeps the conditions: the written numbers do (the rules check them)
        return WRITTEN
    if len(fresh) == 1:
        return fresh[0]
    # A retake: of its first few fresh draws, the one that repeats fewest of the truths the candidate already
    # saw (a new draw of the givens can still land on an old answer, e.g. 2,000 x 0.7 = 2,800 x 0.5).
    asked = {q.id for q in drill.all_questions() if getattr(q, "kind", "") == "numeric" and getattr(q, "answer", None)}
    seen = [_truths(drill, d, asked) for d in sorted(taken)[-_COMPARED_RETAKES:]]

    def repeats(draw: int) -> int:
        mine = {q: v for q, v in (numbers(draw) or {}).items() if q in asked}
        return sum(1 for q, v in mine.items() if any(old.get(q) == v for old in seen))

    return min(fresh, key=repeats)   # min keeps the earliest of equals: deterministic


def _truths(drill: Drill, draw: int, asked: set[str]) -> dict[str, float]:
    """The formula-graded numeric truths of `draw` (empty when the draw cannot be computed)."""
    try:
        values, _ = variant_values(drill, draw)
    except Exception:   # a draw the loader would refuse anyway: it simply counts as repeating nothing
        return {}
    return {q: values[q] for q in asked if q in values}


def variant_for(store, drill: Drill, handle: str, seed: int) -> int:
    """pick_variant over the draws `handle` has had in any attempt of this drill or its scopes."""
    had = [a.variant for a in store.attempts(handle=handle) if base_id(a.drill_id) == base_id(drill.id)]
    return pick_variant(drill, seed, had)


def label(variant: int) -> str:
    return "as written" if variant == WRITTEN else f"draw {variant}"


def drawn_numbers(loaded: LoadedDrill) -> str:
    """The numbers an attempt drew, as the board and the export show them: `name=value unit; …` for every
    varying given ("as written" for the written numbers)."""
    drill = loaded.whole or loaded.drill
    if loaded.variant == WRITTEN or not varies(drill):
        return "as written"
    units = {g.name: g.unit for g in drill.givens}
    return "; ".join(f"{g.name}={format_quantity(loaded.values[g.name], units[g.name])}"
                     for g in drill.givens if g.vary is not None)


def changed_givens(loaded: LoadedDrill) -> Mapping[str, tuple[float, float]]:
    """Givens whose value in this variant differs from the written one: name -> (written, drawn)."""
    return {g.name: (g.value, loaded.values[g.name]) for g in loaded.drill.givens
            if loaded.values.get(g.name) != g.value}
