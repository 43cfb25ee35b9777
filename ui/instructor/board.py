"""The instructor board: filters, counts, leaderboard, skills, questions, time, calibration, one attempt, exports.

Reports come from drills.reports, cached on the filters plus the store's data version so new work shows up.
"""
from __future__ import annotations

import datetime as dt
import functools

import pandas as pd
import streamlit as st

from drills import instructor_actions as actions
from drills import scoring
from drills.answers import InputError
from drills.loader import LoadedDrill
from drills.reports import aggregates
from drills.reports.exports import export_answers, export_attempts, to_csv_bytes, to_parquet_bytes
from drills.reports.grading_key import DrillKey
from drills.reports.source import Filters
from drills.reports.timeline import grant_history, override_history, timeline
from drills.schema import LEVELS
from drills.scope import FULL, scoped_id
from drills.store import AttemptStore
from drills.timebox import clock_for, format_duration, format_utc
from drills.variants import label as variant_label
from ui.instructor import across as instructor_across
from ui.instructor import figures, roster
from ui.instructor.board_reads import ALL_COHORTS, BoardReads, cohort_names
from ui.instructor import gap as instructor_gap
from ui.instructor import integrity as instructor_integrity
from ui.instructor import items as instructor_items
from ui.instructor import replay as instructor_replay
from ui.instructor import times as instructor_time
from ui import keys, lms
from ui.safe import escape_markdown
from ui.drill.attempt_view import AttemptView, sim_truths_of
from ui.context import get_catalogue, get_store, now
from ui.sims.guess import plural
from ui.drill.results import guess_figure, results_table, show_results_table

K = keys.register("instructor", __name__)   # this module's keys (ui.keys holds only shared ones)
EXTRA_MINUTES = K.kept("extra::minutes")  # instructor board: extra minutes as typed (drills.instructor_actions checks)
EXTRA_REASON = K.kept("extra::reason")   # instructor board: why the extra time was granted
DRILL = K("drill")                       # board filter: which drill
COHORT = K("cohort")                     # board filter: which cohort (or all)
FLASH = K("flash")                       # an override or grant confirmation shown once (toast)
LEADERBOARD = K.kept("leaderboard_table")  # leaderboard tab: one row per candidate
HEATMAP = K.kept("heatmap")              # skills tab: level per candidate and skill
SHARES = K.kept("skill_shares_table")    # skills tab: candidates at each level per skill
QUESTIONS_CHART = K.kept("questions_fig")  # questions tab: the cohort's guesses against the truth
CALIBRATION_SKILL_CHART = K.kept("calib_skill")  # calibration tab: how often 80% ranges held, per skill
CALIBRATION_PEOPLE_CHART = K.kept("calib_people")  # calibration tab: the spread of hit rates over people
TIMELINE = K.kept("timeline_table")      # attempt view: the attempt's events in order
GUESS_CHART = K.kept("attempt_guess_fig")  # attempt view: the candidate's answers against the truth
RESULTS_TABLE = K.kept("attempt_results_table")  # attempt view: the candidate's graded answers
RUBRIC_TABLE = K.kept("rubric_now")      # attempt view: the rubric level that counts per skill
OVERRIDE_SKILL = K.kept("override::skill")  # override form: the skill rescored
OVERRIDE_LEVEL = K.kept("override::level")  # override form: the level given
OVERRIDE_COMMENT = K.kept("override::comment")  # override form: the comment shown to the candidate
OVERRIDE_HISTORY = K.kept("override_history")  # attempt view: every instructor override so far
GRANT_HISTORY = K.kept("grant_history")  # attempt view: every extra-time grant so far
DATES_PREFIX = K("dates")                # board filter: start-date range, per drill and bounds


def dates_key(drill_id: str, first: dt.date, last: dt.date) -> str:
    """Keyed by the bounds, so a new day of attempts widens the default range instead of hiding them."""
    return f"{DATES_PREFIX}::{drill_id}::{first}::{last}"


