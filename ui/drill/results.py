"""The results view: every guess against the truth, calibration, time per part, rubric, verdict.

Figures are built from pure scoring results; user text only ever reaches tables as plain values.
"""
from __future__ import annotations

import html
import math
import textwrap

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from drills import scoring
from drills.disclosure import withhold
from drills.records import EventKind
from drills.formulas import format_number, format_quantity
from drills.schema import ChoiceQuestion, NumericQuestion
from drills.timebox import clock_for, format_duration, format_utc, time_per_part
from ui import keys
from ui.drill.attempt_view import AttemptView
from ui.sims.guess import plural
from ui.drill.lockin import answer_summary
from ui.context import now

K = keys.register("results", __name__)   # this module's keys (ui.keys holds only shared ones)
GUESS_CHART = K.kept("guess_fig")        # results page: your numbers against the truth
TABLE = K.kept("results_table")          # results page: every answer, graded
VIEWED = K.kept("results_viewed")        # open attempts whose results page this session has logged

SCORE_COLOURS = {1.0: "#2e7d32", 0.5: "#f9a825", 0.0: "#c62828"}


def _answer_text(view: AttemptView, result: scoring.QuestionResult) -> str:
    if result.answer is None:
        return "—"
    question = view.loaded.drill.question(result.question_id)
    return answer_summary(question, result.answer, view.text, compact=True)


HIDDEN_OPEN = "hidden: lock in, then open the worked answer"
HIDDEN_LOCKED = "hidden until you open the worked answer"


def _truth_text(view: AttemptView, result: scoring.QuestionResult) -> str:
    question = view.loaded.drill.question(result.question_id)
    if result.kind != "notes" and result.question_id not in view.disclosed:
        return HIDDEN_OPEN if result.answer is None else HIDDEN_LOCKED
    if isinstance(question, NumericQuestion):
        return format_quantity(result.truth, question.unit, question.decimals)
    if isinstance(question, ChoiceQuestion):
        return next(view.text(o.text) for o in question.options if o.id == question.answer)
    return "self-assessed"


RANGE_HELD = "Range held"


def _score_text(view: AttemptView, result: scoring.QuestionResult) -> str:
    """The mark as the table shows it; a blank mark says why it is blank instead of showing None."""
    if result.score is not None:
        return format_number(round(result.score, 2))
    if result.kind == "notes" and result.answer is not None and not result.answer.skipped:
        return "not rated"
    return "" if result.question_id not in view.disclosed else "0"


def results_table(view: AttemptView, results: list[scoring.QuestionResult]) -> pd.DataFrame:
    """One row per question; '#' is the question's number in the drill, as on the guess chart."""
    titles = {p.id: p.title for p in view.loaded.drill.parts}
    rows = []
    for number, r in enumerate(results, start=1):
        rows.append({
            "#": number,
            "Part": titles[r.part_id],
            "Question": view.text(r.prompt),
            "Your answer": _answer_text(view, r),
            "Truth": _truth_text(view, r),
            "Score": _score_text(view, r),
            RANGE_HELD: {True: "yes", False: "no", None: ""}[r.in_range],
        })
    return pd.DataFrame(rows)


# Widths in pixels, scaled up together to fill the container: at 1300 px the whole table fits with no
# sideways scroll. Prompts and choice texts run to 100-200 characters, so rows are four lines high and wrap.
RESULTS_ROW_HEIGHT = 88
RESULTS_COLUMNS = {
    "#": st.column_config.NumberColumn(width=32, help="Question number, as on the chart above"),
    "Part": st.column_config.TextColumn(width=100),
    "Question": st.column_config.TextColumn(width=230, help="Click a cell to read all of it"),
    "Your answer": st.column_config.TextColumn(width=150),
    "Truth": st.column_config.TextColumn(width=150),
    "Score": st.column_config.TextColumn(width=64, help="1 within tolerance, 0.5 within twice it; a notes "
                                                         "answer scores once you have rated it"),
    RANGE_HELD: st.column_config.TextColumn(width=92, help="Did your 80% range contain the truth?"),
}


def show_results_table(table: pd.DataFrame, *, key: str, answer_label: str = "Your answer") -> None:
    """The results table with its column widths; the instructor's copy names the answer column its own way."""
    columns = dict(RESULTS_COLUMNS)
    if answer_label != "Your answer":
        table = table.rename(columns={"Your answer": answer_label})
        columns[answer_label] = columns.pop("Your answer")
    # Tall enough for every row: a report reads better without a scroll box inside the page.
    st.dataframe(table, hide_index=True, width="stretch", row_height=RESULTS_ROW_HEIGHT,
                 height=RESULTS_ROW_HEIGHT * len(table) + 40, column_config=columns, key=key)


