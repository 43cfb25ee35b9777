"""Drawn numbers (issues 12 and 21): each attempt draws its own numbers from its seed, and every view follows them.

The content checks draw the numbers of sampled seeds;
the store and page checks follow one retake from the catalogue to its graded results.
"""
from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from drills import scoring
from drills.loader import check_file, load_catalogue
from drills.schema import NumericQuestion
from drills.reports.grading_key import DrillKey
from drills.scope import ScopedDrills
from drills.store import AttemptStore
from drills.draws import draw_for_seed, sample_draws, varies
from drills.variants import changed_givens, drawn_givens, in_variant, pick_variant, variant_for, variant_values
from tests.test_pages import _go, _lock_question, _start, _texts

CATALOGUE = load_catalogue()
VARYING = [loaded for loaded in CATALOGUE.drills.values() if varies(loaded.drill)]
DRAWS = sample_draws(40)   # the draws attempts with seeds 1 .. 40 get


def test_the_shipped_drills_vary():
    assert {loaded.drill.id for loaded in VARYING} >= {"one_tenant", "hot_tenant"}


@pytest.mark.parametrize("loaded", VARYING, ids=lambda loaded: loaded.drill.id)
def test_200_sampled_seeds_draw_their_own_sensible_numbers(loaded):
    drill, written = loaded.drill, loaded.values
    units = dict(loaded.units) | {q.id: q.unit for q in drill.all_questions() if isinstance(q, NumericQuestion)}
    rng = random.Random(12)
    sampled = {pick_variant(drill, rng.randrange(2**31)) for _ in range(200)}
    assert len(sampled) == 200 and 0 not in sampled, "each attempt its own draw, none as written by default"
    distinct = set()
    for variant in sorted(sampled):
        values, failures = variant_values(drill, variant)
        assert not failures, f"variant {variant}: {failures}"
        distinct.add(tuple(sorted(drawn_givens(drill, variant).items())))
        for q in drill.all_questions():
            if not (isinstance(q, NumericQuestion) and q.answer):
                continue
            truth = values[q.id]
            assert math.isfinite(truth) and truth >= 0, f"variant {variant}: {q.id} = {truth}"
            # Every quantity the answer is built from and shares its unit keeps its side of the answer, so
            # prose such as "more than the fleet can run" stays true in every variant.
            for name in set(re.findall(r"[A-Za-z_]\w*", q.answer)) & set(values):
                if units.get(name) != units[q.id] or math.isclose(written[q.id], written[name]):
                    continue
                assert (written[q.id] > written[name]) == (truth > values[name]), (
                    f"variant {variant}: {q.id} and {name} swap order ({truth:g} vs {values[name]:g})")
    assert len(distinct) >= 180, f"200 attempts drew only {len(distinct)} different sets of numbers"


def test_a_variant_changes_the_numbers_and_everything_computed_from_them():
    loaded = CATALOGUE.drills["hot_tenant"]
    variant = next(v for v in DRAWS
                   if drawn_givens(loaded.drill, v)["hot_rate"] != loaded.values["hot_rate"])
    other = in_variant(loaded, variant)
    assert other.variant == variant and in_variant(loaded, variant) is other, "computed once, then reused"
    assert changed_givens(other)["hot_rate"] == (loaded.values["hot_rate"], other.values["hot_rate"])
    # b_deficit is written as hot_rate - partition_capacity: the truth follows the drawn rate.
    assert other.values["b_deficit"] == pytest.approx(other.values["hot_rate"] - other.values["partition_capacity"])
    assert other.values["b_deficit"] != loaded.values["b_deficit"]
    template = "{hot_rate:.0f} units/s"
    assert other.text(template) != loaded.text(template)
    assert in_variant(other, 0) is loaded, "back to the written numbers"


def test_scoped_drills_draw_the_same_numbers_as_their_drill():
    full = CATALOGUE.drills["one_tenant"]
    scoped = ScopedDrills(CATALOGUE.drills)["one_tenant~essentials"]
    for variant in (1, 5):
        assert in_variant(scoped, variant).values["tenants"] == in_variant(full, variant).values["tenants"]
    assert in_variant(scoped, 3).drill.id == "one_tenant~essentials"