HEATMAP_ROWS = 60
DEMO_COMMAND = "FAULTLINES_DB=data/faultlines.duckdb python -m drills.demo --candidates 40"
MISSING = "—"           # what a table shows for a value that does not exist (Streamlit's own is a faded "None")
LEADERBOARD_ATTEMPT = "best-scoring attempt"
SKILLS_ATTEMPT = "latest finished attempt with skill scores"


@st.cache_data(show_spinner=False, max_entries=256)
def _report(name: str, db: str, filters: tuple, version: tuple, _store: AttemptStore,
            _key: DrillKey, extra: tuple = ()) -> pd.DataFrame:
    """One cohort report; `db`, `filters`, `version` and `extra` are the cache key, the store and key ride along."""
    return getattr(aggregates, name)(_store, _key, Filters(*filters), *extra)


@st.cache_data(show_spinner=False, max_entries=64)
def _leaderboard(db: str, filters: tuple, version: tuple, _store: AttemptStore,
                 _key: DrillKey) -> pd.DataFrame:
    return aggregates.leaderboard_from(_report("attempt_summary", db, filters, version, _store, _key))


@st.cache_data(show_spinner=False, max_entries=64)
def _counts(db: str, filters: tuple, version: tuple, _store: AttemptStore) -> aggregates.Counts:
    return aggregates.counts(_store, Filters(*filters))


@st.cache_resource(show_spinner=False, max_entries=64)
def _figure(name: str, db: str, filters: tuple, version: tuple, extra: tuple, _build):
    """A figure built once per data version: Plotly's validation costs more than the queries behind it.

    Shared between sessions, so callers never mutate the figure they get back.
    """
    return _build()


def _utc(ts: float | None) -> str:
    return "" if ts is None or pd.isna(ts) else format_utc(float(ts))


def _rounded(value: float | None, decimals: int) -> float | None:
    return None if value is None or pd.isna(value) else round(float(value), int(decimals))


def _percent(rates: pd.Series) -> pd.Series:
    """Shares as whole percentages, kept numeric so the column sorts by value; missing stays missing
    (the table draws it as MISSING: text with a dash here sorted "100" before "25")."""
    return (100 * pd.to_numeric(rates, errors="coerce")).round(0)


def level_names(drill) -> dict[str, str]:
    """The drill's own word for each rubric level (Hot Tenant: Staff / Senior / Junior), strongest first."""
    return drill.level_names.model_dump()


class Board:
    """One run's view of the board: the store, the drill, the filters and the data version."""

    def __init__(self, store: AttemptStore, loaded: LoadedDrill, filters: Filters, instructor: str, reads=None):
        self.store = store
        self.loaded = loaded
        self.filters = filters
        self.instructor = instructor
        self.reads = reads or BoardReads(store)   # the run's data version, and the small reads made at it
        self.version = self.reads.version
        self._args = (store.path, (filters.drill_id, filters.cohort, filters.since, filters.until), self.version)

    @functools.cached_property
    def key(self) -> DrillKey:
        """The grading key, with simulations run only for the variants attempts drew (cold, a variant's runs
        take 0.1-0.2 s: all twelve of one_tenant's took 1.9 s), and only once a report needs it.

        Built after the data version is read: an attempt on a variant this key lacks is newer than that
        version, so the next run reads a new version and builds a key with the variant.
        """
        drawn = self.reads.variants_drawn(self.loaded.drill.id)
        return DrillKey.from_loaded(self.loaded, sim_truths_of, drawn)

    def report(self, name: str, *extra) -> pd.DataFrame:
        return _report(name, *self._args, self.store, self.key, extra)

    def figure(self, name: str, build, *extra):
        return _figure(name, *self._args, extra, build)

    def leaderboard(self) -> pd.DataFrame:
        return _leaderboard(*self._args, self.store, self.key)

    def counts(self) -> aggregates.Counts:
        return _counts(*self._args, self.store)