def _short(text: str, limit: int = 60) -> str:
    """Cut at a word boundary so a label never ends mid-word."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" ,;:.") + "…"


def wrap_text(text: str, width: int = 70) -> str:
    """Text on lines of about `width` characters (plotly's <br>), escaped because plotly reads a subset of HTML."""
    return "<br>".join(html.escape(line) for line in textwrap.wrap(text, width)) or html.escape(text)


def percent_text(percent: float) -> str:
    """A tick label: '50%', '2,000%', '0.5%', with as many decimals as a small value needs."""
    decimals = max(0, -math.floor(math.log10(percent) + 1e-9)) if percent < 1 else 0
    return f"{percent:,.{decimals}f}%"


def percent_ticks(low_log: float, high_log: float, long_steps: tuple[int, ...] = (1,)) -> list[float]:
    """Tick values (in %) inside a log10 range: 1-2-5 per decade when it is short, else `long_steps` per decade
    (powers of ten by default).

    1-2-5 is symmetric about 100% (50% and 200% are both a factor of 2 off), so misses either way read alike.
    """
    steps = (1, 2, 5) if high_log - low_log <= 2.5 else long_steps
    ticks = []
    for decade in range(math.floor(low_log), math.ceil(high_log) + 1):
        for step in steps:
            value = step * 10.0 ** decade
            if low_log <= math.log10(value) <= high_log:
                ticks.append(value)
    return ticks


def drawable_guesses(results: list[scoring.QuestionResult]) -> tuple[list[scoring.QuestionResult], int]:
    """Numeric guesses that can sit on a ratio (log) axis, and how many could not (zero or negative)."""
    numeric = [r for r in results if r.kind == "numeric" and r.answer is not None and not r.answer.skipped
               and r.truth is not None]   # a withheld truth (open attempt, answer not yet revealed) is not drawn
    drawable = [r for r in numeric if r.truth > 0 and r.answer.value > 0]
    return drawable, len(numeric) - len(drawable)


def _off_by(ratio: float) -> str:
    if abs(ratio - 1) < 0.005:
        return "exact"
    return f"{format_number(ratio)}× the truth" if ratio > 1 else f"{percent_text(100 * ratio)} of the truth"


def guess_figure(view: AttemptView, results: list[scoring.QuestionResult]) -> go.Figure | None:
    """Each numeric guess as a percentage of the truth (log axis), with its 80% range as an error bar."""
    numeric, _ = drawable_guesses(results)
    if not numeric:
        return None
    numbers = {r.question_id: n for n, r in enumerate(results, start=1)}  # the table's '#' column
    labels, ratios, lows, highs, colours, hover = [], [], [], [], [], []
    for r in numeric:
        question = view.loaded.drill.question(r.question_id)
        prompt = view.text(r.prompt)
        ratio = 100 * r.answer.value / r.truth
        labels.append(f"{numbers[r.question_id]}. {_short(prompt, 52)}")  # numbered: two prompts may shorten alike
        ratios.append(ratio)
        has_range = r.answer.low is not None and r.answer.low > 0
        if has_range:
            lows.append(ratio - 100 * r.answer.low / r.truth)
            highs.append(100 * r.answer.high / r.truth - ratio)
        else:
            lows.append(0)
            highs.append(0)
        colours.append(SCORE_COLOURS.get(r.score, "#607d8b"))
        lines = [f"guess {format_quantity(r.answer.value, question.unit)} vs truth "
                 f"{format_quantity(r.truth, question.unit, question.decimals)}: {_off_by(ratio / 100)}"]
        if has_range:
            lines.append(f"80% range {format_quantity(r.answer.low, question.unit)} – "
                         f"{format_quantity(r.answer.high, question.unit)}: "
                         f"{'held' if r.in_range else 'missed the truth'}")
        hover.append("<br>".join([f"<b>{numbers[r.question_id]}.</b> {wrap_text(prompt)}"]
                                 + [html.escape(line) for line in lines]))
    rows = list(range(len(labels)))
    fig = go.Figure(go.Scatter(
        x=ratios, y=rows, mode="markers", marker=dict(size=12, color=colours),
        error_x=dict(type="data", symmetric=False, array=highs, arrayminus=lows, color="#90a4ae"),
        hovertext=hover, hoverinfo="text", name="your guess",
    ))
    # The truth line is a trace, not a layout shape (shapes on a log axis take log10 units), drawn on a hidden
    # 0-1 axis so it spans the plot even when there is a single question.
    fig.add_trace(go.Scatter(x=[100, 100], y=[0, 1], yaxis="y2", mode="lines", hoverinfo="skip",
                             line=dict(dash="dash", color="#37474f"), name="truth"))
    extremes = [v for v in ratios + [r - lo for r, lo in zip(ratios, lows)] + [r + hi for r, hi in zip(ratios, highs)]
                + [100] if v > 0]
    # At least half to twice the truth, so a chart of close guesses still has ticks either side of 100%.
    low, high = min(math.log10(min(extremes)), math.log10(50)), max(math.log10(max(extremes)), math.log10(200))
    pad = max(0.15, (high - low) * 0.08)
    ticks = percent_ticks(low - pad, high + pad)
    fig.update_xaxes(type="log", range=[low - pad, high + pad], tickvals=ticks, ticktext=[percent_text(t) for t in ticks],
                     tickfont=dict(size=13), showgrid=True,
                     title=dict(text="Your guess as a % of the truth (log scale)",
                                font=dict(size=14)))
    # Each question's label sits above its row across the full width, not in a left margin: on a phone a
    # margin of prompts left the plot a sliver.
    for row, label in zip(rows, labels):
        fig.add_annotation(x=0, xref="paper", y=row, yref="y", yshift=9, text=html.escape(label), showarrow=False,
                           xanchor="left", yanchor="bottom", font=dict(size=13, color="#263238"))
    fig.update_yaxes(showticklabels=False, range=[len(rows) - 0.5, -0.9], showgrid=False, zeroline=False)
    fig.update_layout(height=110 + 50 * len(labels), margin=dict(l=10, r=10, t=10, b=50), showlegend=False,
                      hoverlabel=dict(align="left"),
                      yaxis2=dict(overlaying="y", range=[0, 1], visible=False, fixedrange=True))
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
    """The candidate's own results: while the attempt is open, only what they have locked and seen revealed."""
    drill = view.loaded.drill
    results = withhold(view.results(), view.disclosed)
    totals = scoring.totals(results)
    calib = scoring.calibration(results)
    clock = clock_for(view.attempt, now())

    cols = st.columns(4)
    cols[0].metric("Score" if view.finished else "Score so far", f"{format_number(totals.earned)} / {totals.possible}",
                   f"{totals.percent:.0f}%", delta_color="off", delta_arrow="off",
                   help=None if view.finished else "Counts only the questions whose worked answer you have opened.")
    cols[1].metric("Locked in", f"{totals.locked} / {totals.possible}",
                   f"{totals.skipped} skipped" if totals.skipped else None, delta_color="off", delta_arrow="off")
    rate = calib.hit_rate
    cols[2].metric("80% ranges that held", "—" if rate is None else f"{calib.hits} of {calib.ranges}",
                   None if rate is None else (f"{rate:.0%} vs 80% claimed" if calib.judgeable else "too few to judge"),
                   delta_color="off", delta_arrow="off")
    cols[3].metric("Time used", format_duration(clock.elapsed_s),
                   f"over by {format_duration(clock.overtime_s)}" if clock.over else "inside the box",
                   delta_color="red" if clock.over else "off", delta_arrow="off")
    st.caption(calib.verdict)
    if totals.unrated_notes:
        notes = plural(totals.unrated_notes, "notes answer")
        st.info(f"{notes} {'was' if totals.unrated_notes == 1 else 'were'} never self-rated, so "
                f"{'it earns' if totals.unrated_notes == 1 else 'they earn'} no marks." if view.finished else
                f"{notes} still {'needs' if totals.unrated_notes == 1 else 'need'} your self-rating (on the drill "
                "page, under each worked answer); until then they are not counted.")

    st.header("Your numbers against the truth")
    figure = guess_figure(view, results)
    if figure is None:
        st.info("No numeric guesses locked in yet." if view.finished else
                "Your guesses appear here against the truth once you have opened their worked answers.")
    else:
        st.plotly_chart(figure, width="stretch", key=GUESS_CHART)
        st.caption("Dots on the dashed line were exact; green is within tolerance, amber within twice it. "
                   "Bars are your 80% ranges.")
    not_drawn = drawable_guesses(results)[1]
    if not_drawn:
        st.caption(f"{not_drawn} guess{'es' if not_drawn != 1 else ''} at or below zero cannot sit on a ratio "
                   "scale; see the table below.")
    show_results_table(results_table(view, results), key=TABLE)

    st.header("Time per part against the pacing")
    st.plotly_chart(time_figure(view), width="stretch", key=keys.TIME_CHART)

    st.header("Rubric")
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
        st.info("Not every skill was scored before the attempt finished, so there is no verdict; your instructor "
                "can still score the rest." if view.finished else
                "Score every skill on the drill page's last step to get the verdict.")
    elif outcome.passed:
        st.success(f"{outcome.tally} {outcome.message}")
    else:
        st.warning(f"{outcome.tally} {outcome.message}")
    for warning in outcome.warnings:
        st.warning(warning, icon=":material/warning:")


def record_results_visit(store, attempt) -> None:
    """An open attempt's results page logs one 'results_viewed' event per browser session, for the timeline."""
    seen = st.session_state.setdefault(VIEWED, set())
    if attempt.id not in seen:
        store.log_event(attempt.id, EventKind.RESULTS_VIEWED)
        seen.add(attempt.id)
