"""Item analysis (issue 22): every figure against a small class worked by hand, and against an independent
numpy/pandas computation of Moodle's formulas on the demo class; both store backends; the command line.
"""
from __future__ import annotations

import io
import json
import math
from fractions import Fraction as Fr
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from drills.demo import populate
from drills.loader import check_file, load_catalogue
from drills.reports import items
from drills.reports.source import Filters
from drills.schema import NumericQuestion
from drills.backends import open_store
from drills.store import AttemptStore
from drills.variants import in_variant

TEMPLATE = Path("drills/content/_template.yaml")
# Draws far from the written 12 jobs/s (so the written answers never pass a draw), enough of them that a
# retake cannot be harvested (drills.lint wants 1000 combinations at least).
FAR_RATES = ", ".join(str(rate) for rate in range(40, 1040))
H = Fr(1, 2)


def small_drill(tmp_path) -> object:
    """The template drill with drawn numbers (each attempt its own draw), a third numeric question and a notes question."""
    text = TEMPLATE.read_text(encoding="utf-8")
    text = text.replace("id: template", "id: small").replace(
        "givens:\n  - {name: arrival_rate, value: 12, unit: jobs/s,",
        "givens:\n  - {name: arrival_rate, value: 12, unit: jobs/s, vary: {choices: [12, " + FAR_RATES + "]},")
    extra = """      - id: per_hour
        kind: numeric
        prompt: How many jobs reach the queue in one hour at peak?
        unit: jobs/h
        answer: arrival_rate * 3600
        tolerance: {kind: relative, value: 0.1}
        decimals: 0
        skills: [sizing]
      - id: plan
        kind: notes
        prompt: Say how you would keep the queue from growing again.
        strong_answer: Capacity that follows the inflow, with an alert on queue age.
        skills: [containment]
    reveal:
"""
    text = text.replace("    reveal:\n", extra, 1)
    path = tmp_path / "small.yaml"
    path.write_text(text, encoding="utf-8")
    loaded, errors = check_file(path)
    assert not errors, errors
    return loaded


# The class, worked by hand. Marks per question (per_minute, first_move, per_hour, plan); guesses are set
# from each variant's truth: exact or +5% -> 1, +15% -> 0.5 (within twice the 10% tolerance), else 0.
FIRST = {   # first attempts, variant 0 (as written)
    "ann": [1, 1, 1, 1], "bob": [1, 1, H, H], "cat": [H, 0, 1, 1],
    "dan": [1, 0, 0, 0], "eve": [0, 1, 0, 0], "fay": [0, 0, 0, 0],
}
RETAKES = {  # second attempts, variant 1; "hal" finished only his second (his first stays open)
    "ann": [1, 1, 1, 1], "bob": [0, 1, 1, H], "cat": [1, 0, 0, 0], "dan": [H, 1, 1, 1], "hal": [0, 0, 1, H],
}
CHOICES = {"ann": "add_workers", "bob": "add_workers", "cat": "longer_queue", "dan": "retry_sooner",
           "eve": "add_workers", "fay": None}
RETAKE_CHOICES = {"ann": "add_workers", "bob": "add_workers", "cat": "retry_sooner", "dan": "add_workers",
                  "hal": "longer_queue"}
# Relative error of each numeric guess (None: not answered, "skip": skipped), chosen to give the marks above.
FIRST_ERRORS = {"ann": (0, 0), "bob": (0.05, 0.15), "cat": (0.15, -0.05), "dan": (0, -0.5), "eve": (1.0, None),
                "fay": ("skip", "skip")}
RETAKE_ERRORS = {"ann": (0, 0), "bob": (1.0, 0), "cat": (0, 1.0), "dan": (0.15, 0), "hal": (-0.9, 0.05)}
RATING = {1: "full", H: "partial", 0: "missed"}
RANGES = {"ann": (0.9, 1.1), "bob": (1.0, 1.2), "cat": (1.2, 1.3), "dan": (0.95, 1.05)}   # first per_minute only


