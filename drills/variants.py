"""Seeded variants: each attempt of a drill may get its own numbers, drawn from the givens' `vary`.

Variant 0 is the drill as written. Variant k > 0 draws every varying given from its allowed values with a
generator seeded by the drill's base id and k, so one variant number always gives the same numbers, in
the full drill and in any of its scopes. Formulas, reveal text and truths all follow the drawn givens,
because they are recomputed from them (`LoadedDrill.values`). A simulation-backed question follows too
when its preset names the drill values its run is built from (`sims.presets.SimPreset.inputs`); each preset
also says what every number of its run stands for in the drill (`SimPreset.mirrors`), and the check refuses a
variant whose drawn numbers the run would not use (`drills.lint.rule_simulations`).
"""
from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Collection, Mapping

from drills.draws import WRITTEN, base_id, drawn_givens, varies
from drills.lint import variant_values
from drills.loaded import LoadedDrill
from drills.schema import Drill

__all__ = ["WRITTEN", "base_id", "changed_givens", "drawn_givens", "in_variant", "label", "pick_variant",
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
    if variant not in cache:
        values, findings = variant_values(loaded.whole or loaded.drill, variant)   # a cut quotes the whole's numbers
        if findings:   # the content tests draw every variant, so this means a drill was edited carelessly
            raise ValueError(f"{loaded.drill.id} variant {variant}: {findings[0].message}")
        if loaded.variant == WRITTEN:
            cache.setdefault(WRITTEN, loaded)
        cache[variant] = replace(loaded, values=MappingProxyType(values), variant=variant)
    return cache[variant]


def pick_variant(drill: Drill, seed: int, had: Collection[int] = ()) -> int:
    """The variant a new attempt gets: the written numbers first, then ones this candidate has not had.

    `had` is the variants of the candidate's earlier attempts of the drill; once all are used, any.
    """
    if not varies(drill):
        return WRITTEN
    fresh = [v for v in range(drill.variants) if v not in set(had)]
    if WRITTEN in fresh:
        return WRITTEN
    pool = fresh or list(range(1, drill.variants))
    return pool[seed % len(pool)]


def variant_for(store, drill: Drill, handle: str, seed: int) -> int:
    """pick_variant over the variants `handle` has had in any attempt of this drill or its scopes."""
    had = [a.variant for a in store.attempts(handle=handle) if base_id(a.drill_id) == base_id(drill.id)]
    return pick_variant(drill, seed, had)


def label(variant: int) -> str:
    return "as written" if variant == WRITTEN else f"variant {variant}"


def changed_givens(loaded: LoadedDrill) -> Mapping[str, tuple[float, float]]:
    """Givens whose value in this variant differs from the written one: name -> (written, drawn)."""
    return {g.name: (g.value, loaded.values[g.name]) for g in loaded.drill.givens
            if loaded.values.get(g.name) != g.value}
