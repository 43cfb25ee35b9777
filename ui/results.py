"""The results view: every guess against the truth, calibration, time per part, rubric, verdict.

Figures are built from pure scoring results; user text only ever reaches tables as plain values.
"""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from drills import scoring
from drills.formulas import format_number, format_quantity
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.timebox import clock_for, format_duration, format_utc, time_per_part
from ui.attempt_view import AttemptView
from ui.context import now

SCORE_COLOURS = {1.0: "#2e7d32", 0.5: "#f9a825", 0.0: "#c62828"}


def _answer_text(view: AttemptView, result: scoring.QuestionResult) -> str:
    answer = result.answer
    if answer is None:
        return "—"
    if answer.skipped:
        return "skipped"
    question = view.loaded.drill.question(result.question_id)
    if isinstance(question, NumericQuestion):
        text = format_quantity(answer.value, question.unit)
        if answer.low is not None:
            text += f" [{format_quantity(answer.low, question.unit)} – {format_quantity(answer.high, question.unit)}]"
        return text
    if isinstance(question, ChoiceQuestion):
        return next((view.text(o.text) for o in question.options if o.id == answer.choice), answer.choice or "")
    return answer.notes or ""


def _truth_text(view: AttemptView, result: scoring.QuestionResult) -> str:
    question = view.loaded.drill.question(result.question_id)
    if isinstance(question, NumericQuestion):
        return format_quantity(result.truth, question.unit, question.decimals)
    if isinstance(question, ChoiceQuestion):
        return next(view.text(o.text) for o in question.options if o.id == question.answer)
    return "self-assessed"


def results_table(view: AttemptView, results: list[scoring.QuestionResult]) -> pd.DataFrame:
    titles = {p.id: p.title for p in view.loaded.drill.parts}
    rows = []
    for r in results:
        rows.append({
            "Part": titles[r.part_id],
            "Question": view.text(r.prompt),
            "Your answer": _answer_text(view, r),
            "Truth": _truth_text(view, r),
            "Score": r.score,
            "In your 80% range": {True: "yes", False: "no", None: ""}[r.in_range],
        })
    return pd.DataFrame(rows)


def _short(text: str, limit: int = 46) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def drawable_guesses(results: list[scoring.QuestionResult]) -> tuple[list[scoring.QuestionResult], int]:
    """Numeric guesses that can sit on a ratio (log) axis, and how many could not (zero or negative)."""
    numeric = [r for r in results if r.kind == "numeric" and r.answer is not None and not r.answer.skipped]
    drawable = [r for r in numeric if r.truth > 0 and r.answer.value > 0]
    return drawable, len(numeric) - len(drawable)


def guess_figure(view: AttemptView, results: list[scoring.QuestionResult]) -> go.Figure | None:
    """Each numeric guess as a percentage of the truth (log axis), with its 80% range as an error bar."""
    numeric, _ = drawable_guesses(results)
    if not numeric:
        return None
    labels, ratios, lows, highs, colours, hover = [], [], [], [], [], []
    for number, r in enumerate(numeric, start=1):
        ratio = 100 * r.answer.value / r.truth
        labels.append(f"{number}. {_short(view.text(r.prompt))}")  # numbered: two prompts may shorten alike
        ratios.append(ratio)
        if r.answer.low is not None and r.answer.low > 0:
            lows.append(ratio - 100 * r.answer.low / r.truth)
            highs.append(100 * r.answer.high / r.truth - ratio)
        else:
            lows.append(0)
            highs.append(0)
        colours.append(SCORE_COLOURS.get(r.score, "#607d8b"))
        hover.append(f"{view.text(r.prompt)}<br>guess {format_number(r.answer.value)} vs truth "
                     f"{format_number(r.truth)}")
    fig = go.Figure(go.Scatter(
        x=ratios, y=labels, mode="markers", marker=dict(size=12, color=colours),
        error_x=dict(type="data", symmetric=False, array=highs, arrayminus=lows, color="#90a4ae"),
        hovertext=hover, hoverinfo="text", name="your guess",
    ))
    # The truth line is a trace, not a layout shape: shapes on a log axis take log10 units.
    fig.add_trace(go.Scatter(x=[100, 100], y=[labels[0], labels[-1]], mode="lines", hoverinfo="skip",
                             line=dict(dash="dash", color="#37474f"), name="truth"))
    extremes = [v for v in ratios + [r - lo for r, lo in zip(ratios, lows)] + [r + hi for r, hi in zip(ratios, highs)]
                + [100] if v > 0]
    low, high = math.log10(min(extremes)), math.log10(max(extremes))
    pad = max(0.1, (high - low) * 0.08)
    fig.update_xaxes(type="log", range=[low - pad, high + pad],
                     title="your guess as % of the truth (dashed line = exact)")
    fig.update_layout(height=120 + 28 * len(labels), margin=dict(l=10, r=10, t=30, b=40), showlegend=False,
                      yaxis=dict(autorange="reversed"))
    return fig