# -- filters ---------------------------------------------------------------------------------
def choose_filters(store: AttemptStore, allowed: list[str] | None = None, reads=None) -> tuple[LoadedDrill, Filters] | None:
    """The drill, cohort and dates to report; `allowed` limits the cohorts (an account sees only its classes)."""
    reads = reads or BoardReads(store)
    catalogue = get_catalogue()
    if not catalogue.drills:
        st.info("No drills are installed, so there is nothing to report. Add a YAML file under `drills/content/`.")
        return None
    active = [d for d in reads.drills_by_activity() if d in catalogue.drills]
    # Every way to take a drill is a drill of its own on the board: the whole drill, then its essentials path
    # and each break on its own clock (drills.scope), those with attempts first.
    offered = [scoped_id(d, scope) for d in catalogue.drills
               for scope in [FULL, *(offer.id for offer in catalogue.drills.offers(d)[0])]]
    drill_ids = active + [d for d in offered if d not in active]
    cols = st.columns([3, 1, 2])
    drill_id = cols[0].selectbox("Drill", drill_ids, key=DRILL,
                                 format_func=lambda d: catalogue.drills[d].drill.title)
    codes = reads.cohorts(drill_id)
    options = [ALL_COHORTS] + codes if allowed is None else list(allowed)
    if not options:
        st.info("The board shows the classes you own or are named on, and you have none yet: make one above.")
        return None
    if st.session_state.get(COHORT) not in options:
        st.session_state.pop(COHORT, None)
    names = cohort_names(store, options)
    chosen = cols[1].selectbox("Cohort", options, key=COHORT, format_func=names.get,
                               help="A class by its name (its cohort code after it); a code no class owns is "
                                    "one candidates typed on the catalogue")
    bounds = reads.date_bounds(drill_id)
    since = until = None
    if bounds is not None:
        first = dt.datetime.fromtimestamp(bounds[0], dt.timezone.utc).date()
        last = dt.datetime.fromtimestamp(bounds[1], dt.timezone.utc).date()
        picked = cols[2].date_input("Attempts started between (UTC)", value=(first, last),
                                    key=dates_key(drill_id, first, last))
        picked = tuple(picked) if isinstance(picked, (tuple, list)) else (picked,)
        if picked:
            end = picked[1] if len(picked) > 1 else picked[0]
            if picked[0] > first:   # an end left at the edge stays open, so the default is "everything"
                since = dt.datetime.combine(picked[0], dt.time(), dt.timezone.utc).timestamp()
            if end < last:
                until = dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), dt.timezone.utc).timestamp()
    return catalogue.drills[drill_id], Filters(drill_id, None if chosen == ALL_COHORTS else chosen,
                                                      since, until)


# -- sections --------------------------------------------------------------------------------
def render_counts(board: Board) -> aggregates.Counts:
    counts = board.counts()
    cols = st.columns(3)
    cols[0].metric("Candidates", f"{counts.candidates:,}")
    cols[1].metric("Attempts started", f"{counts.started:,}")
    cols[2].metric("Attempts finished", f"{counts.finished:,}")
    return counts


# Widths that keep the columns an instructor compares (who, score, calibration, level count, attempts) in view
# at a 1300-pixel window; the rest scroll in from the right.
LEADERBOARD_WIDTHS = {"Candidate": 105, "Cohort": 105, "Score %": 110, "Calibration %": 95, "Ranges held": 85,
                      "Attempts": 72, "Finished": 68, "Time used (min)": 108, "Time box (min)": 105, "Numbers": 90,
                      "Overrides": 80, "Live": 50}


def leaderboard_frame(table: pd.DataFrame, top_level: str) -> pd.DataFrame:
    """The leaderboard as shown: most compared columns first; the Strong count named by the drill's top level."""
    return pd.DataFrame({
        "Candidate": table["handle"], "Cohort": table["cohort"],
        "Score %": table["score_pct"].round(1),
        "Calibration %": _percent(table["hit_rate"]),
        "Ranges held": [f"{int(h)} of {int(r)}" if r else MISSING for h, r in zip(table["hits"], table["ranges"])],
        top_level: table["strong"], "Attempts": table["attempts"], "Finished": table["finished"],
        "Time used (min)": table["used_min"].round(1), "Time box (min)": table["limit_min"].round(1),
        "Numbers": [variant_label(int(v)) for v in table["variant"]], "Overrides": table["overridden"],
        "Live": ["live" if bool(v) else "" for v in table["live"]],
    })


