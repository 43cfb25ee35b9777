"""The content rules, each shown catching the defect it was written for.

Every registered rule breaks its own minimal drill and nothing else (one generated test per rule, so a rule
cannot exist without a failing case). Beyond that, each test puts back into the shipped drill the text (or
numbers) it had before an issue, and the rule names it; the shipped drills pass every rule
(tests/test_loader.py), and the harvest walk from issue 21 finds no key.
"""
from __future__ import annotations

import random
import re
import pytest
import yaml

from drills import lint
from drills.draws import DRAWS, asked_givens, draw_for_seed, drawn_givens, sample_draws, sampled
from drills.lint.registry import RULES, base, broken_case
from drills.loader import CONTENT_DIR, check_file, load_catalogue
from drills.schema import Drill, NumericQuestion
from drills.store import AttemptStore
from drills.variants import in_variant, variant_for

ONE = (CONTENT_DIR / "one_tenant.yaml").read_text(encoding="utf-8")
HOT = (CONTENT_DIR / "hot_tenant.yaml").read_text(encoding="utf-8")
CATALOGUE = load_catalogue()


# -- the registry: every rule with the one drill that breaks only it --------------------------------


def _run(data: dict) -> list:
    return lint.run_rules(lint.Subject(Drill.model_validate(data), "base", draws=48))


def test_the_base_drill_passes_every_rule():
    assert _run(base()) == []


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_rule_refuses_its_own_broken_drill_and_no_other_rule_does(name):
    found = _run(broken_case(RULES[name]))
    assert found, f"{name}'s broken case passes every rule"
    assert {f.rule for f in found} == {name}, [(f.rule, f.message) for f in found]


def test_every_rule_function_is_registered_with_a_case():
    import inspect

    defined = {fname.removeprefix("rule_") for family in lint.FAMILIES
               for fname, fn in inspect.getmembers(family, inspect.isfunction)
               if fname.startswith("rule_") and fn.__module__ == family.__name__}
    assert defined <= set(RULES), sorted(defined - set(RULES))
    assert "typed_figures" in RULES


def test_a_rule_cannot_be_registered_twice():
    from drills.lint.registry import register

    with pytest.raises(ValueError, match="registered twice"):
        register("pacing", 1, lambda s: [], lambda d: None)


def _drill(text: str, *replacements: tuple[str, str]) -> Drill:
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    return Drill.model_validate(yaml.safe_load(text))


def _messages(findings) -> list[str]:
    return [f.message for f in findings]


# -- every path answerable -----------------------------------------------------------------------
FLEET_IN_THE_BODY = ("The fleet is **{processes:.0f} worker\n      processes of {slots_per_process:.0f} slots each**, "
                     "one job to a slot. ")
OLD_BOARD = (
    ("Before any design, put the sizing on the board. " + FLEET_IN_THE_BODY.replace("\n      ", "\n      "),
     "Before any design, put the sizing on the board. "),
    ("prompt: How many jobs per second can the fleet finish?",
     "prompt: With {processes:.0f} worker processes of {slots_per_process:.0f} slots each, how many jobs per "
     "second can the fleet finish?"),
)


def test_the_fleet_size_stated_only_in_a_dropped_question_leaves_utilisation_unanswerable():
    drill = _drill(ONE, *OLD_BOARD)
    found = [m for m in _messages(lint.rule_paths_answerable(drill)) if m.startswith("utilisation needs")]
    assert len(found) == 2 and {"processes", "slots_per_process"} == {m.split()[2].rstrip(",") for m in found}
    for message in found:   # the essentials path and all five single-break practices, not the whole drill
        assert "the essentials path" in message and message.count("practice") == 5, message
        assert "the whole drill" not in message
    assert list(lint.rule_paths_answerable(CATALOGUE.drills["one_tenant"].drill)) == []