def _write(store, loaded, handle, variant, marks, choice, errors, *, finish=True, ranges=None):
    drill = in_variant(loaded, variant)
    attempt = store.start_attempt("small", handle, "north" if handle < "d" else "south", 600, variant=variant)
    for qid, error in zip(("per_minute", "per_hour"), errors):
        truth = drill.values[qid]
        if error == "skip":
            store.lock_answer(attempt.id, qid, "break1", "numeric", skipped=True)
        elif error is not None:
            low, high = ranges if (ranges and qid == "per_minute") else (None, None)
            store.lock_answer(attempt.id, qid, "break1", "numeric", value=truth * (1 + error),
                              low=None if low is None else truth * low, high=None if high is None else truth * high)
    if choice is None:
        store.lock_answer(attempt.id, "first_move", "break1", "choice", skipped=True)
    else:
        store.lock_answer(attempt.id, "first_move", "break1", "choice", choice=choice)
    if handle == "fay":
        store.lock_answer(attempt.id, "plan", "break1", "notes", skipped=True)
    else:
        store.lock_answer(attempt.id, "plan", "break1", "notes", notes="more workers")
        if not (handle == "eve" and variant == 0):   # eve wrote notes but never rated them: 0
            store.rate_note(attempt.id, "plan", RATING[marks[3]])
    if finish:
        store.finish(attempt.id)
    return attempt


def _fill(store, loaded):
    for handle, marks in FIRST.items():
        _write(store, loaded, handle, 0, marks, CHOICES[handle], FIRST_ERRORS[handle], ranges=RANGES.get(handle))
    _write(store, loaded, "hal", 0, [1, 1, 1, 1], "add_workers", (0, 0), finish=False)   # open: never counted
    for handle, marks in RETAKES.items():
        _write(store, loaded, handle, 1, marks, RETAKE_CHOICES[handle], RETAKE_ERRORS[handle])


@pytest.fixture(params=["duckdb", "postgres"])
def small_store(request, tmp_path):
    store = (AttemptStore(tmp_path / "items.duckdb") if request.param == "duckdb"
             else open_store(request.getfixturevalue("pg_url")))
    loaded = small_drill(tmp_path)
    _fill(store, loaded)
    yield store, loaded
    store.close()


def _row(table, question, variant=items.ALL):
    rows = table[(table["question_id"] == question) & (table["variant"] == variant)]
    assert len(rows) == 1, (question, variant, table[["question_id", "variant"]])
    return rows.iloc[0]


def _close(actual, expected):
    if expected is None:
        assert actual is None or pd.isna(actual)
    else:
        assert actual == pytest.approx(float(expected), rel=1e-9, abs=1e-9)


def test_first_attempts_match_the_hand_worked_class(small_store):
    store, loaded = small_store
    key = items.key_for(store, loaded, None)
    table = items.item_stats(store, key, Filters("small"), first_only=True, loaded=loaded)
    # Six finished first attempts, all variant 0, so one row per question.
    assert list(table["question_id"]) == ["per_minute", "first_move", "per_hour", "plan"]
    assert set(table["variant"]) == {items.ALL} and set(table["n"]) == {6}
    # per_minute: marks 1, 1, ½, 1, 0, 0 (mean 7/12); rests 3, 1.5, 1.5, 0, 1, 0 (hand: Σ(x-x̄)² = 29/20,
    # so the sample variance is 29/120; the rests' is 22/15; the covariance 4/15; sorted pairs 17/30).
    q1 = _row(table, "per_minute")
    _close(q1["facility_pct"], 100 * 7 / 12)
    _close(q1["sd_pct"], 100 * math.sqrt(29 / 120))
    _close(q1["discrimination_index"], 100 * (4 / 15) / math.sqrt(29 / 120 * 22 / 15))
    _close(q1["discriminative_efficiency_pct"], 100 * (4 / 15) / (17 / 30))
    _close(q1["median_signed_error_pct"], 5.0)          # errors 0, +5, +15, 0, +100 (fay skipped)
    assert q1["ranges"] == 4
    _close(q1["range_held_pct"], 75.0)                  # cat's 120-130% range missed the truth
    assert q1["option_shares"] == ""
    q2 = _row(table, "first_move")                      # marks 1, 1, 0, 0, 1, 0
    _close(q2["facility_pct"], 50.0)
    _close(q2["sd_pct"], 100 * math.sqrt(0.3))
    _close(q2["discrimination_index"], 100 * 0.15 / math.sqrt(0.3 * 197 / 120))
    _close(q2["discriminative_efficiency_pct"], 100 * 0.15 / 0.65)
    assert q2["median_signed_error_pct"] is None or pd.isna(q2["median_signed_error_pct"])
    shares = json.loads(q2["option_shares"])
    assert list(shares) == ["add_workers", "longer_queue", "retry_sooner", items.NO_ANSWER]
    for option, share in zip(shares, (3 / 6, 1 / 6, 1 / 6, 1 / 6)):
        _close(shares[option], share)
    q3 = _row(table, "per_hour")                        # marks 1, ½, 1, 0, 0 (eve never answered), 0
    _close(q3["facility_pct"], 100 * 5 / 12)
    _close(q3["discrimination_index"], 100 * (2 / 5) / math.sqrt(29 / 120 * 6 / 5))
    _close(q3["discriminative_efficiency_pct"], 80.0)
    _close(q3["median_signed_error_pct"], -2.5)         # errors 0, +15, -5, -50: between -5 and 0
    assert q3["ranges"] == 0 and pd.isna(q3["range_held_pct"])
    q4 = _row(table, "plan")                            # ratings full, partial, full, missed; eve unrated; fay skipped
    assert q4["graded_n"] == 4 and q1["graded_n"] == 6   # a note counts once rated; a skipped number is a 0 mark
    _close(q4["facility_pct"], 100 * 5 / 12)
    _close(q4["discriminative_efficiency_pct"], 80.0)
    assert list(table["flags"]) == ["", "", "", ""]
    alpha = items.alpha(store, key, Filters("small"), first_only=True)
    assert list(alpha["variant"]) == [items.ALL, 0]
    # Item variances 29/120, 3/10, 29/120, 29/120; the totals 4, 3, 2.5, 1, 1, 0 vary by 269/120.
    expected = 100 * Fr(4, 3) * (1 - (Fr(29, 120) * 3 + Fr(3, 10)) / Fr(269, 120))
    _close(alpha.iloc[0]["alpha_pct"], expected)
    assert alpha.iloc[0]["n"] == 6 and alpha.iloc[0]["items"] == 4