def render_leaderboard(board: Board, table: pd.DataFrame) -> None:
    top_level = board.loaded.drill.level_label("strong")
    shown = leaderboard_frame(table, top_level)
    widths = {**LEADERBOARD_WIDTHS, top_level: 62}
    help_text = {
        "Cohort": "The cohort code the candidate gave",
        "Score %": f"Points earned on the {LEADERBOARD_ATTEMPT}",
        "Calibration %": f"How often the 80% ranges held over every attempt (80 is honest); {MISSING} when the "
                         "candidate gave no range, so there is nothing to measure",
        "Ranges held": f"80% ranges that held, of those given, over every attempt; {MISSING} when none was given",
        top_level: f"Skills scored {top_level} (the drill's top level) of {len(board.key.skill_ids)} on the "
                   f"{LEADERBOARD_ATTEMPT}",
        "Numbers": "Which numbers the best attempt drew: as written, or its own draw from the attempt's seed "
                   "(the Attempt tab lists them)",
        "Overrides": f"Skills an instructor rescored on the {LEADERBOARD_ATTEMPT}",
        "Live": f"“live” when the {LEADERBOARD_ATTEMPT} was a seat in a live session of the class",
        "Time used (min)": "To the finish, or to the last activity of an unfinished attempt",
    }
    config = {name: st.column_config.Column(width=width, help=help_text.get(name))
              for name, width in widths.items()}
    config["Score %"] = st.column_config.ProgressColumn(min_value=0, max_value=100, format="%.0f%%",
                                                        width=widths["Score %"], help=help_text["Score %"])
    config["Calibration %"] = st.column_config.NumberColumn(format="%.0f", width=widths["Calibration %"],
                                                            help=help_text["Calibration %"])
    st.dataframe(shown, hide_index=True, width="stretch", placeholder=MISSING, column_config=config,
                 key=LEADERBOARD)
    st.caption(f"One row per candidate, from their {LEADERBOARD_ATTEMPT}; calibration counts every attempt. "
               f"The Skills tab uses each candidate's {SKILLS_ATTEMPT} instead, so a retake just started "
               "changes neither.")


def render_skills(board: Board, table: pd.DataFrame) -> None:
    top = table.head(HEATMAP_ROWS)
    levels = board.report("skill_levels", tuple(int(c) for c in top["candidate_id"]))
    if levels.empty:
        st.info("No rubric scores yet: candidates score themselves at the end of a drill.")
        return
    order = list(zip(top["handle"], top["cohort"]))
    names = level_names(board.loaded.drill)
    st.plotly_chart(board.figure("heatmap", lambda: figures.skills_heatmap(levels, board.key, order, names),
                                 tuple(order)),
                    width="stretch", key=HEATMAP)
    caption = (f"Each candidate's {SKILLS_ATTEMPT} (a retake just started does not hide it; the Leaderboard "
               f"ranks by the {LEADERBOARD_ATTEMPT}); a blank row has no scored attempt yet. "
               f"{figures.OVERRIDE_MARK} marks an instructor override (hover for the comment).")
    if len(table) > HEATMAP_ROWS:
        caption += f" Showing the top {HEATMAP_ROWS} of {len(table):,} candidates; narrow the filters to see others."
    st.caption(caption)
    shares = board.report("skill_shares")
    skills = dict(zip(board.key.skill_ids, board.key.skill_names))
    shares = shares.assign(Skill=shares["skill_id"].map(skills)).set_index("skill_id").reindex(
        [s for s in board.key.skill_ids if s in set(shares["skill_id"])]).reset_index()
    st.dataframe(shares[["Skill", "strong", "ok", "weak", "overridden"]].rename(
        columns={**names, "overridden": "Overridden"}), hide_index=True, width="stretch", key=SHARES)
    st.caption("Candidates at each level per skill, on the same attempts as the heatmap.")


