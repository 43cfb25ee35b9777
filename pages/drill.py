"""The drill: one part at a time, lock-ins before reveals, then the rubric.

Where the candidate is lives in the URL (?attempt=…&part=…) so a reload lands in the same place.
"""
from __future__ import annotations

import streamlit as st

from drills.variants import label as variant_label
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import get_store, require_attempt
from ui.sims.guess import plural
from ui.drill.history import show_new_resume_code
from ui.drill.lockin import flash
from ui.drill.reveal import render_part
from ui.drill.review import schedule_after_finish
from ui.drill.rubric import render_self_score
from ui.frame import require_frame
from ui.lms import queue_grade

require_frame()

SCORE_STEP = "score"

attempt, loaded = require_attempt(
    "No drill in progress",
    "Start a drill from the catalogue, or paste your attempt link there to resume.",
)
store = get_store()
drill = loaded.drill
steps = [p.id for p in drill.parts] + [SCORE_STEP]
titles = {p.id: p.title for p in drill.parts} | {SCORE_STEP: "Score yourself"}

view = AttemptView.load(store, attempt, loaded)   # the page's one read of the attempt
requested = st.query_params.get(keys.PART)
last_opened = view.last_opened
current = requested if requested in steps else (last_opened or steps[0])
if keys.PART_SELECT not in st.session_state or st.session_state[keys.PART_SELECT] not in steps:
    st.session_state[keys.PART_SELECT] = current
current = st.session_state[keys.PART_SELECT]
st.query_params[keys.PART] = current
if last_opened != current:
    store.log_event(attempt.id, "opened", current)


def go_to(step: str) -> None:
    st.session_state[keys.PART_SELECT] = step


flash()
show_new_resume_code(attempt)


def step_label(step: str) -> str:
    number = steps.index(step) + 1
    if step == SCORE_STEP:
        return f"{number}. {titles[step]}"
    part = drill.part(step)
    done = view.all_answered(part.questions) and (not part.reveal or view.revealed(step, part.reveal[-1].stage))
    return f"{number}. {titles[step]}" + (" · done" if done and (part.questions or part.reveal) else "")


st.caption(drill.title + ("" if loaded.variant == 0 else
                          f" · {variant_label(loaded.variant)}: this attempt draws its own numbers, so work them "
                          "out afresh"))
st.selectbox("Part", steps, format_func=step_label, key=keys.PART_SELECT)
st.title(titles[current])
if attempt.finished_at is not None:
    st.info("This attempt is finished: every part reads as a review with its answers, and nothing can be "
            "locked in or re-scored any more. Your results are on the results page.")
    st.page_link("pages/results.py", label="See results", icon=":material/bar_chart:", query_params={keys.ATTEMPT_TOKEN: attempt.token})

if current == SCORE_STEP:
    complete = render_self_score(view)
    st.divider()
    open_questions = sum(1 for q in drill.all_questions() if q.id not in view.answers)
    confirmed = True
    if open_questions and attempt.finished_at is None:
        st.warning(f"{open_questions} of {len(drill.all_questions())} questions are still open; finishing now "
                   "counts them as unanswered.", icon=":material/warning:")
    unrated = view.unrated_notes() if attempt.finished_at is None else 0
    if unrated:
        st.warning(f"{plural(unrated, 'notes answer')} still {'needs' if unrated == 1 else 'need'} your "
                   "self-rating under its worked answer; once you finish, an unrated answer earns no marks.",
                   icon=":material/warning:")
    if (open_questions or unrated) and attempt.finished_at is None:
        confirmed = st.checkbox("Finish anyway", key=keys.FINISH_ANYWAY)
    if attempt.finished_at is None and st.button("Finish and see results", type="primary", disabled=not confirmed):
        store.finish(attempt.id)
        queue_grade(view)   # for the LMS whose launch asked for a grade (LTI AGS), if one did
        schedule_after_finish(view)   # what it missed comes back on the review page
        st.switch_page("pages/results.py", query_params={keys.ATTEMPT_TOKEN: attempt.token})
    if not complete and attempt.finished_at is None:
        st.caption("You can finish without scoring every skill, but the verdict needs them all.")
else:
    render_part(view, drill.part(current))

index = steps.index(current)
with st.container(horizontal=True):
    if index > 0:
        st.button("← Previous", on_click=go_to, args=(steps[index - 1],))
    if index < len(steps) - 1:
        st.button("Next →", on_click=go_to, args=(steps[index + 1],), type="primary")