# -- no truth printed before its lock-in ---------------------------------------------------------
OLD_LEAKS = (
    ("| Every job takes about as long as any other |", "| Every job is about {job_duration:.0f} s |"),
    ("Every job that was running fails part-way through.", "The {inflight_jobs:.0f} jobs that were running fail "
                                                           "part-way through."),
    ("Keep the board in view: how much of peak\n      demand can B and C carry between them?",
     "Keep the board in view: B and C together\n      cover only {fallback_share:.0f}% of peak calls."),
    ("Set it beside a normal peak hour from the board. What share",
     "A normal peak hour costs about ${peak_hour_spend:,.0f}. What share"),
    ("""              Arrivals are everyone else's usual rate plus Acme's storm rate. The fleet's
              {processes:.0f} × {slots_per_process:.0f} slots each finish one job every
              {calls_per_job:.0f} × {call_s:.0f} s.""",
     """              In the storm about {storm_arrivals:.2f} jobs/s arrive, and the whole fleet finishes at most
              {fleet_capacity:.2f} jobs/s."""),
)


def _leaks(drill: Drill) -> set[tuple[str, str]]:
    values, failures = lint.compute_values(drill)
    assert not failures
    found = set()
    for finding in lint.rule_no_leaks(drill, values, lint.drawn_variants(drill, 12)):
        question = finding.message.split("the truth of ")[1].split(",")[0]
        found.add((".".join(map(str, finding.loc)), question))
    return found


def test_the_four_truths_and_the_hint_printed_before_their_lock_in_are_found():
    drill = _drill(ONE, *OLD_LEAKS)
    parts = [p.id for p in drill.parts]
    at = lambda part: f"parts.{parts.index(part)}"  # noqa: E731
    found = _leaks(drill)
    assert (f"{at('baseline')}.body", "job_duration") in found
    assert (f"{at('break3')}.body", "jobs_in_flight") in found
    assert (f"{at('break2')}.body", "fallback_share") in found
    assert any(where.startswith(f"{at('break3')}.questions") and q == "peak_hour_spend" for where, q in found)
    hint = f"{at('break1')}.questions.2.hints.1.text"
    assert {(hint, "b1_arrivals"), (hint, "job_capacity")} <= found, "a hint may state only its question's inputs"
    assert _leaks(CATALOGUE.drills["one_tenant"].drill) == set()


# -- typed figures equal to a varied given -------------------------------------------------------
def test_a_figure_equal_to_a_varied_given_is_refused_even_when_it_looks_like_a_year_or_a_status():
    # `tenants` is 2,000 as written and drawn afresh by every attempt.
    for typed in ("at 2000 req/s", "in 2000", "a 2000 response"):
        drill = _drill(ONE, ("Every job that was running fails part-way through.",
                             f"Every job that was running fails part-way through, {typed}."))
        found = list(lint.rule_varied_figures(drill))
        assert found and "tenants" in found[0].message, typed
    # The old rule let all three through: years and statuses were labels wherever they appeared.
    assert lint.literal_figures("at 2000 req/s", lint.LABELS) == set()
    assert list(lint.rule_varied_figures(CATALOGUE.drills["one_tenant"].drill)) == []


# -- every draw differs, and enough of them -----------------------------------------------------
def test_every_draw_differs_from_the_written_numbers_in_a_given_a_question_uses():
    # Only two values to draw for the one given a question uses: half the draws would repeat the written one.
    drill = _drill(HOT, ("vary: {choices: [6, 8, 10, 12, 14]}", "vary: {choices: [10, 12]}"),
                   ("vary: {choices: [10, 15, 20, 25, 30]}", "vary: {choices: [10, 20]}"))
    for name in ("hot_rate", "batch_size"):
        drill = drill.model_copy(update={"givens": tuple(g.model_copy(update={"vary": None}) if g.name == name else g
                                                         for g in drill.givens)})
    asked = sorted(n for n in asked_givens(drill) if drill.givens[[g.name for g in drill.givens].index(n)].vary)
    written = {g.name: g.value for g in drill.givens}
    for draw in sample_draws(200):
        values = drawn_givens(drill, draw)
        assert any(values[n] != written[n] for n in asked), (draw, asked)


def test_a_drill_with_few_combinations_to_draw_is_refused():
    # Hot Tenant before issue 21: 3 rates × 3 page sizes, 9 keys in all.
    drill = _drill(HOT, ("vary: {low: 210, high: 290, step: 5}", "vary: {choices: [225, 250, 275]}"),
                   ("vary: {choices: [10, 15, 20, 25, 30]}", "vary: {choices: [10, 20, 25]}"),
                   ("vary: {choices: [6, 8, 10, 12, 14]}, note:", "note:"), ("vary: {choices: [5, 6, 8, 10]}, note:", "note:"))
    [finding] = lint.rule_draw_space(drill)
    assert "only 9 combinations" in finding.message
    assert list(lint.rule_draw_space(CATALOGUE.drills["hot_tenant"].drill)) == []


