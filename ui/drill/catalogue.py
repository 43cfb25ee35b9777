"""The catalogue's drills: what spaced review suggests next, the filters by skill and length, and the cards, each
leading with the practice that fits its clock, then the ways to start it.

What they say and which drills match is decided in drills.browse; pages/home.py says how a Start press starts.
"""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from drills import scoring
from drills.browse import LENGTHS, card_of, lead, matching, next_up, next_up_line, nothing_matches, skill_choices
from drills.scope import scoped_id
from drills.store.accounts import Learner
from ui import keys
from ui.context import now
from ui.drill.review import due_link

K = keys.register("catalogue", __name__)   # this module's keys (ui.keys holds only shared ones)
SKILL_FILTER = K("skills")                 # the skills picked to filter the catalogue by
LENGTH_FILTER = K("lengths")               # the lengths picked (drills.browse.LENGTHS)
SHOW_SKILL = K("show_skill")               # "Show the drills that practise it" under Next up
SHOW_ALL = K("show_all")                   # the empty state's way back to every drill
SCORED_LOOKBACK = 5                        # finished attempts whose rubric scores name the lowest-rated skill


def _filter_by(skill_id: str | None) -> None:
    st.session_state[SKILL_FILTER] = [skill_id] if skill_id else []
    st.session_state[LENGTH_FILTER] = []


def suggest_next(store, catalogue, learner: Learner | None) -> None:
    """Spaced review's suggestion for a signed-in learner: the skill most due questions practise (with the link
    to the review page), else the lowest-rated skill of their latest scored attempts; nothing otherwise."""
    if learner is None:
        return
    due = store.due_reviews(learner.review_key, now())
    scored = []
    if not due:
        finished = sorted((a for a in store.learner_attempts(learner) if a.finished_at is not None),
                          key=lambda a: a.started_at, reverse=True)[:SCORED_LOOKBACK]
        scored = [(a.drill_id, {skill: row.level for skill, row in
                                scoring.current_levels(store.rubric_history(a.id)).items()}) for a in finished]
    drills = {drill_id: loaded.drill for drill_id, loaded in catalogue.drills.items()}
    suggestion = next_up(drills, [(item.drill_id, item.question_id) for item in due], scored)
    if suggestion is not None:
        with st.container(horizontal=True, vertical_alignment="center"):
            st.markdown(next_up_line(suggestion), width="content")
            st.button("Show the drills that practise it", key=SHOW_SKILL, on_click=_filter_by,
                      args=(suggestion.skill_id,), icon=":material/filter_alt:")
    if due:
        due_link(len(due))


def drill_filter(catalogue) -> list[str]:
    """The skill and length filters; the ids of the drills they let through, in catalogue order."""
    cards = [card_of(loaded.drill, *catalogue.drills.offers(drill_id)) for drill_id, loaded in catalogue.drills.items()]
    skills = skill_choices(loaded.drill for loaded in catalogue.drills.values())
    cols = st.columns([3, 2], vertical_alignment="bottom")
    picked = cols[0].multiselect("Filter by skill", list(skills), format_func=skills.get, key=SKILL_FILTER,
                                 placeholder="Any skill", help="Drills whose rubric scores any of these skills.")
    lengths = cols[1].pills("Length", list(LENGTHS), format_func=LENGTHS.get, selection_mode="multi",
                            key=LENGTH_FILTER, help="How long the whole drill takes; every drill also offers "
                                                    "shorter practice on its own clock.")
    shown = matching(cards, picked, lengths)
    if not shown:
        st.info(nothing_matches([skills[s] for s in picked], [LENGTHS[n] for n in lengths]),
                icon=":material/filter_alt_off:")
        st.button("Show every drill", key=SHOW_ALL, on_click=_filter_by, args=(None,))
    elif len(shown) < len(cards):
        st.caption(f"Showing {len(shown)} of {len(cards)} drills.")
    return [card.drill_id for card in shown]


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
