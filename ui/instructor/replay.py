"""Replay from an attempt's timeline: each simulation question opens its page on the run that graded it
(the attempt's numbers, the graded seed) with the candidate's locked guess, pinned as A, so changing one
setting draws that other choice as B over it.

The page's query is ui.sims.replay's, the one a candidate's own locked question links to: the drill's own sim
link (ui.sims.embed.explore_query) plus the question's graded seed, the guess and the pin.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from drills.schema import NumericQuestion
from sims import presets
from ui.sims.guess import fmt_guess
from ui.instructor.figures import short_prompt
from ui.sims.embed import MODEL_PAGES
from ui.sims.replay import replay_query


def replay_url(page: str, query: Mapping[str, str]) -> str:
    """The sim page's address (its url path, the file's stem, beside the board's) with the replay's query."""
    return f"{Path(page).stem}?{urlencode(query)}"


def replay_rows(view) -> list[tuple[str, str, float | None, str]]:
    """(question id, short prompt, locked guess, preset) for each simulation question of the attempt."""
    out = []
    for q in view.loaded.drill.all_questions():
        if isinstance(q, NumericQuestion) and q.sim:
            answer = view.answers.get(q.id)
            guess = None if answer is None or answer.skipped else answer.value
            out.append((q.id, short_prompt(view.text(q.prompt)), guess, q.sim))
    return out


def render_replay(view) -> None:
    """Under the timeline: a link per simulation question to its graded run, guess and pin."""
    rows = replay_rows(view)
    if not rows:
        return
    st.markdown("##### Replay the simulations")
    st.caption("Each link opens the simulation on the exact run this question was graded against (this "
               "attempt's numbers, and the question's own graded seed, named on the link) with the candidate's "
               "locked guess, pinned as A. Change one setting there and press Play to draw B over it. Each opens in "
               "a new tab.")
    values = view.loaded.values    # the attempt's own variant's numbers, which the presets read
    for qid, prompt, guess, preset_id in rows:
        page, name, _ = MODEL_PAGES[presets.PRESETS[preset_id].model]
        seed = view.question_seed(qid)
        # A link to the page's own address, opened in a new tab so the board stays where it was (and drawn
        # the same wherever the board runs, inside the app's navigation or not).
        st.link_button(f"{prompt} — {name}, seed {seed}, their guess {'none' if guess is None else fmt_guess(guess)}",
                       replay_url(page, replay_query(preset_id, values, guess, seed=seed)), icon=":material/casino:")