def test_the_check_samples_500_draws_and_every_corner():
    drill = CATALOGUE.drills["one_tenant"].drill
    labels = [label for label, _ in sampled(drill)]
    draws = [label for label in labels if label.startswith("draw ")]
    corners = [label for label in labels if label.startswith("corner")]
    varying = [g for g in drill.givens if g.vary is not None]
    assert len(set(draws)) >= 500
    assert len(corners) >= 2 + len(varying), "all low, all high, and each given at either end"


# -- every problem of a file -------------------------------------------------------------------
def test_a_schema_error_is_reported_beside_formula_and_id_errors(tmp_path):
    text = ONE.replace("{name: peak_rate, value: 5, unit: jobs/s,", "{name: peak_rate, value: five, unit: jobs/s,", 1)
    text = text.replace("  - {name: slots, expr: processes * slots_per_process, unit: slots}",
                        "  - {name: slots, expr: processes * slots_per_proces, unit: slots}", 1)
    text = text.replace("      - id: jobs_in_flight\n", "      - id: job_duration\n", 1)
    path = tmp_path / "one_tenant.yaml"
    path.write_text(text)
    loaded, errors = check_file(path, draws=1)
    assert loaded is None
    messages = " | ".join(f"{e.path}: {e.message}" for e in errors)
    assert "peak_rate" in messages and "valid number" in messages, messages
    assert "slots_per_proces" in messages, messages
    assert "'job_duration' is used twice" in messages, messages


# -- option length --------------------------------------------------------------------------------
def test_the_right_option_sits_at_no_length_rank_more_than_half_again_as_often_as_chance():
    lengths = [lint.OptionLengths(f"q{i}", right=30, longest_distractor=40, loc=("q", i), rank=(1, 4))
               for i in range(9)] + [lint.OptionLengths(f"r{i}", right=40, longest_distractor=30, loc=("r", i),
                                                        rank=(0, 4)) for i in range(11)]
    found = [f.message for f in lint.rank_findings(lengths)]
    assert any("second-longest" in m and "9 of 20" in m for m in found), found
    for loaded in CATALOGUE.drills.values():
        assert lint.rank_findings(lint.option_lengths(loaded.drill, loaded.text)) == []


# -- a harvest finds no key ------------------------------------------------------------------------
def _key(loaded, draw: int) -> tuple:
    """What a throwaway attempt's review shows: every formula question's truth in that attempt's numbers."""
    mine = in_variant(loaded, draw)
    return tuple(round(mine.values[q.id], 6) for q in loaded.drill.all_questions()
                 if isinstance(q, NumericQuestion) and q.answer)


@pytest.mark.parametrize("drill_id", ["one_tenant", "hot_tenant"])
def test_a_harvest_of_throwaway_attempts_gives_no_key_a_later_retake_draws(tmp_path, drill_id):
    """The walk from issue 21: one throwaway handle finishes many empty attempts and keeps every key it is
    shown; later attempts under real handles must draw numbers none of them had (before, 12 attempts
    harvested all 12 of One Tenant's keys, and a first attempt was always the written numbers). Hot Tenant
    has some 1,400 keys, so a harvest of 30 holds about 2% of them: a later draw may meet one by chance,
    never more often than that share allows."""
    loaded = CATALOGUE.drills[drill_id]
    store = AttemptStore(tmp_path / "harvest.duckdb")
    rng = random.Random(drill_id)
    harvest = set()
    for _ in range(30):
        seed = rng.randrange(2**31)
        draw = variant_for(store, loaded.drill, "throwaway", seed)
        store.start_attempt(drill_id, "throwaway", "", 2700, seed=seed, variant=draw)
        harvest.add(_key(loaded, draw))
    assert len(harvest) == 30, "the throwaway handle saw 30 different keys"
    assert _key(loaded, 0) not in harvest, "a first attempt draws too"
    met = []
    for handle in range(40):
        for _ in range(3):
            seed = rng.randrange(2**31)
            draw = variant_for(store, loaded.drill, f"real-{handle}", seed)
            store.start_attempt(drill_id, f"real-{handle}", "", 2700, seed=seed, variant=draw)
            assert 1 <= draw <= DRAWS
            met.append(_key(loaded, draw) in harvest)
    assert sum(met) <= 0.05 * len(met), f"{sum(met)} of {len(met)} later attempts drew a harvested key"
    if drill_id == "one_tenant":
        assert not any(met), "One Tenant's keys are too many for a harvest of 30 to meet"
    assert draw_for_seed(1) != draw_for_seed(2)