@pytest.mark.parametrize("drill_id", sorted(CATALOGUE.drills))
def test_every_text_of_every_shorter_practice_renders_in_every_variant(drill_id):
    # A shorter practice drops questions whose answers its text still quotes (the board's fleet use, say);
    # each variant must give the cut drill the whole drill's numbers, as the written numbers do.
    from drills.lint import texts
    from drills.scope import scopes, scoped_id

    full = CATALOGUE.drills[drill_id]
    drills = ScopedDrills(CATALOGUE.drills)
    broken = []
    for scope in scopes(full.drill):
        cut = drills[scoped_id(drill_id, scope.id)]
        sims = {q.id: 1.0 for q in cut.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
        for variant in [0, *DRAWS[:6]]:
            seen = in_variant(cut, variant)
            whole = in_variant(full, variant)
            assert {k: seen.values[k] for k in whole.values} == dict(whole.values)
            for text in texts(seen.drill):
                try:
                    seen.text(text.template, sims)
                except Exception as problem:   # noqa: BLE001 (collect every failure, then report them together)
                    broken.append(f"{scope.id} variant {variant}: {problem}")
    assert broken == []


def test_every_attempt_draws_from_its_own_seed_and_the_written_numbers_only_when_the_drill_says(tmp_path):
    drill = CATALOGUE.drills["one_tenant"].drill
    store = AttemptStore(tmp_path / "v.duckdb")
    seen = []
    for seed in range(12):
        variant = variant_for(store, drill, "ada", seed)
        seen.append(variant)
        store.start_attempt("one_tenant" if seed % 2 else "one_tenant~break2", "ada", "", 2700,
                            seed=seed, variant=variant)
    assert 0 not in seen, "a first attempt draws too, unless the drill keeps the written numbers"
    assert len(set(seen)) == len(seen), "no draw repeats for one candidate"
    assert variant_for(store, drill, "bob", 99) not in seen, "another candidate's seed gives another draw"
    assert [a.variant for a in store.attempts(handle="ada")] == seen, "the store keeps each attempt's draw"
    kept = drill.model_copy(update={"first_attempt_as_written": True})
    assert variant_for(store, kept, "cleo", 3) == 0, "a drill may keep the written numbers for a first attempt"
    assert variant_for(store, kept, "ada", 3) != 0, "but never for a retake"


def test_a_drill_without_vary_never_varies():
    loaded, errors = check_file(Path("drills/content/_template.yaml"))
    assert loaded is not None, errors
    assert pick_variant(loaded.drill, 5, had=[0, 1, 2]) == 0
    assert in_variant(loaded, 4) is loaded


def test_vary_rules_are_reported_by_the_check(tmp_path):
    text = open("drills/content/hot_tenant.yaml", encoding="utf-8").read()
    broken = tmp_path / "hot_tenant.yaml"
    # A rate that reaches three partitions' capacity divides by zero in one formula.
    broken.write_text(text.replace("vary: {low: 210, high: 290, step: 5}", "vary: {choices: [250, 300]}"))
    _, errors = check_file(broken)
    assert any("division by zero" in e.message and "in draw" in e.message for e in errors), errors
    one = open("drills/content/one_tenant.yaml", encoding="utf-8").read()
    halves = tmp_path / "y" / "one_tenant.yaml"
    halves.parent.mkdir()
    # The text shows Acme's rate with no decimals, so a drawn 4.5 would read as a rate the drill does not use.
    halves.write_text(one.replace("vary: {choices: [4, 5, 6]}", "vary: {choices: [4, 4.5, 5]}"))
    _, errors = check_file(halves)
    assert any("rounds the drawn value 4.5 away" in e.message for e in errors), errors


def test_every_retake_changes_an_answer_beyond_its_tolerance():
    """A retake must not be passable with the written answers: each variant moves some answer past its tolerance
    (One Tenant's always in a part's own questions, which the page test below relies on)."""
    for loaded in VARYING:
        for variant in DRAWS:
            mine = in_variant(loaded, variant)
            asked = ([q for p in loaded.drill.parts for q in p.questions] if loaded.drill.id == "one_tenant"
                     else loaded.drill.all_questions())
            moved = [q.id for q in asked if isinstance(q, NumericQuestion) and q.answer
                     and scoring.grade_numeric(mine.values[q.id], loaded.values[q.id], q.tolerance) < 1.0]
            assert moved, f"{loaded.drill.id} variant {variant} grades the written answers as right"


# -- a retake through the pages -------------------------------------------------------------------
def _retake(app_test, db_path):
    """Start one_tenant twice under one handle; returns the second run and its attempt."""
    from tests.test_history import _code_from

    code = _code_from(_start(app_test, handle="rita"))
    at = _start(app_test, handle="rita", code=code)   # a handle in use starts again only with its code
    store = AttemptStore(db_path)
    attempts = store.attempts(handle="rita")
    assert attempts[0].variant != 0 and attempts[1].variant not in (0, attempts[0].variant)
    return at, store, attempts[1]


def test_a_retake_shows_its_own_numbers_and_grades_against_them(app_test, db_path):
    at, store, attempt = _retake(app_test, db_path)
    written = CATALOGUE.drills["one_tenant"]
    mine = in_variant(written, attempt.variant)
    assert f"draw {attempt.variant}" in _texts(at)
    # The first question of the drill whose written truth would fail this variant's right answer (every
    # variant has one: test_every_retake_changes_an_answer_beyond_its_tolerance).
    part, question = next((p, q) for p in written.drill.parts for q in p.questions
                          if isinstance(q, NumericQuestion) and q.answer
                          and scoring.grade_numeric(mine.values[q.id], written.values[q.id], q.tolerance) < 1.0)
    questions = part.questions
    _go(at, part.id)
    for earlier in questions[:questions.index(question)]:   # the page asks them in order
        _lock_question(at, earlier, mine.values.get(earlier.id))
    _lock_question(at, question, float(f"{mine.values[question.id]:.6g}"))
    answer = store.answers(attempt.id)[question.id]
    graded = scoring.grade_numeric(answer.value, mine.values[question.id], question.tolerance)
    assert graded == 1.0, "the variant's truth is the one a right answer meets"
    assert scoring.grade_numeric(answer.value, written.values[question.id], question.tolerance) < 1.0


# -- simulations run on the variant's numbers ------------------------------------------------------
def test_presets_built_from_the_written_numbers_are_the_stock_runs():
    from sims import presets

    for loaded in CATALOGUE.drills.values():
        for q in loaded.drill.all_questions():
            if isinstance(q, NumericQuestion) and q.sim and presets.PRESETS[q.sim].inputs:
                preset = presets.PRESETS[q.sim]
                assert preset.params_for(loaded.values) == preset.params, f"{loaded.drill.id}: {q.sim}"


def test_a_variant_is_graded_against_a_run_of_its_own_numbers():
    from ui.drill.attempt_view import sim_truths_of

    hot = CATALOGUE.drills["hot_tenant"]
    written = sim_truths_of(hot)
    faster = next(v for v in DRAWS if drawn_givens(hot.drill, v)["hot_rate"] > 250)
    mine = in_variant(hot, faster)
    runs = sim_truths_of(mine)
    # With fresh work first, the replay gets what the tenant leaves of three partitions' capacity: the
    # model's drain time matches the drill's own floor for the variant's rate, as it does as written.
    assert runs["r_sim_uneven"] == pytest.approx(mine.values["uneven_floor_s"], rel=0.02)
    assert written["r_sim_uneven"] == pytest.approx(hot.values["uneven_floor_s"], rel=0.02)
    assert runs["r_sim_drain"] > written["r_sim_drain"], "less spare capacity drains the backlog later"
    key = DrillKey.from_loaded(hot, sim_truths_of, [faster])
    position = key.question_ids.index("r_sim_drain")
    assert key.truths[position] == pytest.approx(written["r_sim_drain"])
    assert dict(key.variant_grades)[faster][position][0] == pytest.approx(runs["r_sim_drain"])


def test_every_embedded_run_follows_the_numbers_of_each_variant():
    """Each number a preset takes from the drill is the drawn one in every variant, and a variant gets a run of
    its own exactly when it draws new values for what the preset reads."""
    from drills.formulas import evaluate
    from sims import presets

    followed = set()
    for loaded in VARYING:
        embedded = {q.sim for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
        for variant in DRAWS[:20]:
            mine = in_variant(loaded, variant)
            for preset_id in sorted(embedded):
                preset = presets.PRESETS[preset_id]
                params = preset.params_for(mine.values)
                for field, expr in preset.mirrors.items():
                    if expr is not None:
                        assert getattr(params, field) == pytest.approx(evaluate(expr, mine.values), rel=1e-9), (
                            f"{loaded.drill.id} variant {variant}: {preset_id} runs {field} off the drawn {expr}")
                moved = [name for name in preset.inputs if mine.values[name] != loaded.values[name]]
                assert (params != preset.params_for(loaded.values)) == bool(moved), (
                    f"{loaded.drill.id} variant {variant}: {preset_id} reads {moved} but its run did not change")
                if moved:
                    followed.add(preset_id)
    assert {"partitions.replay_drain", "hot_shard.tenant_groups", "retry_storm.jitter_peak"} <= followed



def _formula_truths(drill, draw):
    values, _ = variant_values(drill, draw)
    return {q.id: values[q.id] for q in drill.all_questions()
            if isinstance(q, NumericQuestion) and q.answer is not None}


def _repeats(drill, draw, seen) -> int:
    return sum(1 for q, v in _formula_truths(drill, draw).items() if seen.get(q) == v)


@pytest.mark.parametrize("loaded", [x for x in VARYING if "~" not in x.drill.id], ids=lambda loaded: loaded.drill.id)
def test_a_retake_repeats_as_few_of_the_truths_already_seen_as_its_fresh_draws_allow(loaded):
    # A new draw of the givens can land on an old answer (2,000 x 0.7 = 2,800 x 0.5 misses in cache_stampede):
    # a retake weighs its first eight fresh draws and takes the one repeating fewest of the candidate's truths.
    drill = loaded.drill
    rng = random.Random(f"retake-{drill.id}")
    repeated = []
    for _ in range(15):
        seed = rng.randrange(2**31)
        first = pick_variant(drill, seed)
        seen = _formula_truths(drill, first)
        retake = pick_variant(drill, seed + 1, had=[first])
        assert retake != first
        fewest = min(_repeats(drill, d, seen) for d in (draw_for_seed(seed + 1, a) for a in range(8)) if d != first)
        repeated.append(_repeats(drill, retake, seen))
        assert repeated[-1] == fewest, f"seed {seed + 1}: the retake repeats {repeated[-1]} truths, a fresh draw {fewest}"
    if drill.id != "one_tenant":   # One Tenant's 46 truths over few values each make a few repeats unavoidable
        assert repeated == [0] * 15