def test_all_attempts_add_the_retakes_each_as_its_own_candidate_and_split_by_variant(small_store):
    store, loaded = small_store
    key = items.key_for(store, loaded, None)
    table = items.item_stats(store, key, Filters("small"), first_only=False, loaded=loaded)
    assert list(table["variant"]) == [items.ALL, 0, 1] * 4
    assert _row(table, "plan")["n"] == 11
    assert _row(table, "plan", 0)["n"] == 6 and _row(table, "plan", 1)["n"] == 5
    whole = _row(table, "per_minute")
    _close(whole["facility_pct"], 100 * 6 / 11)
    _close(whole["discrimination_index"], 100 * (3 / 44) / math.sqrt(49 / 220 * 331 / 220))
    _close(whole["discriminative_efficiency_pct"], 100 * (3 / 44) / (239 / 440))   # 12.6%: dubious
    assert whole["flags"] == items.FLAG_DUBIOUS
    # Variant 1 alone: per_minute marks 1, 0, 1, ½, 0 against rests 3, 2.5, 0, 2.5, 1.5.
    v1 = _row(table, "per_minute", 1)
    _close(v1["facility_pct"], 50.0)
    _close(v1["sd_pct"], 50.0)
    _close(v1["discrimination_index"], 100 * (-1 / 8) / math.sqrt(1 / 4 * 13 / 8))
    _close(v1["discriminative_efficiency_pct"], 100 * (-1 / 8) / (9 / 16))
    assert v1["flags"] == items.FLAG_DUBIOUS
    _close(_row(table, "first_move", 1)["discriminative_efficiency_pct"], 100.0)
    shares = json.loads(_row(table, "first_move", 1)["option_shares"])
    assert shares == {"add_workers": 0.6, "longer_queue": 0.2, "retry_sooner": 0.2, items.NO_ANSWER: 0.0}
    # per_hour: 5/12 (41.7%) as written against 4/5 (80%) in variant 1, 38 points apart.
    _close(_row(table, "per_hour", 0)["facility_pct"], 100 * 5 / 12)
    _close(_row(table, "per_hour", 1)["facility_pct"], 80.0)
    for variant in (items.ALL, 0, 1):
        assert items.FLAG_VARIANTS in _row(table, "per_hour", variant)["flags"]
    assert items.FLAG_VARIANTS not in _row(table, "first_move")["flags"]   # 50% against 60%
    alpha = items.alpha(store, key, Filters("small"), first_only=False)
    assert list(alpha["variant"]) == [items.ALL, 0, 1]
    _close(alpha.iloc[0]["alpha_pct"], 100 * Fr(4, 3) * (1 - (Fr(49, 220) + Fr(3, 11) + Fr(53, 220) + Fr(1, 5))
                                                          / Fr(41, 22)))
    _close(alpha.iloc[2]["alpha_pct"], 100 * Fr(4, 3) * (1 - (Fr(1, 4) + Fr(3, 10) + Fr(1, 5) + Fr(7, 40))
                                                          / Fr(13, 8)))


