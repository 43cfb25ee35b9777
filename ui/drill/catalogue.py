"""The catalogue's drill cards: each leads with the practice that fits its clock, then the ways to start it.

What a card says is decided in drills.browse; pages/home.py says which drills to show and how a press starts.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from drills.browse import card_of, lead
from drills.scope import scoped_id
from ui import keys


def drill_card(catalogue, drill_id: str, start: Callable[[str, float], None]) -> None:
    """One drill's card; `start(drill or scoped id, minutes)` runs when one of its Start buttons is pressed."""
    drill = catalogue.drills[drill_id].drill
    shorter_ways, work = catalogue.drills.offers(drill_id)
    card = card_of(drill, shorter_ways, work)
    with st.container(border=True):
        st.subheader(drill.title)
        st.markdown(lead(card))
        st.caption(f":material/timer: {drill.time_box_min:g} minutes · {len(drill.parts)} parts · "
                   f"{len(drill.all_questions())} questions · rubric skills: "
                   + ", ".join(skill.name for skill in drill.rubric))
        st.markdown(drill.summary)
        if drill.covers:
            st.markdown("**Covers:** " + " · ".join(drill.covers))
        lead_with_shorter = card.overruns and bool(shorter_ways)   # then a shorter practice is the default
        if st.button(f"Start the clock: {drill.title}", type="secondary" if lead_with_shorter else "primary",
                     key=keys.start_button(drill_id)):
            start(drill_id, drill.time_box_min)
        if not shorter_ways:
            return
        shorter = {s.id: s for s in shorter_ways}
        st.markdown("**Shorter practice, each on its own clock**")
        cols = st.columns([3, 1], vertical_alignment="bottom")
        picked = cols[0].selectbox(
            "Practise", list(shorter), key=keys.scope_pick(drill_id), label_visibility="collapsed",
            index=list(shorter).index(card.fitting.id) if card.fitting else 0,
            format_func=lambda s: f"{shorter[s].label} — {shorter[s].questions} questions, "
                                  f"{shorter[s].minutes:g} minutes")
        if cols[1].button("Start this practice", key=keys.start_scope(drill_id), width="stretch",
                          type="primary" if lead_with_shorter else "secondary"):
            start(scoped_id(drill_id, picked), shorter[picked].minutes)
        st.caption("The essentials path keeps a few key questions from every break; a single break keeps "
                   "the scenario, the board's key numbers and that break with its follow-up.")
