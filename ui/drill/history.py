"""A candidate's own history: every attempt under their handle, score, calibration and skills over time.

Opened by handle and personal resume code (no passwords); the code is shown on the drill page from when it is
issued until the candidate says they have noted it, within that browser session only.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from drills import answers as checks
from drills import scoring
from drills.store.accounts import Learner, account_learner
from drills.store.throttle import Throttled
from drills.reports.aggregates import LEVEL_VALUE
from drills.disclosure import withhold
from drills.store import Attempt
from drills.timebox import format_utc
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.context import get_catalogue, get_store
from ui.clients import current_client
from ui.identity import sign_in_button, sign_in_configured, signed_in_account
from ui.safe import escape_markdown

K = keys.register("history", __name__)   # this module's keys (ui.keys holds only shared ones)
HANDLE_INPUT = K("handle")               # history sign-in form: the handle typed
CODE_INPUT = K("code")                   # history sign-in form: the resume code typed
COHORT_INPUT = K("cohort")               # history sign-in form: the cohort of the handle typed
ACCOUNT_SIGN_IN = K("account_sign_in")   # My history / review: Sign in with the provider
SCORES_CHART = K.kept("history_scores")  # history: score per attempt over time
CALIBRATION_CHART = K.kept("history_calibration")  # history: how often the 80% ranges held
SKILLS_CHART = K.kept("history_skills")  # history: rubric level per skill over time
RESUME_CODE_NOTE = K.kept("resume_code_note")  # (handle, code) issued in this session, shown until it is noted
RESUME_CODE_NOTED = K.kept("resume_code_noted")  # drill page: "I have noted it" hides the resume code box

NOTED = "I have noted it"


def _forget_resume_code() -> None:
    st.session_state.pop(RESUME_CODE_NOTE, None)


def show_new_resume_code(attempt: Attempt) -> None:
    """On the drill page of the attempt that claimed a handle, until the candidate says they have noted it (or
    this browser session ends): the code that opens the history. It stays in this session's memory, where the
    start put it, beside that one attempt: never in the URL or the store (which keeps only its hash)."""
    issued = st.session_state.pop(keys.NEW_RESUME_CODE, None)
    if issued:
        st.session_state[RESUME_CODE_NOTE] = issued
    kept = st.session_state.get(RESUME_CODE_NOTE)
    if not kept or kept[0] != attempt.token:
        return
    where = f" in the cohort **{escape_markdown(attempt.cohort)}**" if attempt.cohort else ""
    with st.container(border=True):
        st.success(f"Your personal resume code is **{kept[1]}** (for the handle **{escape_markdown(attempt.handle)}**"
                   f"{where}). Note it down: with your handle it opens **My history** and **Spaced review** from "
                   "any browser, and nobody can start a drill under this handle without it.", icon=":material/key:")
        st.caption(f"This box stays on the drill page while this browser session lasts, until you press "
                   f"“{NOTED}”. After that the code is not shown again: the app keeps only a fingerprint of it.")
        with st.container(horizontal=True):
            st.button(NOTED, key=RESUME_CODE_NOTED, on_click=_forget_resume_code, icon=":material/check_circle:")
            st.page_link("pages/history.py", label="My history", icon=":material/folder_open:")


@dataclass(frozen=True)
class AttemptLine:
    """One row of the history: what the candidate may see of one attempt."""

    attempt: Attempt
    title: str
    finished: bool
    score_pct: float
    locked: int                      # answered with a guess, a choice or notes (skips not counted)
    skipped: int
    possible: int
    ranges: int
    hits: int
    levels: dict[str, str]           # skill name -> level (the one that counts, instructor's if overridden)
    level_names: dict[str, str]      # level -> the drill's word for it
    drill_title: str = ""            # the whole drill's title (a shorter practice's `title` names its cut)
    live: bool = False               # a seat in a live room: the instructor paced it


def attempt_line(store, attempt: Attempt, *, live: bool = False) -> AttemptLine | None:
    loaded = get_catalogue().drills.get(attempt.drill_id)
    if loaded is None:
        return None
    view = AttemptView.load(store, attempt, loaded)
    results = withhold(view.results(), view.disclosed)   # an open attempt shows only what it has disclosed
    totals = scoring.totals(results)
    calib = scoring.calibration(results)
    drill = loaded.drill
    levels = {drill.skill(skill_id).name: row.level
              for skill_id, row in scoring.current_levels(store.rubric_history(attempt.id)).items()}
    return AttemptLine(attempt, drill.title, view.finished, totals.percent, totals.locked, totals.skipped,
                       totals.possible,
                       calib.ranges, calib.hits, levels,
                       drill.level_names.model_dump(),
                       (loaded.whole or drill).title, live)


HISTORY_INTRO = ("Open every attempt you made under one handle, from any browser. You need the handle, its cohort "
                 "code if it had one, and the personal resume code shown when you first started a drill with it.")


def sign_in(store, *, intro: str = HISTORY_INTRO, button: str = "Open my history") -> Learner | None:
    """Whose history (and review schedule) this session may read: the signed-in account, else the handle and
    cohort proven with their resume code (a form). One proof serves both pages: kept under keys.HISTORY_HANDLE."""
    account = signed_in_account(store)
    if account is not None:
        return account_learner(account)
    signed = st.session_state.get(keys.HISTORY_HANDLE)
    if isinstance(signed, Learner):
        return signed
    if sign_in_configured():
        st.markdown("Sign in to see every attempt of your account, in every class, from any browser.")
        sign_in_button("Sign in with your account", key=ACCOUNT_SIGN_IN)
        st.markdown("Practised anonymously with a handle? Open its history here:")
    st.markdown(intro)
    with st.form("history_sign_in", enter_to_submit=True):
        cols = st.columns(3)
        handle = cols[0].text_input("Your handle", max_chars=checks.MAX_HANDLE, key=HANDLE_INPUT)
        cohort = cols[1].text_input("Cohort code (if you gave one)", max_chars=checks.MAX_COHORT,
                                    key=COHORT_INPUT)
        code = cols[2].text_input("Resume code", max_chars=20, placeholder="e.g. K7QM-3XHD", type="password",
                                  key=CODE_INPUT)
        opened = st.form_submit_button(button, type="primary")
    if opened:
        try:
            clean, clean_cohort = checks.handle_entry(handle), checks.cohort_entry(cohort)
            matched = store.check_resume_code(clean, code, clean_cohort, client=current_client(store))
        except checks.InputError as problem:
            st.error(str(problem), icon=":material/warning:")
            return None
        except Throttled as wait:
            st.error(f"{wait} Wrong codes slow down the browser and network that typed them, not the handle's owner.",
                     icon=":material/block:")
            return None
        if matched:
            st.session_state[keys.HISTORY_HANDLE] = store.learner(clean, clean_cohort)
            st.rerun()
        st.error("That handle, cohort and resume code do not match. Check all three; the code is the one shown "
                 "when you first started a drill under this handle.", icon=":material/warning:")
    return None


def signed_in_bar(store, *, intro: str = HISTORY_INTRO, button: str = "Open my history",
                  says: str = "Attempts of **{handle}**, oldest first.",
                  close: str = "Close my history") -> Learner | None:
    """sign_in, then a line naming whose history it is beside a button that closes it (on both pages); a
    signed-in account closes it by signing out in the sidebar."""
    learner = sign_in(store, intro=intro, button=button)
    if learner is None:
        return None
    cols = st.columns([4, 1])
    cols[0].markdown(says.format(handle=escape_markdown(learner.label)))
    if learner.account_id is None and cols[1].button(close, width="stretch"):
        st.session_state.pop(keys.HISTORY_HANDLE, None)
        st.rerun()
    return learner


IN_PROGRESS = "in progress"
LIVE_MARK = " · live room"   # the attempt was a seat in an instructor's live session


def history_table(lines: list[AttemptLine]) -> pd.DataFrame:
    """One row per attempt, oldest first, numbered as the charts' axes are. An open attempt has no score yet
    (its score would only count what it has disclosed so far), so its cell is blank and its state says so."""
    return pd.DataFrame([{
        "Attempt": f"#{n}",   # a bare "#" header would read as a markdown heading in st.table
        "Started (UTC)": format_utc(line.attempt.started_at, seconds=False),
        "Drill": line.title,
        "State": ("finished" if line.finished else IN_PROGRESS) + (LIVE_MARK if line.live else ""),
        "Score %": str(round(line.score_pct)) if line.finished else "",
        "Locked in": f"{line.locked} / {line.possible}" + (f" · {line.skipped} skipped" if line.skipped else ""),
        "Ranges held": f"{line.hits} of {line.ranges}" if line.ranges else "",
    } for n, line in enumerate(lines, start=1)])


def attempt_labels(lines: list[AttemptLine]) -> dict[int, str]:
    """Each attempt's place on a chart's axis: its number in the history and the day it started."""
    return {line.attempt.id: f"#{n} · {format_utc(line.attempt.started_at, seconds=False)[:10]}"
            for n, line in enumerate(lines, start=1)}


def _attempt_axis(fig: go.Figure, labels: dict[int, str]) -> None:
    """Attempts in order, evenly spaced: a history of two attempts a month apart still reads as two steps."""
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=list(labels.values()))


def score_figure(lines: list[AttemptLine]) -> go.Figure:
    """Score attempt by attempt, one line per drill (finished attempts; open ones are still moving)."""
    labels = attempt_labels(lines)
    fig = go.Figure()
    done = [line for line in lines if line.finished]
    for title in dict.fromkeys(line.title for line in done):
        mine = [line for line in done if line.title == title]
        fig.add_trace(go.Scatter(x=[labels[line.attempt.id] for line in mine], y=[line.score_pct for line in mine],
                                 mode="lines+markers", name=title,
                                 hovertemplate="%{y:.0f}%<extra>%{fullData.name}</extra>"))
    _attempt_axis(fig, labels)
    fig.update_layout(height=300, margin=dict(l=10, r=10, t=30, b=10), yaxis=dict(title="score %", range=[0, 100]),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def calibration_figure(lines: list[AttemptLine]) -> go.Figure:
    """How often the 80% ranges held, attempt by attempt; the dashed line is the 80% they claim."""
    labels = attempt_labels(lines)
    ranged = [line for line in lines if line.ranges]
    fig = go.Figure(go.Scatter(
        x=[labels[line.attempt.id] for line in ranged], y=[100 * line.hits / line.ranges for line in ranged],
        mode="lines+markers", name="ranges held", text=[f"{line.hits} of {line.ranges}" for line in ranged],
        hovertemplate="%{y:.0f}% (%{text})<extra></extra>"))
    fig.add_hline(y=100 * scoring.CLAIMED_COVERAGE, line_dash="dash", annotation_text="80% claimed")
    _attempt_axis(fig, labels)
    fig.update_layout(height=280, margin=dict(l=10, r=10, t=30, b=10), yaxis=dict(title="% held", range=[0, 105]),
                      showlegend=False)
    return fig


def _scale(line: AttemptLine) -> str:
    return " · ".join(line.level_names[level] for level in LEVEL_VALUE)


def level_scales(lines: list[AttemptLine]) -> dict[str, list[str]]:
    """Each level scale the scored attempts use (lowest to highest, in the drill's words) -> the drills using it."""
    scales: dict[str, list[str]] = {}
    for line in lines:
        if line.levels:
            drills = scales.setdefault(_scale(line), [])
            if line.drill_title not in drills:
                drills.append(line.drill_title)
    return scales


def skills_caption(lines: list[AttemptLine]) -> str:
    """What the skills chart's words mean: one drill's scale, or which scale each drill uses."""
    scales = level_scales(lines)
    colours = "red, yellow, green from lowest to highest"
    if len(scales) == 1:
        [(scale, _drills)] = scales.items()
        return f"Levels in the drill's own words ({colours}): {scale}."
    each = "; ".join(f"{', '.join(escape_markdown(d) for d in drills)}: {scale}" for scale, drills in scales.items())
    return (f"Each cell uses its own drill's level names, so one colour ({colours}) covers different words: "
            f"{each}.")


def skills_figure(lines: list[AttemptLine]) -> go.Figure | None:
    """Each skill's level per scored attempt, in that attempt's drill's own level names (the hover names the
    drill and its scale, since drills word their levels differently)."""
    scored = [line for line in lines if line.levels]
    if not scored:
        return None
    skills = list(dict.fromkeys(name for line in scored for name in line.levels))
    labels = attempt_labels(lines)
    columns = [labels[line.attempt.id] for line in scored]
    z = [[LEVEL_VALUE.get(line.levels.get(skill), None) for line in scored] for skill in skills]
    text = [[line.level_names.get(line.levels.get(skill), "") if skill in line.levels else "" for line in scored]
            for skill in skills]
    scales = [f"{line.drill_title} · levels {_scale(line)}" for line in scored]   # the same for every skill
    scale = [scales] * len(skills)
    fig = go.Figure(go.Heatmap(z=z, x=columns, y=skills, text=text, customdata=scale, texttemplate="%{text}",
                               zmin=0, zmax=2, colorscale=[[0, "#ef9a9a"], [0.5, "#fff59d"], [1, "#a5d6a7"]],
                               showscale=False, hovertemplate="%{y}: %{text}<br>%{customdata}<extra>%{x}</extra>"))
    fig.update_layout(height=90 + 34 * len(skills), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed"))
    return fig


def render_history() -> None:
    store = get_store()
    learner = signed_in_bar(store)
    if learner is None:
        return
    attempts = store.learner_attempts(learner)
    live = store.live_attempt_ids(a.id for a in attempts)
    lines = [line for line in (attempt_line(store, a, live=a.id in live) for a in attempts) if line]
    if not lines:
        st.info("No attempts under this handle yet. Start one from the catalogue.")
        st.page_link("pages/home.py", label="Go to the catalogue", icon=":material/home:")
        return
    # A static table: every column fits by wrapping its text (a data grid cut off the right-hand columns at
    # 1300 px), and it has no hover toolbar to cover the sign-out button above it. On a phone it scrolls
    # sideways in its own box, which the page aids (ui/a11y.py) let the keyboard reach. The sections below
    # are h2 under the page's h1, so a screen reader's outline skips no level.
    st.table(history_table(lines), hide_index=True)
    st.header("Resume or review")
    st.caption("Newest first, numbered as in the table and on the charts.")
    for number, line in reversed(list(enumerate(lines, start=1))):
        target = "pages/results.py" if line.finished else "pages/drill.py"
        verb = "Review" if line.finished else "Resume"
        st.page_link(target, label=f"#{number} {verb}: {line.title} — started "
                                   f"{format_utc(line.attempt.started_at, seconds=False)} UTC"
                                   + (LIVE_MARK if line.live else ""),
                     icon=":material/bar_chart:" if line.finished else ":material/play_arrow:",
                     query_params={keys.ATTEMPT_TOKEN: line.attempt.token})
    st.header("Score over time")
    if any(line.finished for line in lines):
        st.plotly_chart(score_figure(lines), width="stretch", key=SCORES_CHART)
    else:
        st.caption("Finish an attempt to start the score line.")
    st.header("Calibration over time")
    if any(line.ranges for line in lines):
        st.plotly_chart(calibration_figure(lines), width="stretch", key=CALIBRATION_CHART)
    else:
        st.caption("Give an 80% range with your numbers to see how often your ranges hold.")
    st.header("Skills over time")
    figure = skills_figure(lines)
    if figure is None:
        st.caption("Score yourself against the rubric at the end of an attempt to see your skills here.")
    else:
        st.caption(skills_caption(lines))
        st.plotly_chart(figure, width="stretch", key=SKILLS_CHART)