def render_questions(board: Board) -> None:
    errors = board.report("question_errors")
    if errors.empty:
        st.info("No numeric guesses locked in yet for these filters.")
        return
    sample = board.report("question_sample")
    drill = board.loaded.drill
    questions = {q: drill.question(q) for q in errors["question_id"]}
    prompts = {q: board.loaded.text(question.prompt) for q, question in questions.items()}
    shorts = {q: figures.short_prompt(p) for q, p in prompts.items()}
    st.plotly_chart(board.figure("questions", lambda: figures.question_figure(errors, sample, shorts)),
                    width="stretch", key=QUESTIONS_CHART)
    st.caption("Boxes span the middle half of the cohort's guesses, whiskers 5% to 95%; dots are a sample of "
               "guesses (green within tolerance). Questions are ranked by the median miss, worst first. "
               "Each guess is measured against its own attempt's numbers and, for a simulation-graded question, "
               "the run at its attempt's own graded seed; the Truth column shows the numbers as written (a "
               "simulation's at seed 0, a reference run no new attempt is graded against).")
    st.dataframe(board.figure("question_table", lambda: pd.DataFrame({
        "Question": [shorts[q] for q in errors["question_id"]],
        "Truth": [_rounded(t, getattr(questions[q], "decimals", 2))
                  for q, t in zip(errors["question_id"], errors["truth"])],
        "Guesses": errors["guesses"], "Skipped": errors["skipped"],
        "Within tolerance %": (100 * errors["in_tolerance"]).round(0),
        "Median miss %": (100 * errors["median_abs_error"]).round(0),
        "Mean bias %": (100 * errors["mean_error"]).round(0),
        "Ranges held %": _percent(errors["range_hit_rate"]),
        "Id": errors["question_id"],
    })), hide_index=True, width="stretch", placeholder=MISSING, column_config={
        "Question": st.column_config.TextColumn(width="large", help="The start of the question's prompt"),
        "Truth": st.column_config.NumberColumn(help="Rounded to the decimals the drill shows for the question"),
        "Id": st.column_config.TextColumn(width="small", help="The question's id in the drill file (for authors)"),
        "Ranges held %": st.column_config.NumberColumn(help=f"How often the cohort's 80% ranges held; {MISSING} "
                                                        "when nobody gave a range for the question"),
    })


def render_time(board: Board) -> None:
    spent = board.report("time_per_part")
    if not spent["attempts"].any():
        st.info("No time recorded yet: time per part starts when a candidate opens a part.")
        return
    st.plotly_chart(board.figure("time", lambda: figures.time_figure(spent)), width="stretch", key=keys.TIME_CHART)
    st.caption("Bars are the cohort's median minutes per part (whiskers: middle half) beside the drill's pacing.")


def render_calibration(board: Board, table: pd.DataFrame) -> None:
    by_skill = board.report("calibration_by_skill")
    if not by_skill["ranges"].any():
        st.info("Nobody in these filters gave an 80% range yet, so there is nothing to calibrate.")
        return
    cols = st.columns(2)
    cols[0].plotly_chart(board.figure("calib_skill", lambda: figures.calibration_figure(by_skill)), width="stretch",
                         key=CALIBRATION_SKILL_CHART)
    cols[1].plotly_chart(board.figure("calib_people", lambda: figures.calibration_histogram(table)),
                         width="stretch", key=CALIBRATION_PEOPLE_CHART)
    total_r, total_h = int(by_skill["ranges"].sum()), int(by_skill["hits"].sum())
    st.caption("Stated 80% ranges against how often they held. Below 80% means ranges too narrow "
               "(overconfident); well above means too wide. Per candidate, see the leaderboard's Calibration %. "
               f"Questions with several skills count once per skill ({total_h:,} of {total_r:,} skill-ranges held).")