def time_figure(view: AttemptView) -> go.Figure:
    attempt = view.attempt
    end = attempt.finished_at if attempt.finished_at is not None else now()
    spent = time_per_part(view.store.events(attempt.id), end)
    parts = view.loaded.drill.parts
    titles = [p.title for p in parts]
    fig = go.Figure([
        go.Bar(name="suggested", x=titles, y=[p.minutes for p in parts], marker_color="#b0bec5"),
        go.Bar(name="you", x=titles, y=[spent.get(p.id, 0) / 60 for p in parts], marker_color="#1e88e5"),
    ])
    fig.update_layout(barmode="group", height=320, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="minutes",
                      legend=dict(orientation="h", y=1.1))
    return fig


def _when(unix_seconds: float) -> str:
    return f"{format_utc(unix_seconds, seconds=False)} UTC"


def render_results(view: AttemptView) -> None:
    drill = view.loaded.drill
    results = view.results()
    totals = scoring.totals(results)
    calib = scoring.calibration(results)
    clock = clock_for(view.attempt, now())

    cols = st.columns(4)
    cols[0].metric("Score", f"{format_number(totals.earned)} / {totals.possible}", f"{totals.percent:.0f}%",
                   delta_color="off", delta_arrow="off")
    skipped = sum(1 for r in results if r.answer is not None and r.answer.skipped)
    cols[1].metric("Locked in", f"{totals.answered - skipped} / {totals.possible}",
                   f"{skipped} skipped" if skipped else None, delta_color="off", delta_arrow="off")
    rate = calib.hit_rate
    cols[2].metric("80% ranges that held", "—" if rate is None else f"{calib.hits} of {calib.ranges}",
                   None if rate is None else f"{rate:.0%} vs 80% claimed", delta_color="off", delta_arrow="off")
    cols[3].metric("Time used", format_duration(clock.elapsed_s),
                   f"over by {format_duration(clock.overtime_s)}" if clock.over else "inside the box",
                   delta_color="red" if clock.over else "off", delta_arrow="off")
    st.caption(calib.verdict)
    if totals.unrated_notes:
        st.info(f"{totals.unrated_notes} notes answer(s) still need your self-rating (on the drill page, "
                "after each reveal); until then they are not counted.")

    st.subheader("Your numbers against the truth")
    figure = guess_figure(view, results)
    if figure is None:
        st.info("No numeric guesses locked in yet.")
    else:
        st.plotly_chart(figure, width="stretch", key="guess_fig")
        st.caption("Dots on the dashed line were exact; green is within tolerance, amber within twice it. "
                   "Bars are your 80% ranges.")
    not_drawn = drawable_guesses(results)[1]
    if not_drawn:
        st.caption(f"{not_drawn} guess{'es' if not_drawn != 1 else ''} at or below zero cannot sit on a ratio "
                   "scale; see the table below.")
    st.dataframe(results_table(view, results), hide_index=True, width="stretch",
                 column_config={"Score": st.column_config.NumberColumn(format="%.1f")})

    st.subheader("Time per part against the pacing")
    st.plotly_chart(time_figure(view), width="stretch", key="time_fig")

    st.subheader("Rubric")
    history = view.store.rubric_history(view.attempt.id)
    levels = scoring.current_levels(history)
    own = {row.skill_id: row for row in history if row.scorer == "self"}
    rows = []
    for skill in drill.rubric:
        row = levels.get(skill.id)
        overridden = row is not None and row.scorer == "instructor"
        rows.append({"Skill": skill.name,
                     "Level that counts": drill.level_label(row.level) if row else "not scored",
                     "Your own score": drill.level_label(own[skill.id].level) if skill.id in own else "",
                     "Instructor": row.scorer_name if overridden else "",
                     "Instructor comment": row.reason if overridden else "",
                     "When": _when(row.scored_at) if overridden else ""})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if any(r.scorer == "instructor" for r in history):
        with st.expander("Every score given, oldest first"):
            st.dataframe(pd.DataFrame([{"When": _when(r.scored_at), "Skill": drill.skill(r.skill_id).name,
                                        "Level": drill.level_label(r.level), "By": r.scorer_name or r.scorer,
                                        "Role": r.scorer, "Comment": r.reason} for r in history]),
                         hide_index=True, width="stretch")
    outcome = scoring.verdict(drill, levels)
    if not outcome.complete:
        st.info("Score every skill to get the verdict.")
    elif outcome.passed:
        st.success(f"{outcome.strong} strong of {outcome.needed} needed. {outcome.message}")
    else:
        st.warning(f"{outcome.strong} strong of {outcome.needed} needed. {outcome.message}")
    for warning in outcome.warnings:
        st.warning(warning, icon="⚠️")
