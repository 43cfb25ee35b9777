"""Self-scoring against the drill's rubric: one level per skill, in the drill's own level names.

Every save appends rows (only for skills whose level changed); the history is never rewritten. A save
keeps every skill that has a level picked, even while others are still unscored.
"""
from __future__ import annotations

import streamlit as st

from drills.schema import LEVELS
from drills.scoring import current_levels
from drills.store import AttemptFinished
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.drill.lockin import FINISHED_ELSEWHERE
from ui.safe import escape_markdown

K = keys.register("rubric", __name__)   # this module's keys (ui.keys holds only shared ones)
SAVED = K.kept("rubric_saved")           # the self-score form's confirmation, shown once under its button


def level_key(skill_id: str) -> str:
    """The end-of-drill self-score radio of one rubric skill."""
    return f"rubric::{skill_id}"


def render_self_score(view: AttemptView) -> bool:
    """The rubric form; returns True once every skill has a score."""
    drill = view.loaded.drill
    history = view.store.rubric_history(view.attempt.id)
    levels = current_levels(history)
    own = {row.skill_id: row.level for row in history if row.scorer == "self"}  # latest self score wins
    if view.finished:
        st.markdown("Your self-scores as they stood when you finished. They can no longer change; an "
                    "instructor may still override a skill, and your results show it.")
    else:
        st.markdown("Score yourself on each skill. Be honest: the point is knowing what to practise next.")
    with st.form("self_score", enter_to_submit=False):
        chosen: dict[str, str | None] = {}
        for skill in drill.rubric:
            st.markdown(f"**{skill.name}**")
            st.caption(f"**{drill.level_label('strong')}:** {skill.strong}  \n"
                       f"**{drill.level_label('ok')}:** {skill.ok}  \n**{drill.level_label('weak')}:** {skill.weak}")
            current = levels.get(skill.id)
            if current is not None and current.scorer == "instructor":
                st.info(f"Your instructor scored this **{drill.level_label(current.level)}**; see your results.")
            mine = own.get(skill.id)
            chosen[skill.id] = st.radio(skill.name, LEVELS, format_func=drill.level_label, horizontal=True,
                                        index=LEVELS.index(mine) if mine else None, key=level_key(skill.id),
                                        label_visibility="collapsed", disabled=view.finished)
        saved = st.form_submit_button("Save my scores", type="primary", disabled=view.finished)
    confirmation = st.session_state.pop(SAVED, None)
    if confirmation:
        st.success(escape_markdown(confirmation), icon=":material/check_circle:")   # under the button pressed, not a toast over the first skill
    if saved:
        picked = [skill for skill in drill.rubric if chosen[skill.id]]
        if not picked:
            st.error("Pick a level for at least one skill, then save.", icon=":material/warning:")
        else:
            # Save what was picked: finishing is allowed with skills unscored, so nothing picked is dropped.
            try:
                for skill in picked:
                    if own.get(skill.id) != chosen[skill.id]:
                        view.store.add_rubric_score(view.attempt.id, skill.id, chosen[skill.id], scorer="self",
                                                    scorer_name=view.attempt.handle)
            except AttemptFinished:
                st.error(FINISHED_ELSEWHERE, icon=":material/lock:")
                return all(s.id in levels for s in drill.rubric)
            missing = [skill.name for skill in drill.rubric if not chosen[skill.id]]
            st.session_state[SAVED] = ("Scores saved." if not missing else
                                                f"Saved {len(picked)} of {len(drill.rubric)} skills; still to score: "
                                                + ", ".join(missing) + ".")
            st.rerun()
    return all(s.id in levels for s in drill.rubric)