def test_the_cohort_filter_narrows_the_class(small_store):
    store, loaded = small_store
    key = items.key_for(store, loaded, None)
    north = items.item_stats(store, key, Filters("small", "north"), loaded=loaded)   # ann, bob, cat
    assert set(north["n"]) == {3}
    _close(_row(north, "first_move")["facility_pct"], 100 * 2 / 3)


def test_flag_thresholds_follow_the_issue():
    stats = pd.DataFrame({
        "grp": [-1, -1, -1, -1, -1], "question_id": list("abcde"), "n": [9] * 5, "graded_n": [9] * 5,
        "facility_pct": [50, 9.9, 10, 95.1, 95], "discriminative_efficiency_pct": [14.9, 15, None, 40, 40]})
    assert items._flags(stats) == ["dubious", "too hard", "", "too easy", ""]
    # Variant rows with too few attempts are never compared (a single attempt scores 0% or 100%).
    spread = pd.DataFrame({"grp": [-1, 0, 1, 2], "question_id": ["q"] * 4, "n": [12, 6, 5, 1], "graded_n": [12, 6, 5, 5],
                           "facility_pct": [50, 40, 61, 100], "discriminative_efficiency_pct": [50] * 4})
    assert items._flags(spread) == ["variants differ", "variants differ", "variants differ", "too easy"]
    assert items._flags(spread, variant_min_n=6) == ["", "", "", "too easy"]


def test_a_row_is_flagged_only_once_five_answers_carry_a_mark():
    # Facility 0% from four marks, or from notes nobody has rated yet, is no evidence of a hard question.
    rows = pd.DataFrame({"grp": [-1] * 4, "question_id": list("abcd"), "n": [9, 9, 4, 5], "graded_n": [0, 4, 4, 5],
                         "facility_pct": [0, 0, 0, 0], "discriminative_efficiency_pct": [None] * 4})
    assert items._flags(rows) == ["", "", "", "too hard"]