def render_attempt(board: Board, table: pd.DataFrame) -> None:
    candidates = list(table["candidate_id"])
    labels = dict(zip(table["candidate_id"], (figures.candidate_label(h, c)
                                              for h, c in zip(table["handle"], table["cohort"]))))
    if st.session_state.get(keys.INSTRUCTOR_CANDIDATE) not in labels:
        st.session_state.pop(keys.INSTRUCTOR_CANDIDATE, None)
    cols = st.columns(2)
    candidate_id = cols[0].selectbox("Candidate", candidates, key=keys.INSTRUCTOR_CANDIDATE, format_func=labels.get)
    attempts = board.report("attempt_summary")
    mine = attempts[attempts["candidate_id"] == candidate_id].sort_values("started_at")
    options = list(mine["attempt_id"])
    described = {a: f"#{a} · {'live · ' if bool(lv) else ''}started {_utc(s)} UTC · {variant_label(int(v))} · "
                    f"{'finished' if pd.notna(f) else 'open'} · {p:.0f}%"
                 for a, s, v, f, p, lv in zip(mine["attempt_id"], mine["started_at"], mine["variant"],
                                              mine["finished_at"], mine["score_pct"], mine["live"])}
    picker = keys.instructor_attempt(candidate_id) if candidate_id is not None else keys.INSTRUCTOR_ATTEMPT
    if st.session_state.get(picker) not in described:
        st.session_state.pop(picker, None)
    attempt_id = cols[1].selectbox("Attempt", options, key=picker, format_func=described.get,
                                   index=len(options) - 1 if options else None)
    attempt = board.store.attempt_by_id(int(attempt_id)) if attempt_id is not None else None
    if attempt is None:
        st.info("Pick a candidate and one of their attempts.")
        return
    view = AttemptView.load(board.store, attempt, board.loaded)
    results = view.results()
    totals = scoring.totals(results)
    clock = clock_for(attempt, now())
    metric_cols = st.columns(4)
    # The percentage in the label, not as a delta: a delta draws an arrow and reads as a change.
    metric_cols[0].metric(f"Score ({totals.percent:.0f}%)", f"{totals.earned:g} / {totals.possible}")
    metric_cols[1].metric("Time used", format_duration(clock.elapsed_s))
    metric_cols[2].metric("Time box", format_duration(clock.limit_s),
                          f"incl. {format_duration(attempt.extra_s)} extra" if attempt.extra_s else None,
                          delta_color="off")
    metric_cols[3].metric("Time left", "finished" if clock.finished else format_duration(clock.remaining_s))
    st.caption(f"{variant_label(attempt.variant)} · the numbers this attempt drew: "
               f"{escape_markdown(view.drawn_numbers)}")

    st.markdown("##### Timeline")
    rows = timeline(board.loaded, board.store.events(attempt.id), view.answers,
                    lambda q: figures.short_prompt(view.text(board.loaded.drill.question(q).prompt)))
    for warning in early_warnings(rows):
        st.warning(warning, icon=":material/warning:")
    st.dataframe(timeline_frame(board.loaded, rows, attempt.started_at), hide_index=True, width="stretch",
                 key=TIMELINE, column_config={
                     "When (UTC)": st.column_config.TextColumn(width=140),
                     "Since start": st.column_config.TextColumn(width=70),
                     "Event": st.column_config.TextColumn(width=75),
                     "Part": st.column_config.TextColumn(width=140),
                     "Detail": st.column_config.TextColumn(width=290, help="The question (the start of its prompt "
                                                           "in this attempt's numbers), reveal or skill")})
    instructor_replay.render_replay(view)

    st.markdown("##### Answers against the truth")
    figure = guess_figure(view, results)
    if figure is not None:
        st.plotly_chart(as_their_guess(figure), width="stretch", key=GUESS_CHART)
    show_results_table(results_table(view, results), key=RESULTS_TABLE, answer_label="Their answer")

    render_rubric(board, view)
    render_extra_time(board, view)


def early_warnings(rows) -> list[str]:
    """The timeline's flags in words: reveals opened, and simulations visited, before their questions closed."""
    early = sum(1 for r in rows if r.early and r.kind == "revealed")
    peeks = sum(1 for r in rows if r.early and r.kind != "revealed")
    warnings = []
    if early:
        warnings.append(f"{plural(early, 'reveal')} opened before every question "
                        f"{'it answers' if early == 1 else 'they answer'} was locked in or skipped.")
    if peeks:
        warnings.append(f"{plural(peeks, 'simulation page')} opened while questions "
                        f"{'it answers' if peeks == 1 else 'they answer'} were still open.")
    return warnings