def test_the_export_and_the_board_show_each_attempts_drawn_numbers(tmp_path):
    from drills.reports import aggregates
    from drills.reports.exports import export_answers, export_attempts
    from drills.reports.grading_key import DrillKey
    from drills.reports.source import Filters
    from ui.drill.attempt_view import AttemptView

    loaded = CATALOGUE.drills["hot_tenant"]
    store = AttemptStore(tmp_path / "numbers.duckdb")
    drawn = {}
    for handle, seed in (("ann", 11), ("ben", 12)):
        draw = variant_for(store, loaded.drill, handle, seed)
        attempt = store.start_attempt("hot_tenant", handle, "", 2700, seed=seed, variant=draw)
        mine = in_variant(loaded, draw)
        question = next(q for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.answer)
        part = next(p.id for p in loaded.drill.parts if question in p.questions)
        store.lock_answer(attempt.id, question.id, part, "numeric", value=mine.values[question.id])
        drawn[attempt.id] = f"hot_rate={mine.values['hot_rate']:g} units/s"
        view = AttemptView.load(store, attempt, loaded)
        assert view.drawn_numbers.startswith(drawn[attempt.id]), view.drawn_numbers
    key = DrillKey.from_loaded(loaded, {q.id: 1.0 for q in loaded.drill.all_questions() if getattr(q, "sim", None)},
                               aggregates.variants_drawn(store, "hot_tenant"))
    for frame in (export_answers(store, key, Filters("hot_tenant")), export_attempts(store, key, Filters("hot_tenant"))):
        shown = dict(zip(frame["attempt_id"], frame["numbers"]))
        assert all(shown[a].startswith(text) for a, text in drawn.items()), shown


# -- the lab reaches the drill's sizes ----------------------------------------------------------------
def test_the_lab_sliders_reach_the_sizes_the_drill_quotes(monkeypatch):
    import ui.labs.pg_lab as pg_lab

    specs = {}

    def capture(view_id, *given):
        specs[view_id] = {spec["name"]: spec for spec in given}
        return [spec["value"] for spec in given]
    monkeypatch.setattr(pg_lab, "_sliders", capture)
    pg_lab._snapshot_controls()
    pg_lab._cap_controls()
    values = CATALOGUE.drills["one_tenant"].values
    assert specs["held_snapshot"]["churn"]["max_value"] >= values["churned_rows"], "the drill's 300,000 rows"
    assert specs["cap_race"]["runs"]["max_value"] >= 50, "enough runs to see the spread the drill describes"


# -- sentences true in every draw (issue 39): the five cases, each put back ------------------------------
def _found(rule, drill: Drill, draws: int = 200) -> list:
    return [f for f in lint.run_rules(lint.Subject(drill, drill.id, draws)) if f.rule == rule]


def test_free_tenants_shed_on_an_ordinary_day_is_found_until_the_cap_is_drawn_jointly():
    # Before: the spend cap was drawn apart from the daily volume, so 80% of it could fall below a normal day.
    old = _drill(ONE, (', when: ["spend_cap * free_shed_pct / 100 > jobs_per_day * cost_per_job_a"]', ""))
    [finding] = _found("conditions", old)
    assert "Shed by plan: Free at {free_shed_pct:.0f}%" in finding.message
    assert "relies on free_shed_at > daily_spend" in finding.message
    reads = finding.message.split("where it reads ")[1].split(";")[0]
    assert {"cost_per_job_a", "free_shed_pct", "jobs_per_day", "spend_cap"} == {p.split("=")[0] for p in reads.split(", ")}
    spend = dict((k, float(v)) for k, v in (p.split("=") for p in reads.split(", ")))
    assert spend["spend_cap"] * spend["free_shed_pct"] / 100 <= spend["jobs_per_day"] * spend["cost_per_job_a"]
    assert _found("conditions", CATALOGUE.drills["one_tenant"].drill, 500) == []