# -- against an independent computation on the demo class -------------------------------------
DEMO = load_catalogue().drills["one_tenant"]
SIM_TRUTHS = {q.id: 100.0 for q in DEMO.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    store = AttemptStore(tmp_path_factory.mktemp("items") / "demo.duckdb")
    populate(store, DEMO, candidates=43, cohorts=("north", "south"), seed=11, now=1_790_000_000.0,
             sim_truths=SIM_TRUTHS)
    yield store
    store.close()


def _independent(store, key, first_only: bool) -> tuple[pd.DataFrame, float]:
    """Moodle's item statistics from raw rows with numpy: marks graded in pandas from the key's bands."""
    attempts = store.query("SELECT a.id, a.candidate_id, a.variant, a.started_at, "
                           "EXISTS (SELECT 1 FROM attempt_events e WHERE e.attempt_id = a.id AND e.kind = 'finished') "
                           "FROM attempts a WHERE drill_id = 'one_tenant'").df()
    attempts.columns = ["attempt_id", "candidate_id", "variant", "started_at", "finished"]
    if first_only:
        firsts = attempts.sort_values(["started_at", "attempt_id"]).groupby("candidate_id").head(1)
        attempts = firsts
    attempts = attempts[attempts["finished"]]
    answers = store.query("SELECT attempt_id, question_id, value, choice, skipped, hint_cost FROM answers").df()
    ratings = store.query("SELECT attempt_id, question_id, rating, rated_at, id FROM note_ratings").df()
    ratings = ratings.sort_values(["rated_at", "id"]).groupby(["attempt_id", "question_id"]).tail(1)
    rating_of = {(a, q): {"full": 1.0, "partial": 0.5, "missed": 0.0}[r]
                 for a, q, r in zip(ratings["attempt_id"], ratings["question_id"], ratings["rating"])}
    answer_of = {(r.attempt_id, r.question_id): r for r in answers.itertuples(index=False)}
    grades = {(0, 0): list(zip(key.truths, key.bands)), **{(number, 0): list(g) for number, g in key.variant_grades},
              **{pair: list(g) for pair, g in key.seeded_grades}}    # by (variant, graded seed)
    marks = {}
    for a in attempts.itertuples(index=False):
        graded_seed = store.graded_seed(a.attempt_id) or 0
        for i, (qid, kind) in enumerate(zip(key.question_ids, key.kinds)):
            truth, band = grades[a.variant, graded_seed][i]
            if kind == "numeric" and truth is None:
                continue
            ans = answer_of.get((a.attempt_id, qid))
            mark = 0.0
            if ans is not None and not ans.skipped:
                if kind == "numeric":
                    miss = abs(ans.value - truth)
                    mark = (1 - ans.hint_cost) * (1.0 if miss <= band * (1 + 1e-9) else
                                                  0.5 if miss <= 2 * band * (1 + 1e-9) else 0.0)
                elif kind == "choice":
                    mark = float(ans.choice == key.right_choices[i])
                else:
                    mark = rating_of.get((a.attempt_id, qid), 0.0)
            marks[(a.attempt_id, qid)] = mark
    grid = pd.Series(marks).unstack()
    totals = grid.sum(axis=1)
    rows = []
    for qid in grid.columns:
        x = grid[qid].to_numpy()
        rest = (totals - grid[qid]).to_numpy()
        cov = np.cov(x, rest, ddof=1)[0, 1]
        cov_max = np.cov(np.sort(x), np.sort(rest), ddof=1)[0, 1]
        vx, vr = np.var(x, ddof=1), np.var(rest, ddof=1)
        rows.append({"question_id": qid, "n": len(x), "facility_pct": 100 * x.mean(), "sd_pct": 100 * np.std(x, ddof=1),
                     "discrimination_index": 100 * cov / np.sqrt(vx * vr) if vx * vr > 1e-12 else np.nan,
                     "discriminative_efficiency_pct": 100 * cov / cov_max if abs(cov_max) > 1e-12 else np.nan})
    p = grid.shape[1]
    alpha = 100 * p / (p - 1) * (1 - grid.var(ddof=1).sum() / totals.var(ddof=1))
    return pd.DataFrame(rows).set_index("question_id"), alpha


@pytest.mark.parametrize("first_only", [True, False])
def test_the_demo_class_matches_numpy(demo_store, first_only):
    key = items.key_for(demo_store, DEMO, lambda loaded, graded_seed=0: SIM_TRUTHS)
    table = items.item_stats(demo_store, key, Filters("one_tenant"), first_only, DEMO)
    whole = table[table["variant"] == items.ALL].set_index("question_id")
    expected, alpha = _independent(demo_store, key, first_only)
    assert sorted(whole.index) == sorted(expected.index) and len(whole) > 50
    for column in expected.columns:
        np.testing.assert_allclose(whole.loc[expected.index, column].astype(float), expected[column].astype(float),
                                   rtol=1e-9, atol=1e-9, err_msg=column)
    # Some questions really do separate candidates, and the demo's choice questions have distractors.
    assert (whole["discrimination_index"] > 30).any()
    got = items.alpha(demo_store, key, Filters("one_tenant"), first_only)
    assert got.iloc[0]["alpha_pct"] == pytest.approx(alpha, rel=1e-9)


def test_command_line_writes_one_csv_row_per_question_and_variant(demo_store, capsysbinary):
    assert items.main(["--db", demo_store.path, "--drill", "one_tenant", "--all-attempts", "--csv"]) == 0
    out, err = capsysbinary.readouterr()
    table = pd.read_csv(io.BytesIO(out))
    assert {"question_id", "variant", "n", "facility_pct", "sd_pct", "discrimination_index",
            "discriminative_efficiency_pct", "median_signed_error_pct", "range_held_pct", "option_shares",
            "flags"} <= set(table.columns)
    assert not table.duplicated(["question_id", "variant"]).any()
    assert (table["variant"] == items.ALL).sum() == table["question_id"].nunique()
    assert table["variant"].nunique() > 2       # retakes drew other variants
    assert b"Cronbach's alpha" in err
    with pytest.raises(SystemExit):
        items.main(["--db", demo_store.path, "--drill", "no_such_drill", "--csv"])
