"""A candidate cannot read or edit their way to a score (issue 10).

No truth before lock-in and reveal, nothing changes after finishing, options shuffled per attempt,
simulation pages opened early go on the timeline, one grading of simulation questions everywhere,
and a second tab that loses a lock-in race is told so.
"""
from __future__ import annotations

import collections

import pytest

from drills.demo import populate, reference_sim_truths
from drills.disclosure import LEGACY_SEED, disclosed, option_order, question_seed, withhold
from drills.loader import load_catalogue
from drills.reports.exports import export_answers
from drills.reports.source import Filters
from drills.reports.timeline import timeline
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.store import AttemptStore
from drills.variants import in_variant
from sims import presets
from tests.test_pages import LOCK, _go, _start
from ui.drill.results import HIDDEN_LOCKED, HIDDEN_OPEN

CATALOGUE = load_catalogue()
ONE_TENANT = CATALOGUE.drills["one_tenant"]
NOW = 1_790_000_000.0


def _token(at) -> str:
    return at.query_params["attempt"]


def _attempt(db_path, at):
    store = AttemptStore(db_path)
    return store, store.attempt_by_token(_token(at))


def _results_truths(app_test, token: str, db_path) -> dict[str, str]:
    at = app_test("app.py")
    at.query_params["attempt"] = token
    at.run()
    at.switch_page("pages/results.py").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "Truth" in d.value.columns)
    drawn = in_variant(ONE_TENANT, AttemptStore(db_path).attempt_by_token(token).variant)   # its own numbers
    prompts = {drawn.text(q.prompt): q.id for q in ONE_TENANT.drill.all_questions()}
    return {prompts[q]: truth for q, truth in zip(table["Question"], table["Truth"])}


# -- the rule itself ------------------------------------------------------------------------------
def test_disclosure_follows_lockins_reveals_skips_and_the_finish(tmp_path):
    store = AttemptStore(tmp_path / "d.duckdb")
    attempt = store.start_attempt("one_tenant", "ada", "", 2700, seed=3)
    drill = ONE_TENANT.drill
    board = drill.part("board")
    first, second = board.questions[0], board.questions[1]

    def shown() -> frozenset[str]:
        return disclosed(drill, store.answers(attempt.id), store.reveals(attempt.id), False)

    assert shown() == frozenset()
    store.lock_answer(attempt.id, first.id, "board", "numeric", value=1)
    assert shown() == frozenset(), "a locked answer's truth waits for its worked answer"
    store.lock_answer(attempt.id, second.id, "board", "numeric", skipped=True)
    assert shown() == {second.id}, "a skipped question is forfeited, so its truth may show"
    store.record_reveal(attempt.id, "board", board.reveal[0].stage)
    assert shown() == {first.id, second.id}
    assert not any(q.id in shown() for q in board.questions[2:]), "unanswered questions stay hidden"
    followup_q = drill.part("break1").followup.questions[0]
    store.lock_answer(attempt.id, followup_q.id, "break1", followup_q.kind, choice=followup_q.answer)
    store.record_reveal(attempt.id, "break1", drill.part("break1").reveal[0].stage)
    assert followup_q.id not in shown(), "a follow-up waits for the follow-up answer, not the part's reveal"
    store.record_reveal(attempt.id, "break1", "followup")
    assert followup_q.id in shown()
    everything = disclosed(drill, store.answers(attempt.id), store.reveals(attempt.id), True)
    assert everything == {q.id for q in drill.all_questions()}