def test_free_tenants_shed_on_an_ordinary_day_is_found_with_no_condition_declared():
    # One Tenant as it stood: the cap drawn apart from the daily volume and no holds: at all. No sentence compares
    # the two; "Normal spend" is a row of the sizing table, "Shed by plan: Free at 80%" a row of Break 3's.
    old = _drill(ONE, (', when: ["spend_cap * free_shed_pct / 100 > jobs_per_day * cost_per_job_a"]', ""),
                 ('        holds: ["free_shed_at > daily_spend"]\n', ""))
    found = {f.message.split(" is a limit and ")[0]: f for f in _found("limits", old, 48)}
    assert {"free_shed_at", "pro_shed_at", "spend_cap"} <= set(found), _messages(found.values())
    shed = found["free_shed_at"]
    assert shed.loc[0] == "derived" and "daily_spend an ordinary level of the same $/day" in shed.message
    assert "as written free_shed_at > daily_spend (6400 against 5000)" in shed.message
    drawn = shed.message.split("so that draw")[0].rsplit("(", 1)[1]   # "5600 against 6000), "
    limit, level = (float(n) for n in re.findall(r"[\d.]+", drawn))
    assert limit <= level, shed.message
    assert 'holds: ["free_shed_at > daily_spend"]' in shed.message
    # Declaring the relation hands it to the conditions rule, which names the draw that breaks it.
    declared = _drill(ONE, (', when: ["spend_cap * free_shed_pct / 100 > jobs_per_day * cost_per_job_a"]', ""))
    assert "free_shed_at" not in {f.message.split(" is a limit")[0] for f in _found("limits", declared, 48)}
    assert _found("conditions", declared, 48)
    assert _found("limits", CATALOGUE.drills["one_tenant"].drill, 48) == []


def test_a_retry_storm_that_stays_under_the_partners_limit_is_found():
    # Found by the limits rule on Retry Chain: 250 searches/s × 3³ attempts is 6,750 calls/s, under a drawn 7,500.
    old = _drill((CONTENT_DIR / "retry_chain.yaml").read_text(encoding="utf-8"),
                 (', when: ["user_rate * per_request > partner_limit"]', ""),
                 ('        holds: ["e_peak_calls > partner_limit"]\n', ""))
    [finding] = _found("limits", old, 500)
    assert finding.message.startswith("partner_limit is a limit and e_peak_calls an ordinary level of the same "
                                      "calls/s: as written partner_limit < e_peak_calls (5000 against 25600)")
    assert _found("limits", CATALOGUE.drills["retry_chain"].drill, 500) == []


def test_shares_of_different_wholes_are_not_read_as_a_limit_and_its_level():
    # Break 3's "Free at 80%" of the cap and the 77% of a peak hour that is new money are both %, and swap order
    # across draws, but one is a share of the cap and the other of an hour's spend.
    drill = CATALOGUE.drills["one_tenant"].drill
    subject = lint.Subject(drill, "one_tenant", 48)
    runs = [v for _, v, failures in subject.drawn if not failures]
    assert {v["free_shed_pct"] > v["b3_excess_share"] for v in runs} == {True, False}
    assert _found("limits", drill, 48) == []


def test_a_batch_that_only_meets_the_tenants_rate_is_not_said_to_clear_it():
    # Before: min_batch = ceil(hot_rate / (1000 / write_ms)), which at 250 units/s and 12 ms is 3: 3 × 1000/12 = 250.
    old = _drill(HOT, ("expr: floor(hot_rate * write_ms / 1000) + 1,", "expr: ceil(hot_rate / (1000 / write_ms)),"))
    messages = [f.message for f in _found("conditions", old, 500)]
    assert any("would just clear it" in m and "min_batch * 1000 / write_ms > hot_rate" in m for m in messages), messages
    unbacked = _drill(HOT, ('      holds: ["min_batch * 1000 / write_ms > hot_rate", "o_batched > hot_rate"]\n', ""))
    assert any("would just clear it" in f.message for f in _found("comparisons", unbacked))


