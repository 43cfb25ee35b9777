"""The givens an attempt draws: pure, so the content rules and drills.variants both use it.

Each attempt of a drill that varies draws its own numbers. Its draw number (the attempts table's `variant`
column) comes from the attempt's own random seed, and the draw number seeds a generator that picks every
varying given from the whole of its `vary` space. Draw 0 is the drill as written; any other draw differs
from the written numbers in at least one given that a question uses.
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping

from drills.formulas import FormulaError, condition_holds, evaluate
from drills.schema import Drill
from drills.scope import split_id

WRITTEN = 0
DRAWS = 2**31 - 1   # draw numbers are 1 .. DRAWS, so they fit the store's INTEGER column
CHECK_DRAWS = 500   # seeded draws drills.check samples per drill, besides each range's corners
LOAD_DRAWS = 48     # the (cheaper) sample the loader checks on every start
_RETRIES = 50
_JOINT_RETRIES = 400   # a draw that must meet joint conditions may need more tries to find one
SEED_DRAWS = 200       # draw numbers one attempt's seed offers before it falls back to the written numbers


def base_id(drill_id: str) -> str:
    """The drill a scoped id was cut from (`one_tenant~break2` -> `one_tenant`)."""
    return split_id(drill_id)[0]


def varies(drill: Drill) -> bool:
    return any(g.vary is not None for g in drill.givens)


def draw_for_seed(seed: int, attempt: int = 0) -> int:
    """The draw number an attempt with this random seed gets (`attempt` re-draws past numbers already had)."""
    return 1 + random.Random(f"draw#{seed}#{attempt}").randrange(DRAWS)


def seed_draws(seed: int, count: int = SEED_DRAWS) -> Iterator[int]:
    """The draw numbers a seed offers, in the order an attempt takes them: draw_for_seed(seed, 0), then 1, ...
    A draw that is refused (already had, or breaking a condition its text relies on) gives way to the next."""
    return (draw_for_seed(seed, attempt) for attempt in range(count))


def given_uses(drill: Drill) -> Callable[[str], set[str]]:
    """A function naming the givens an expression reaches, directly or through derived values."""
    givens = {g.name for g in drill.givens}
    derived = {d.name: d.expr for d in drill.derived}

    def uses(expr: str, seen: frozenset[str] = frozenset()) -> set[str]:
        found: set[str] = set()
        for name in set(re.findall(r"[A-Za-z_]\w*", expr)) - seen:
            if name in givens:
                found.add(name)
            elif name in derived:
                found |= uses(derived[name], seen | {name})
        return found
    return uses


def asked_givens(drill: Drill) -> frozenset[str]:
    """The givens some question's formula reaches, directly or through derived values."""
    uses = given_uses(drill)
    return frozenset().union(*(uses(q.answer) for q in drill.all_questions()
                               if getattr(q, "kind", "") == "numeric" and q.answer))


def drawn_givens(drill: Drill, draw: int) -> dict[str, float]:
    """The givens' values in `draw` (the written values for draw 0 or a drill that does not vary).

    The generator is seeded by the base id and the draw number, so one draw gives the same numbers in the
    whole drill and in any of its scopes. It draws again when the numbers a question uses would all be the
    written ones, and past the retry limit moves one such given off its written value.
    """
    written = {g.name: g.value for g in drill.givens}
    if draw == WRITTEN or not varies(drill):
        return written
    varying = [g for g in drill.givens if g.vary is not None]   # file order: a new given keeps earlier draws
    asking = asked_givens(drill)   # once, not once per varying given
    asked = [g for g in varying if g.name in asking]
    joint = joint_conditions(drill)
    values = dict(written)
    for retry in range(_RETRIES if not joint else _JOINT_RETRIES):
        rng = random.Random(f"{base_id(drill.id)}#{draw}#{retry}")
        values = written | {g.name: rng.choice(g.vary.values()) for g in varying}
        if (not asked or any(values[g.name] != g.value for g in asked)) and meets(drill, values, joint):
            return values
    if joint:   # the content rules name this draw and the condition it breaks, and the loader refuses it
        return values
    given = asked[draw % len(asked)]
    values[given.name] = next(v for v in given.vary.values() if v != given.value)
    return values


def joint_conditions(drill: Drill) -> tuple[str, ...]:
    """Every `vary.when` of the drill: conditions a draw must meet, so the givens they name are drawn jointly."""
    return tuple(c for g in drill.givens if g.vary is not None for c in g.vary.when)


def with_derived(drill: Drill, givens: Mapping[str, float], exprs: tuple[str, ...] = ()) -> dict[str, float]:
    """The givens and the derived values `exprs` reach (all of them when none are given); one that fails is
    left out. Only what the conditions read is computed: a draw is checked before its values are."""
    derived = {d.name: d.expr for d in drill.derived}
    needed, todo = set(), [n for e in exprs for n in re.findall(r"[A-Za-z_]\w*", e)]
    while todo:
        name = todo.pop()
        if name in derived and name not in needed:
            needed.add(name)
            todo += re.findall(r"[A-Za-z_]\w*", derived[name])
    values = dict(givens)
    for item in drill.derived:
        if exprs and item.name not in needed:
            continue
        try:
            values[item.name] = evaluate(item.expr, values)
        except FormulaError:
            continue
    return values


def meets(drill: Drill, givens: Mapping[str, float], conditions: tuple[str, ...] | None = None) -> bool:
    """Whether these givens meet every joint condition (one that cannot be evaluated is not met)."""
    conditions = joint_conditions(drill) if conditions is None else conditions
    if not conditions:
        return True
    values = with_derived(drill, givens, conditions)
    try:
        return all(condition_holds(c, values) for c in conditions)
    except FormulaError:
        return False


def corners(drill: Drill) -> Iterator[dict[str, float]]:
    """The edges of the `vary` space: every varying given at its lowest, at its highest, and each given
    alone at either end with the others as written; those a joint condition (`vary.when`) rules out are left
    out, since no attempt draws them."""
    written = {g.name: g.value for g in drill.givens}
    varying = [g for g in drill.givens if g.vary is not None]
    if not varying:
        return
    candidates = [written | {g.name: min(g.vary.values()) for g in varying},
                  written | {g.name: max(g.vary.values()) for g in varying}]
    for g in varying:
        for end in (min(g.vary.values()), max(g.vary.values())):
            if end != g.value:
                candidates.append(written | {g.name: end})
    # A corner the joint conditions rule out is never drawn; the rest of the space's edges still are.
    yield from (values for values in candidates if meets(drill, values))


def sample_draws(count: int) -> list[int]:
    """`count` draw numbers as attempts with seeds 1 .. count get them: what the check and the tests walk."""
    return [draw_for_seed(seed) for seed in range(1, count + 1)]


def sampled(drill: Drill, draws: int = CHECK_DRAWS) -> Iterator[tuple[str, Mapping[str, float]]]:
    """What the rules check a varying drill on: `draws` seeded draws, then the corners, each with a label."""
    if not varies(drill):
        return
    for draw in sample_draws(draws):
        yield f"draw {draw}", drawn_givens(drill, draw)
    for index, values in enumerate(corners(drill), start=1):
        yield f"corner {index} of the vary ranges", values
