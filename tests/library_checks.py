"""What the library's drills (cache_stampede, retry_chain, split_brain) promise beyond every drill's checks:
their shape, an essentials path that fits 45 minutes, and the labels their text may use as numbers.
"""
from __future__ import annotations

import re

from drills.draws import sample_draws
from drills.loaded import LoadedDrill
from drills.schema import Drill
from drills.variants import in_variant
from tests.content_checks import numeric

# Clock times, break numbers and the app's own "80% range" are labels, not figures of the scenario.
LABELS = re.compile(r"\b\d{1,2}:\d{2}\b|\bBreak\s+\d\b|\b80% range\b")
ESSENTIALS_MINUTES = 45


def assert_shape(drill: Drill, part_ids: list[str]) -> None:
    """The parts in order, a follow-up with questions on every break, and all three kinds of question."""
    assert [p.id for p in drill.parts] == part_ids
    breaks = [p for p in drill.parts if p.kind == "break"]
    assert 2 <= len(breaks) <= 5
    assert all(p.followup is not None and p.followup.questions for p in breaks)
    assert {q.kind for q in drill.all_questions()} == {"numeric", "choice", "notes"}
    for part in breaks:
        assert [s.stage for s in part.reveal] == ["why", "worked", "detect", "contain", "degrade", "recover",
                                                  "prevent", "tradeoff"], part.id


def assert_essentials_fit(drill: Drill) -> None:
    """The essentials path (every part but the close) fits 45 minutes, with two to five questions a break."""
    assert sum(p.minutes for p in drill.parts if p.kind != "closing") <= ESSENTIALS_MINUTES
    per_break = [sum(q.essential for q in p.questions) for p in drill.parts if p.kind == "break"]
    assert all(2 <= n <= 5 for n in per_break), per_break


def assert_truths_move(loaded: LoadedDrill, draws: int = 4) -> None:
    """No more than a tenth of the numeric truths (formula and simulation alike) are the same in every draw."""
    from ui.drill.attempt_view import sim_truths_of

    drill = loaded.drill
    seen = [in_variant(loaded, v) for v in sample_draws(draws)]
    fixed = [q.id for q in numeric(drill, with_answer=True)
             if all(s.truth(q.id) == loaded.truth(q.id) for s in seen)]
    written_sims = sim_truths_of(loaded)
    fixed += [q.id for q in numeric(drill, with_answer=False)
              if all(sim_truths_of(s)[q.id] == written_sims[q.id] for s in seen)]
    assert len(fixed) <= 0.1 * len(numeric(drill)), fixed
