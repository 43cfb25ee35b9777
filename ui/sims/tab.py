"""One simulation tab as a page describes it (SimTab, its Question) and its sliders and seed, bound to the URL.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from drills.disclosure import seed_may_run
from ui import keys
from ui.sims.charts import Series
from ui.sims.embed import url_text
from ui.sims.visits import closed_seeds, graded_questions_open

SEED_MAX = 1_000_000
GRADED_SEED_CLOSED = ("Seed {seed} is closed here for now: one of your open drill questions is graded against that "
                      "run, so it opens once you have locked it in (or finished the attempt). Showing seed {shown}; "
                      "every other seed is yours to explore.")
GRADED_SEEDS_NOTE = ("{n} of your open drill questions {are} graded against this model, each on a run of its own "
                     "whose seed shows once you lock it in; this page will not run those seeds for you until then.")


@dataclass(frozen=True)
class Question:
    """What the reader guesses before pressing Play, and how it is checked."""

    label: str
    unit: str
    max_value: float
    step: float = 1.0
    tolerance_rel: float = 0.1
    min_value: float = 0.0


@dataclass(frozen=True)
class SimTab:
    """One simulation tab: its model, its question and how to draw, replay and compare a run."""

    name: str                                  # e.g. "hot_shard.celebrity": scopes the guess and the pin
    prefix: str                                # short URL prefix of its widgets, e.g. "hs_celeb"
    model: str                                 # module under sims/
    question: Question
    truth: Callable[[object], float | None]       # None: the run never reached the figure asked about
    frames: Callable[[object], list[go.Figure]] | None
    series: Callable[[object], Series]
    metric: str | None = None                  # truth's key in the model's summary: spreads then use
                                               # worker processes (see sims.spread)


@dataclass(frozen=True)
class Settings:
    """A tab's slider values and seed, and the query parameters that bring them back."""

    values: tuple
    seed: int
    query: dict[str, str]


def settings(tab: SimTab, intro: str, *sliders: dict, page_tab: tuple[str, str] | None = None) -> Settings:
    """The tab's introduction, its sliders and a seed box, every one bound to the URL.

    ``page_tab`` is (tabs key, this tab's label) so a shared link also opens the right tab.
    """
    st.markdown(intro)
    columns = st.columns([3] * len(sliders) + [2])
    values = tuple(column.slider(**spec, bind="query-params") for column, spec in zip(columns, sliders))
    seed_key = keys.sim_setting(tab.prefix, "seed")
    graded_open, closed = graded_questions_open(), closed_seeds()
    seed = int(columns[-1].number_input("Seed", 0, SEED_MAX, 1, 1, key=seed_key, bind="query-params",
                                        help="Runs with the same settings and seed are identical. A drill question "
                                             "is graded against a run of its own, whose seed shows once you lock "
                                             "it in: until then this page will not run it for you."))
    if graded_open:
        st.caption(GRADED_SEEDS_NOTE.format(n=len(graded_open), are="is" if len(graded_open) == 1 else "are"))
    if not seed_may_run(seed, closed):
        shown = next(s for s in range(seed + 1, seed + len(closed) + 2) if seed_may_run(s, closed))
        st.warning(GRADED_SEED_CLOSED.format(seed=seed, shown=shown), icon=":material/lock:")
        seed = shown
    query = dict([page_tab]) if page_tab else {}
    query.update({spec["key"]: url_text(value) for spec, value in zip(sliders, values)})
    query[seed_key] = str(seed)
    return Settings(values, seed, query)