def timeline_frame(loaded: LoadedDrill, rows, started_at: float) -> pd.DataFrame:
    """The timeline as shown: parts by their titles (the prompt and closing pages have none, so keep their id)."""
    titles = {p.id: p.title for p in loaded.drill.parts}
    return pd.DataFrame({
        "When (UTC)": [_utc(r.at) for r in rows],
        "Since start": [format_duration(r.at - started_at) for r in rows],
        "Event": [r.kind for r in rows], "Part": [titles.get(r.part_id, r.part_id or "") for r in rows],
        "Detail": [r.what for r in rows],
        "Flag": [r.flag if r.early else "" for r in rows],
    })


def as_their_guess(figure):
    """The results page's guess chart, worded for the instructor reading it: the guesses are the candidate's."""
    figure.update_traces(name="their guess", selector=dict(name="your guess"))
    title = figure.layout.xaxis.title.text or ""
    figure.update_xaxes(title_text=title.replace("Your guess", "Their guess"))   # the rest of the wording is theirs
    return figure


def render_rubric(board: Board, view: AttemptView) -> None:
    drill = board.loaded.drill
    history = board.store.rubric_history(view.attempt.id)
    levels = scoring.current_levels(history)
    st.markdown("##### Rubric")
    st.dataframe(pd.DataFrame([{
        "Skill": s.name,
        "Level that counts": drill.level_label(levels[s.id].level) if s.id in levels else "not scored",
        "Scored by": (f"{levels[s.id].scorer}: {levels[s.id].scorer_name}" if s.id in levels else ""),
        "Comment": levels[s.id].reason if s.id in levels else "",
    } for s in drill.rubric]), hide_index=True, width="stretch", key=RUBRIC_TABLE)
    with st.form("override", clear_on_submit=False):
        st.markdown("**Override a skill's score** (appended; the latest instructor score wins; the candidate sees it "
                    "with your comment)")
        cols = st.columns([2, 2])
        skill_id = cols[0].selectbox("Skill", [s.id for s in drill.rubric], format_func=lambda s: drill.skill(s).name,
                                     key=OVERRIDE_SKILL)
        level = cols[1].radio("Level", LEVELS, format_func=drill.level_label, horizontal=True,
                              key=OVERRIDE_LEVEL)
        comment = st.text_area("Comment (required, shown to the candidate)", key=OVERRIDE_COMMENT, height=90)
        submitted = st.form_submit_button("Save override", type="primary")
    if submitted:
        try:
            actions.override_skill(board.store, view.attempt, board.loaded, skill_id, level, comment, board.instructor)
        except InputError as problem:
            st.error(str(problem), icon=":material/warning:")
        else:
            lms.queue_grade(view)   # the LMS that launched this attempt gets the marked grade
            st.session_state[FLASH] = f"Override saved for {drill.skill(skill_id).name}."
            st.rerun()
    overrides = override_history(history)
    skill_ids = {s.id for s in drill.rubric}
    _history_table("Override history", "No instructor overrides on this attempt.", OVERRIDE_HISTORY, {
        "When (UTC)": [_utc(r.scored_at) for r in overrides],
        "Skill": [drill.skill(r.skill_id).name if r.skill_id in skill_ids else r.skill_id for r in overrides],
        "Level": [drill.level_label(r.level) for r in overrides],
        "Who": [r.scorer_name for r in overrides], "Why": [r.reason for r in overrides],
    })


def _history_table(title: str, empty: str, key: str, columns: dict[str, list]) -> None:
    """An audit trail under its heading; user text (names, reasons) only ever as dataframe cells."""
    st.markdown(f"**{title}**")
    if not next(iter(columns.values())):
        st.caption(empty)
    else:
        st.dataframe(pd.DataFrame(columns), hide_index=True, width="stretch", key=key)


