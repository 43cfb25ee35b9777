"""The board's Items tab: which questions are bad questions, and whether the variants are equally hard.

The figures are drills.reports.items (Moodle's quiz statistics); this module only lays them out.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from drills.reports import items
from drills.schema import ChoiceQuestion
from drills.variants import label as variant_label
from ui import keys
from ui.instructor import board_figures
from ui.drill.attempt_view import sim_truths_of
from ui.instructor.export import download_buttons
from ui.context import get_catalogue
from ui.instructor.figures import short_prompt

K = keys.register("items", __name__)   # this module's keys (ui.keys holds only shared ones)
ATTEMPTS = K.kept("instructor::items_attempts")  # items tab: first attempts or every finished attempt
VARIANTS = K.kept("instructor::items_variants")  # items tab: show a row per variant too
TABLE = K.kept("items_table")            # items tab: one row per question (and variant)
ALPHA_TABLE = K.kept("items_alpha_table")  # items tab: Cronbach's alpha per drill and scope
CHOICES_CHART = K.kept("items_choices_fig")  # items tab: the share choosing each option

FIRST, EVERY = "first", "all"
MISSING = "—"


def variant_text(variant) -> str:
    return "All numbers" if variant == items.ALL else variant_label(int(variant))


def items_frame(table: pd.DataFrame, prompts: dict[str, str]) -> pd.DataFrame:
    """The item table as shown: the question by its prompt, the figures rounded, the flags in words."""
    return pd.DataFrame({
        "Question": [prompts.get(q, q) for q in table["question_id"]],
        "Numbers": [variant_text(v) for v in table["variant"]],
        "Attempts": table["n"],
        "Live": table["live_n"],
        "Facility %": table["facility_pct"].round(0),
        "SD %": table["sd_pct"].round(0),
        "Discrimination": table["discrimination_index"].round(0),
        "Efficiency %": table["discriminative_efficiency_pct"].round(0),
        "Flags": table["flags"],
        "Median error %": table["median_signed_error_pct"].round(0),
        "Ranges held %": table["range_held_pct"].round(0),
        "Kind": table["kind"], "Id": table["question_id"],
    })


HELP = {
    "Facility %": "Mean mark as a share of the question's one point (Moodle's facility index): under "
                  f"{items.TOO_HARD_BELOW:g}% is too hard, over {items.TOO_EASY_ABOVE:g}% too easy",
    "SD %": "Standard deviation of the question's marks, as a share of its one point",
    "Discrimination": "100 × the correlation between this question's mark and the rest of the attempt's marks "
                      "(Moodle's discrimination index): high when strong candidates get it and weak ones do not",
    "Efficiency %": "The discrimination as a share of the most these marks could show (Moodle's discriminative "
                    f"efficiency); under {items.DUBIOUS_BELOW:g}% the question is dubious",
    "Flags": f"dubious (efficiency under {items.DUBIOUS_BELOW:g}%), too hard, too easy, variants differ (facility more "
             f"than {items.VARIANT_GAP:g} points apart between variants with {items.VARIANT_MIN_N}+ attempts); "
             f"a row is flagged only once {items.FLAG_MIN_N} answers carry a mark (a note once it is rated)",
    "Median error %": "Numeric questions: the median guess's signed miss, as a share of the truth (negative: low)",
    "Ranges held %": "Numeric questions: how often the stated 80% ranges held (80 is honest)",
    "Numbers": "All numbers together, or one variant's attempts",
    "Live": "How many of these attempts were seats in a live room (the instructor paced them, the room saw the "
            "answers before the worked answer, and every seat had the same numbers)",
}


def render_items(board) -> None:
    cols = st.columns([2, 1])
    mode = cols[0].radio("Attempts counted", (FIRST, EVERY), horizontal=True, key=ATTEMPTS,
                         format_func=lambda m: "Each candidate's first attempt" if m == FIRST
                         else "Every finished attempt")
    per_variant = cols[1].toggle("A row per variant", key=VARIANTS,
                                 help="Each variant's attempts on their own, to see whether retakes are fair")
    first_only = mode == FIRST
    store, key, filters, loaded = board.store, board.key, board.filters, board.loaded
    table = board.figure("items", lambda: items.item_stats(store, key, filters, first_only, loaded), first_only)
    if table.empty:
        st.info("No finished attempts in these filters yet: item analysis counts finished attempts only.")
        return
    alphas = board.figure("items_alpha", lambda: items.alpha_by_scope(
        store, get_catalogue().drills, loaded.drill.id, filters, sim_truths_of, first_only), first_only)
    whole = table[table["variant"] == items.ALL]
    mine = alphas[alphas["drill_id"] == loaded.drill.id]
    alpha_value = mine["alpha_pct"].iloc[0] if not mine.empty else None
    metrics = st.columns(3)
    metrics[0].metric("Cronbach's alpha", MISSING if alpha_value is None or pd.isna(alpha_value)
                      else f"{alpha_value:.0f}%", help="Internal consistency of the whole drill (Moodle's "
                      "coefficient of internal consistency); above 75% the questions measure one thing well")
    live_n = int(whole["live_n"].max())
    metrics[1].metric("Attempts counted", f"{int(whole['n'].max()):,}",
                      help=f"{live_n:,} of them taken in a live room" if live_n else None)
    metrics[2].metric("Questions flagged", f"{int((whole['flags'] != '').sum())} of {len(whole)}",
                      help=f"Only questions with {items.FLAG_MIN_N} or more graded answers are flagged: fewer marks "
                           "say nothing about a question yet")

    prompts = {q.id: short_prompt(loaded.text(q.prompt)) for q in loaded.drill.all_questions()}
    shown = table if per_variant else whole
    config = {name: st.column_config.Column(help=text) for name, text in HELP.items()}
    config["Question"] = st.column_config.TextColumn(width="medium", help="The start of the question's prompt")
    config["Flags"] = st.column_config.TextColumn(width="medium", help=HELP["Flags"])
    st.dataframe(items_frame(shown, prompts), hide_index=True, width="stretch", placeholder=MISSING,
                 column_config=config, key=TABLE)
    st.caption(("Each candidate's first attempt, as Moodle counts by default (a retake builds on the first)"
                if first_only else "Every finished attempt, each as if by a different candidate (retakes are not "
                "independent, so read the figures with care)")
               + ". Unanswered questions score 0; open attempts are left out. Every figure is in the export below."
               + (f" {live_n:,} of the attempts were live seats (the Live column): paced by the instructor, so "
                  "read their facility beside the others with that in mind." if live_n else ""))

    choices = whole[whole["kind"] == "choice"]
    if not choices.empty:
        st.markdown("##### Options chosen")
        questions = {q.id: q for q in loaded.drill.all_questions() if isinstance(q, ChoiceQuestion)}
        right = {qid: q.answer for qid, q in questions.items()}
        option_text = {qid: {o.id: short_prompt(loaded.text(o.text), 60) for o in q.options}
                       for qid, q in questions.items()}
        st.plotly_chart(board.figure("items_choices", lambda: board_figures.choice_figure(
            choices, prompts, right, option_text), first_only), width="stretch", key=CHOICES_CHART)
        st.caption("A distractor nobody picks does no work; one picked more than the right option points at "
                   "a misconception, or at a question that reads two ways. Hover for each option.")

    if len(alphas) > 1:
        st.markdown("##### Cronbach's alpha per scope")
        st.dataframe(pd.DataFrame({
            "Drill or scope": alphas["drill_id"], "Attempts": alphas["n"], "Questions": alphas["items"],
            "Alpha %": alphas["alpha_pct"].round(0)}), hide_index=True, width="stretch", placeholder=MISSING,
            key=ALPHA_TABLE)
    stem = f"{filters.drill_id}_{filters.cohort or 'all'}"
    download_buttons(f"items_{mode}", stem, lambda: items.item_stats(store, key, filters, first_only, loaded),
                     "Item analysis")
