"""An attempt's simulation truths run when first read, not on every page run (ui.drill.attempt_view.SimTruths)."""
from __future__ import annotations

from drills.loader import load_catalogue
from drills.schema import NumericQuestion
from drills.variants import in_variant
from ui.drill import attempt_view


SEED = 123_456   # an attempt's graded seed


def _drill_with_sims():
    loaded = load_catalogue().drills["one_tenant"]
    return in_variant(loaded, 7)   # a draw of its own, as an attempt has


def test_texts_without_a_simulation_name_run_no_model_and_reads_give_the_same_truths(monkeypatch):
    loaded = _drill_with_sims()
    sim_ids = {q.id for q in loaded.drill.all_questions() if isinstance(q, NumericQuestion) and q.sim}
    assert sim_ids, "the drill the load test drives embeds simulations"
    runs = []
    real = attempt_view.sim_truths_of
    monkeypatch.setattr(attempt_view, "sim_truths_of",
                        lambda drill, seed: runs.append((drill.variant, seed)) or real(drill, seed))

    truths = attempt_view.SimTruths(loaded, SEED)
    board = loaded.drill.part("board")
    for question in board.questions:
        text = question.prompt
        assert not truths.read_by(text)
        assert loaded.text(text) == loaded.text(text, real(loaded))
    assert all(q in truths for q in sim_ids) and runs == [], "asking which questions have truths runs nothing"

    question_id = sorted(sim_ids)[0]
    assert truths.read_by(f"It peaks at {{{question_id}:.0f}} a second")
    assert dict(truths) == real(loaded, SEED) and truths[question_id] == real(loaded, SEED)[question_id]
    assert loaded.truth(question_id, truths) == loaded.truth(question_id, real(loaded, SEED))
    assert runs == [(7, SEED)], "the models run once, when first read, at the attempt's graded seed"
    dict(truths)
    assert runs == [(7, SEED)]