def test_the_capped_recovery_is_not_called_the_worst_case():
    old = _drill(ONE, ("The capped figure is a fluid estimate, not a bound:", "The capped figure is the worst case:"))
    assert any("worst case" in f.message for f in _found("comparisons", old))


def test_the_cap_race_is_not_said_to_overshoot_in_each_run():
    old = _drill(ONE, ("by a different amount from\n             run to run:", "by a different amount in\n             each run:"))
    assert any("each run" in f.message for f in _found("comparisons", old))


def test_a_figure_past_a_thousand_is_shown_with_its_separator():
    old = _drill(HOT, ("**{o_batched:,.0f} events/s**", "**{o_batched:.0f} events/s**"))
    [finding] = _found("number_formats", old)
    assert "{o_batched:.0f}" in finding.message and "{o_batched:,.0f}" in finding.message
    assert _found("number_formats", CATALOGUE.drills["hot_tenant"].drill, 500) == []


def test_a_draw_that_breaks_a_joint_condition_is_refused_by_the_loader(monkeypatch):
    from drills import draws

    drill = CATALOGUE.drills["one_tenant"].drill
    monkeypatch.setattr(draws, "_JOINT_RETRIES", 1)   # no retry: the first draw made is kept, whatever it breaks
    broken = next(d for d in sample_draws(200) if not draws.meets(drill, draws.drawn_givens(drill, d)))
    _, findings = lint.variant_values(drill, broken)
    assert findings and "breaks a joint condition" in findings[0].message
    assert all(f"{name}=" in findings[0].message for name in ("spend_cap", "jobs_per_day", "cost_per_job_a"))


def test_a_condition_that_is_no_comparison_is_named():
    drill = _drill(HOT, ('holds: ["r_replay_capacity > 0"]', 'holds: ["r_replay_capacity + 1"]'))
    [finding] = _found("conditions", drill, 4)
    assert "is not a condition" in finding.message


# -- retakes that must be worked out again (issue 34) and truths typed into the scene (issue 40) ----------
def _unfixed(text: str) -> str:
    import re as _re

    return _re.sub(r"\n\s*fixed: \"[^\"]*\"", "", text)


def test_a_drill_whose_truths_stay_put_across_draws_is_refused():
    # One Tenant before issue 34: 27 of its 46 formula truths took one value in every draw.
    old = _unfixed(ONE)
    for given in ("cost_per_job_a", "lag_alert_s", "lumen_job_cost", "limit_b", "limit_c", "pool_a_headroom",
                  "slots_per_process", "peak_rate"):
        old, count = re.subn(rf"(name: {given}, value: [\d.]+, unit: [^,]+), vary: \{{choices: \[[^\]]*\]"
                             r"(, when: \[[^\]]*\])?\}", r"\1", old)
        assert count == 1, given
    [finding] = _found("fixed_truths", _drill(old))
    assert finding.message.startswith("27 of 46 formula truths are the same in every draw"), finding.message
    assert "at most 4 may be" in finding.message
    assert _found("fixed_truths", CATALOGUE.drills["one_tenant"].drill, 500) == []


def test_a_truth_marked_fixed_that_moves_is_refused():
    drill = _drill(HOT, ("      - id: b_deficit\n", "      - id: b_deficit\n        fixed: it never moves\n"))
    [finding] = _found("fixed_truths", drill)
    assert "b_deficit is marked fixed but moves" in finding.message


@pytest.mark.parametrize("as_written", [False, True])
def test_a_truth_typed_into_the_board_is_refused(as_written):
    # "54 requests will pile up" on the board: 54 would be the truth of jobs_in_flight... here b_deficit's 150.
    text = HOT.replace("      First decide what kind of writes these are, then put the skew on the board.",
                       "      First decide what kind of writes these are; 150 units will pile up each second.")
    if as_written:
        text = text.replace("time_box_min: 30\n", "time_box_min: 30\nfirst_attempt_as_written: true\n")
    [finding] = _found("typed_truths", _drill(text))
    assert "types 150, the truth of b_deficit as written" in finding.message