def test_withheld_results_keep_the_answer_and_drop_truth_and_score(tmp_path):
    from drills import scoring

    store = AttemptStore(tmp_path / "w.duckdb")
    attempt = store.start_attempt("one_tenant", "ada", "", 2700, seed=3)
    q = ONE_TENANT.drill.part("board").questions[0]
    store.lock_answer(attempt.id, q.id, "board", "numeric", value=ONE_TENANT.values[q.id], low=1, high=10**9)
    sims = {q.id: 1.0 for q in ONE_TENANT.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    results = scoring.grade_attempt(ONE_TENANT, store.answers(attempt.id), sim_values=sims)
    hidden = {r.question_id: r for r in withhold(results, frozenset())}
    assert hidden[q.id].answer is not None and hidden[q.id].truth is None
    assert hidden[q.id].score is None and hidden[q.id].in_range is None
    assert scoring.totals(withhold(results, frozenset())).earned == 0
    assert scoring.totals(withhold(results, frozenset({q.id}))).earned == 1


def test_options_are_shuffled_per_attempt_and_stable_for_one():
    drill = ONE_TENANT.drill
    choice = [q for q in drill.all_questions() if isinstance(q, ChoiceQuestion)]
    assert choice
    for q in choice:
        assert [o.id for o in option_order(q, 42)] == [o.id for o in option_order(q, 42)]
        assert sorted(o.id for o in option_order(q, 42)) == sorted(o.id for o in q.options)
        positions = collections.Counter(
            [o.id for o in option_order(q, seed)].index(q.answer) for seed in range(60))
        assert len(positions) == len(q.options), f"{q.id}: the right option must land in every position"
        assert max(positions.values()) < 60 * 0.6


# -- the pages ------------------------------------------------------------------------------------
def test_an_open_attempts_results_hide_every_truth_not_yet_revealed(app_test, db_path):
    at = _start(app_test)
    token = _token(at)
    truths = _results_truths(app_test, token, db_path)
    assert set(truths) == {q.id for q in ONE_TENANT.drill.all_questions()}
    numeric_or_choice = [q.id for q in ONE_TENANT.drill.all_questions() if q.kind != "notes"]
    assert {truths[q] for q in numeric_or_choice} == {HIDDEN_OPEN}, "no truth before anything is locked"

    _go(at, "board")
    board = ONE_TENANT.drill.part("board")
    at.text_input(key=f"lock::{board.questions[0].id}::value").input("1")
    next(b for b in at.button if b.label == LOCK).click().run()
    truths = _results_truths(app_test, token, db_path)
    assert truths[board.questions[0].id] == HIDDEN_LOCKED
    assert truths[board.questions[1].id] == HIDDEN_OPEN

    store, attempt = _attempt(db_path, at)
    for q in board.questions[1:]:
        store.lock_answer(attempt.id, q.id, "board", q.kind, skipped=True)
    store.record_reveal(attempt.id, "board", board.reveal[0].stage)
    store.close()
    truths = _results_truths(app_test, token, db_path)
    drawn = in_variant(ONE_TENANT, AttemptStore(db_path).attempt_by_token(token).variant)   # its own numbers
    expected = f"{drawn.values[board.questions[0].id]:,.0f}"
    assert expected in truths[board.questions[0].id], "revealed: the truth is shown"
    assert truths[ONE_TENANT.drill.part("break1").questions[0].id] == HIDDEN_OPEN
    events = AttemptStore(db_path).events(attempt.id)
    assert [e.kind for e in events].count("results_viewed") >= 1, "the visit is on the timeline"


def test_a_finished_attempt_offers_no_form_and_the_store_refuses(app_test, db_path):
    at = _start(app_test)
    store, attempt = _attempt(db_path, at)
    store.finish(attempt.id)
    store.close()
    for part in ("board", "break1", "score"):
        _go(at, part)
        assert not [b for b in at.button if b.label == LOCK], f"{part}: a finished attempt shows a lock-in form"
        assert not [b for b in at.button if b.label.startswith("Reveal:")]
    assert all(r.disabled for r in at.radio), "the self-score is read-only"
    assert all(b.disabled for b in at.button if b.label == "Save my scores")
    assert not [b for b in at.button if b.label == "Finish and see results"]


def test_choice_options_show_in_the_attempts_own_order(app_test, db_path):
    at = _start(app_test)
    _go(at, "break1")
    store, attempt = _attempt(db_path, at)
    question = next(q for q in ONE_TENANT.drill.part("break1").questions if isinstance(q, ChoiceQuestion))
    radio = at.radio(key=f"lock::{question.id}::choice")
    shown = [o for o in radio.options]
    assert shown == [ONE_TENANT.text(o.text) for o in option_order(question, attempt.seed)]


def test_the_second_tab_is_told_another_tab_locked_first(app_test, db_path):
    first = _start(app_test)
    token = _token(first)
    second = app_test("app.py")
    second.query_params["attempt"] = token
    second.run()
    second.switch_page("pages/drill.py").run()
    for tab in (first, second):
        _go(tab, "board")
    question = ONE_TENANT.drill.part("board").questions[0]
    first.text_input(key=f"lock::{question.id}::value").input("120")
    next(b for b in first.button if b.label == LOCK).click().run()
    assert not any("Another tab" in w.value for w in first.warning), "the winner is not told it lost"
    second.text_input(key=f"lock::{question.id}::value").input("999")
    next(b for b in second.button if b.label == LOCK).click().run()
    assert not second.exception
    warning = " ".join(w.value for w in second.warning)
    assert "Another tab locked this question first" in warning and "120" in warning
    store, attempt = _attempt(db_path, first)
    assert store.answers(attempt.id)[question.id].value == 120


def test_opening_a_simulation_with_its_questions_open_is_flagged(app_test, db_path):
    at = _start(app_test)
    at.switch_page("pages/sim_hot_shard.py").run()
    assert not at.exception, at.exception
    at.switch_page("pages/sim_hot_shard.py").run()   # a second visit with the same open questions: one event
    at.switch_page("pages/sim_retry_storm.py").run()
    store, attempt = _attempt(db_path, at)
    opened = [e for e in store.events(attempt.id) if e.kind == "sim_opened"]
    assert [e.detail["page"] for e in opened] == ["sim_hot_shard", "sim_retry_storm"]
    assert set(opened[0].detail["questions"]) == {"f1_sim_hot_4", "f1_sim_hot_6", "f1_sim_neighbour_wait"}
    rows = timeline(ONE_TENANT, store.events(attempt.id), store.answers(attempt.id))
    flagged = [r for r in rows if r.kind == "sim_opened"]
    assert all(r.early and "simulation" in r.flag for r in flagged) and len(flagged) == 2

    # Once its questions are locked the same page is no longer a peek.
    for qid in ("f1_sim_hot_4", "f1_sim_hot_6", "f1_sim_neighbour_wait"):
        store.lock_answer(attempt.id, qid, "break1", "numeric", value=100)
    store.close()
    at.switch_page("pages/sim_concurrency_pool.py").run()   # still open: fan-out and pool questions
    at.switch_page("pages/sim_hot_shard.py").run()
    kinds = [(e.kind, e.detail.get("page")) for e in AttemptStore(db_path).events(attempt.id)]
    assert kinds.count(("sim_opened", "sim_hot_shard")) == 1
    assert kinds.count(("sim_opened", "sim_concurrency_pool")) == 1


# -- one grading of simulation questions ------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    store = AttemptStore(tmp_path_factory.mktemp("demo") / "demo.duckdb")
    for loaded in CATALOGUE.drills.values():
        truths = reference_sim_truths(loaded, LEGACY_SEED)
        populate(store, loaded, candidates=8, cohorts=("north",), seed=5, now=NOW, sim_truths=truths)
        # The same first handles again: their retakes draw seeded variants.
        populate(store, loaded, candidates=3, cohorts=("north",), seed=6, now=NOW, sim_truths=truths)
    return store


@pytest.mark.parametrize("drill_id", sorted(CATALOGUE.drills))
def test_board_export_and_results_agree_for_every_demo_attempt(demo_store, drill_id):
    from ui.drill.attempt_view import AttemptView
    from ui.instructor.board import Board

    loaded = CATALOGUE.drills[drill_id]
    filters = Filters(drill_id)
    board = Board(demo_store, loaded, filters, "ines")
    summary = board.report("attempt_summary").set_index("attempt_id")
    export = export_answers(demo_store, board.key, filters)
    exported = export.groupby("attempt_id")["score"].sum()
    sim_ids = [q.id for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim]
    attempts = demo_store.attempts(drill_id=drill_id)
    assert attempts
    assert any(a.variant != 0 for a in attempts), "the demo's retakes draw seeded variants"
    exported_truths = export.set_index(["attempt_id", "question_id"])["truth"]
    for attempt in attempts:
        view = AttemptView.load(demo_store, attempt, loaded)
        results = view.results()
        earned = sum(r.score for r in results if r.score is not None)
        assert summary.loc[attempt.id, "earned"] == pytest.approx(earned), f"board vs results, #{attempt.id}"
        assert exported.get(attempt.id, 0.0) == pytest.approx(earned), f"export vs results, #{attempt.id}"
        truths = {r.question_id: r.truth for r in results}
        for qid, truth in truths.items():   # each answer is graded against its own variant's numbers
            if isinstance(truth, float) and (attempt.id, qid) in exported_truths.index:
                assert exported_truths.loc[(attempt.id, qid)] == pytest.approx(truth), f"#{attempt.id} {qid}"
        graded_seed = demo_store.graded_seed(attempt.id)
        assert (graded_seed is not None) == bool(sim_ids), "an attempt with simulation questions has a graded seed"
        if graded_seed:
            truths_in_key = [truth for truth, _ in dict(board.key.seeded_grades)[attempt.variant, graded_seed]]
        else:
            truths_in_key = (board.key.truths if attempt.variant == 0
                             else [truth for truth, _ in dict(board.key.variant_grades)[attempt.variant]])
        keyed = dict(zip(board.key.question_ids, truths_in_key))
        drawn = in_variant(loaded, attempt.variant)
        for qid in sim_ids:
            assert keyed[qid] == pytest.approx(truths[qid]), f"{qid}: board and results grade one run"
            run = presets.evaluate(drawn.drill.question(qid).sim, question_seed(graded_seed, qid), drawn.values)
            assert truths[qid] == pytest.approx(run), f"{qid}: graded against the run at its attempt's seed"
        if attempt.finished_at is not None:   # the candidate's own page sees exactly what the board grades
            mine = withhold(results, view.disclosed)
            assert sum(r.score for r in mine if r.score is not None) == pytest.approx(earned)


# -- the graded run stays unseen while its question is open --------------------------------------------------
def test_a_questions_graded_seed_is_closed_on_a_sim_page_while_it_is_open(app_test, db_path):
    from ui.sims.pins import pin_param

    at = _start(app_test)
    store, attempt = _attempt(db_path, at)
    seed = question_seed(store.graded_seed(attempt.id), "f1_sim_hot_4")
    store.close()
    assert seed != 0
    pin = pin_param("hot_shard.celebrity")
    at.query_params["hs_celeb_seed"] = str(seed)                # a link straight to the graded run
    at.query_params[pin] = f"seed={seed}"
    at.switch_page("pages/sim_hot_shard.py").run()
    assert not at.exception, at.exception
    closed = [w.value for w in at.warning if w.value.startswith(f"Seed {seed} is closed here for now")]
    assert closed and f"Showing seed {seed + 1}" in closed[0]
    assert any(c.value.startswith("3 of your open drill questions are graded against this model") for c in at.caption)
    assert pin not in at.query_params, "no pinned run A on the graded seed either"

    store, attempt = _attempt(db_path, at)
    for qid in ("f1_sim_hot_4", "f1_sim_hot_6", "f1_sim_neighbour_wait"):
        store.lock_answer(attempt.id, qid, "break1", "numeric", value=100)
    store.close()
    at.query_params[pin] = f"seed={seed}"
    at.switch_page("pages/sim_hot_shard.py").run()              # locked: the seed is the reader's to run
    assert not at.exception, at.exception
    assert not any("is closed here" in w.value for w in at.warning)
    assert at.number_input(key="hs_celeb_seed").value == seed and at.query_params[pin] == f"seed={seed}"