def render_extra_time(board: Board, view: AttemptView) -> None:
    attempt = view.attempt
    st.markdown("**Grant extra time** (added to this attempt's time box)")
    if attempt.finished_at is not None:
        st.caption("This attempt is finished, so extra time would change nothing.")
    with st.form("extra_time", clear_on_submit=True):
        cols = st.columns([1, 3])
        # A text box, checked by drills.instructor_actions: a number box clamps `1e400` to its default without a word.
        minutes = cols[0].text_input(
            "Extra minutes", value="10", max_chars=40, key=EXTRA_MINUTES,
            help=f"A number of minutes from {actions.MIN_EXTRA_MIN} to {actions.MAX_EXTRA_MIN}.")
        reason = cols[1].text_input("Reason (optional)", key=EXTRA_REASON)
        granted = st.form_submit_button("Grant extra time")
    if granted:
        try:
            added = actions.grant_extra_time(board.store, attempt, minutes, board.instructor, reason)
        except InputError as problem:
            st.error(str(problem), icon=":material/warning:")
        else:
            st.session_state[FLASH] = f"Granted {added:g} extra minutes."
            st.rerun()
    history = grant_history(board.store, attempt.id)
    _history_table("Time grant history", "No extra time granted on this attempt.", GRANT_HISTORY, {
        "When (UTC)": [_utc(g.granted_at) for g in history],
        "Who": [g.granted_by for g in history],
        "Minutes": [g.minutes for g in history],
        "Reason": [g.reason for g in history],
    })


def render_exports(board: Board) -> None:
    store, key, filters = board.store, board.key, board.filters
    stem = f"{filters.drill_id}_{filters.cohort or 'all'}"
    st.caption("Files are built when you click, from the filters above.")
    exports = {"answers": export_answers, "attempts": export_attempts}
    formats = {"CSV": (to_csv_bytes, "csv", "text/csv"),
               "Parquet": (to_parquet_bytes, "parquet", "application/octet-stream")}
    cols = iter(st.columns(len(exports) * len(formats)))
    for what, export in exports.items():
        for label, (encode, suffix, mime) in formats.items():
            next(cols).download_button(
                f"{what.capitalize()} ({label})",
                lambda export=export, encode=encode: encode(export(store, key, filters)),
                file_name=f"{stem}_{what}.{suffix}", mime=mime, key=keys.instructor_download(what, suffix),
                on_click="ignore")


def render_board(instructor: str, allowed: list[str] | None = None) -> None:
    """The board for the instructor named `instructor`, over the cohorts `allowed` (None: every cohort)."""
    store = get_store()
    message = st.session_state.pop(FLASH, None)
    if message:
        st.success(message, icon=":material/check_circle:")
    reads = BoardReads(store)   # the data version, and the filters' reads at it
    if (chosen := choose_filters(store, allowed, reads)) is None:
        return
    loaded, filters = chosen
    board = Board(store, loaded, filters, instructor, reads)
    roster.render_roster(board)   # for a class an LMS launched into: its learners who have not started
    if reads.date_bounds(filters.drill_id) is None:
        st.info("No attempts at this drill yet. Share the catalogue with your candidates, or fill a demo cohort "
                "to see a populated board:")
        st.code(DEMO_COMMAND, language="bash")
        return
    counts = render_counts(board)
    if counts.started == 0:
        widen = "pick All cohorts or widen the dates" if allowed is None else "pick another class or widen the dates"
        st.info(f"No attempts match these filters: {widen}.")
        return
    table = board.leaderboard()
    renderers = {
        "Leaderboard": lambda: render_leaderboard(board, table),
        "Skills": lambda: render_skills(board, table),
        "Questions": lambda: render_questions(board),
        "Items": lambda: instructor_items.render_items(board),
        "Time": lambda: (render_time(board), instructor_time.render_time_heatmap(board, table)),
        "Calibration": lambda: render_calibration(board, table),
        "Integrity": lambda: instructor_integrity.render_integrity(board),
        "Grader gap": lambda: instructor_gap.render_gap(board),
        "Attempt": lambda: render_attempt(board, table),
        "Across drills": lambda: instructor_across.render_across(board),
        "Exports": lambda: render_exports(board),
    }
    instructor_integrity.follow_timeline_link(board)
    # Keyed tabs that track their state: the rerun after saving an override or a grant keeps the open tab,
    # and only the open tab's reports are computed (picking another tab reruns the page to draw it).
    views = st.tabs(list(renderers), key=keys.INSTRUCTOR_VIEW, on_change="rerun")
    for tab, render in zip(views, renderers.values()):
        if tab.open:
            with tab:
                render()
