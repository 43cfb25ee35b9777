"""The spread over seeds: run seeds 1 to N of a tab's settings and place the guess and this seed among them.
"""
from __future__ import annotations

import statistics
from concurrent.futures.process import BrokenProcessPool

import plotly.graph_objects as go
import streamlit as st

from sims import spread
from sims.spread import percentile
from ui import keys
from ui.sims.guess import digest, fmt_figure, fmt_guess
from ui.sims.runs import HEAVY_MODELS, cached_run
from ui.sims.tab import SimTab

K = keys.register("sim_spread", __name__)   # this module's keys (ui.keys holds only shared ones)


def spread_button(tab_name: str) -> str:
    """A simulation tab's "Run N seeds" button."""
    return f"spread::{tab_name}"


def spread_chart(tab_name: str) -> str:
    """A simulation tab's spread of the asked figure over seeds."""
    return f"spread-chart::{tab_name}"


SPREAD_DEFAULT = 20
SPREAD_MAX = 100
BAND = (10, 90)                              # the middle 80% of runs: where a guess counts as "typical"


def spread_values(tab: SimTab, params: object, seeds: range) -> list[float | None]:
    """The tab's figure for each seed, with a progress bar.

    A heavy model with a named figure runs its seeds in worker processes (one per core) and sends
    back only the figure; the others run here, each run cached on (params, seed).
    """
    bar = st.progress(0.0, text=f"Running {len(seeds)} seeds…")

    def show(done: int, total: int) -> None:
        bar.progress(done / total, text=f"Running {total} seeds… {done}/{total}")

    values: list[float | None] | None = None
    if tab.metric is not None and tab.model in HEAVY_MODELS:
        try:
            values = spread.figures(tab.model, params, seeds, tab.metric, progress=show)
        except (BrokenProcessPool, OSError):
            values = None                    # no worker processes here: run them one by one below
    if values is None:
        values = []
        for done, seed in enumerate(seeds, start=1):
            value = tab.truth(cached_run(tab.model, params, seed))
            values.append(None if value is None else float(value))
            show(done, len(seeds))
    bar.empty()
    return values


def spread_words(values: list[float], unit: str) -> str:
    """How much one run varies, in a sentence."""
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    middle = statistics.median(values)
    if max(values) == min(values):
        return (f"Every one of the {len(values)} seeds gives **{fmt_figure(middle)} {unit}**: with these settings "
                "the figure does not depend on chance, so one run tells the whole story.")
    swing = (high - low) / 2 / abs(middle) if middle else None
    relative = f" (about ±{swing:.0%} of the median)" if swing is not None else ""
    return (f"Over {len(values)} seeds the median is **{fmt_figure(middle)} {unit}**; 8 runs in 10 land between "
            f"**{fmt_figure(low)}** and **{fmt_figure(high)} {unit}**{relative}, and the extremes are "
            f"{fmt_figure(min(values))} and {fmt_figure(max(values))}. A single run can sit anywhere in that range.")


def grade_against_spread(guess: float, values: list[float], unit: str,
                         tolerance_rel: float = 0.0) -> tuple[bool, str]:
    """Whether the guess falls in the middle 80% of runs (widened by the question's tolerance),
    and a sentence saying where it falls among them."""
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    below = sum(1 for v in values if v < guess)
    inside = low - tolerance_rel * abs(low) <= guess <= high + tolerance_rel * abs(high)
    slack = f", give or take the {tolerance_rel:.0%} tolerance" if tolerance_rel else ""
    where = (f"inside the middle 80% of runs{slack}: a typical outcome" if inside else
             "below every run" if guess < min(values) else "above every run" if guess > max(values) else
             "outside the middle 80% of runs")
    return inside, (f"Your guess of **{fmt_guess(guess)} {unit}** is above {below} of {len(values)} runs, "
                    f"{where}.")


def spread_figure(values: list[float], guess: float, this_run: float | None, unit: str, label: str) -> go.Figure:
    fig = go.Figure(go.Histogram(x=values, marker_color="#1f77b4", name="runs", nbinsx=min(30, len(values)),
                                 hovertemplate="%{x}: %{y} runs<extra></extra>"))
    low, high = percentile(values, BAND[0]), percentile(values, BAND[1])
    fig.add_vrect(x0=low, x1=high, fillcolor="#1f77b4", opacity=0.12, line_width=0, layer="below")
    marks = [(guess, "#d62728", "dash", f"your guess ({fmt_guess(guess)})")]
    if this_run is not None:
        marks.append((this_run, "#2ca02c", "solid", f"this seed ({fmt_figure(this_run)})"))
    for x, colour, dash, name in marks:
        fig.add_vline(x=x, line=dict(color=colour, dash=dash, width=2))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color=colour, dash=dash), name=name))
    fig.update_layout(title=f"{label}: {len(values)} seeds (shaded: the middle 80%)", height=320, bargap=0.05,
                      margin=dict(l=50, r=20, t=60, b=40), xaxis_title=unit, yaxis_title="runs",
                      legend=dict(orientation="h", yanchor="top", y=-0.25, x=0))
    return fig


@st.fragment
def spread_panel(tab: SimTab, params: object, seed: int, guess: float, this_run: float | None) -> None:
    """Run seeds 1 to N of these settings and place the guess and this seed among them.

    A fragment: asking for a spread reruns this panel only, not the page's charts above it.
    """
    with st.expander("Spread: how much does one run vary?", icon=":material/casino:"):
        count = int(st.number_input("Seeds to run", 5, SPREAD_MAX, SPREAD_DEFAULT, 5,
                                    key=keys.sim_setting(tab.prefix, "n"), bind="query-params"))
        wanted = digest(tab.model, params, count)
        memo = K.item(tab.name)     # the tab's last seed spread: (settings digest, its figures once run)
        if st.button(f"Run {count} seeds", key=spread_button(tab.name)):
            st.session_state[memo] = (wanted, None)
        ran = st.session_state.get(memo)
        if not (isinstance(ran, tuple) and ran[0] == wanted):
            st.caption("Runs seeds 1 to N with these settings and shows where your guess and this seed fall.")
            return
        found = ran[1]
        if found is None:                             # just asked for: run them once, not on every rerun
            found = spread_values(tab, params, range(1, count + 1))
            st.session_state[memo] = (wanted, found)
        values = [v for v in found if v is not None]
        if len(values) < len(found):
            st.info(f"{len(found) - len(values)} of {len(found)} runs never reached the figure asked about.")
        if not values:
            return
        unit = tab.question.unit
        st.plotly_chart(spread_figure(values, guess, this_run, unit, tab.question.label), width="stretch",
                        key=spread_chart(tab.name))
        inside, where = grade_against_spread(guess, values, unit, tab.question.tolerance_rel)
        (st.success if inside else st.warning)(where)
        st.markdown(spread_words(values, unit))
