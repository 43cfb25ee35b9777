"""Session-state and widget keys, in one place so pages and widgets never disagree on a name.

Widgets build per-item keys with the helpers below rather than ad-hoc f-strings; tests/test_architecture.py
fails on a key spelled anywhere else under app.py, pages/ or ui/.
"""
from __future__ import annotations

import datetime as dt

ATTEMPT_TOKEN = "attempt"                # also the ?attempt= query parameter
PART = "part"                            # ?part= query parameter: where the candidate is
PART_SELECT = "part_select"              # the drill page's part picker widget
HANDLE = "candidate_handle"              # the catalogue's "who are you" inputs
COHORT = "candidate_cohort"
HANDLE_PARAM = "handle"                  # ?handle= and ?cohort=: the catalogue's inputs survive a reload
COHORT_PARAM = "cohort"
MY_ATTEMPTS = "my_attempts"              # tokens started or resumed in this browser session
INSTRUCTOR_OK = "instructor_signed_in"
GUESS_PREFIX = "guess::"                 # reader guesses on simulation pages
PLAYED_PREFIX = "played::"               # which sim tabs have been played
GUESS_STALE_PREFIX = "guess_stale::"     # a guess was dropped because the settings changed
HOT_TENANT_LAB = "hot_tenant::lab"       # the reader's private hot-tenant lab (in-memory DuckDB)
HOT_TENANT_NOTE = "hot_tenant::note"     # outcome of the reader's last lab action
HOT_TENANT_READ = "hot_tenant::read"     # last latest-N read: (bounded page, naive page)
HOT_TENANT_RACE = "hot_tenant::race"     # last threaded owner race
HOT_TENANT_BURST = "ht_burst"            # hot-tenant lab: events in the next burst
HOT_TENANT_BUCKETS = "ht_buckets"        # hot-tenant lab: bucket count of the next routing version
HOT_TENANT_RETRY_N = "ht_retry_n"        # hot-tenant lab: how many of the oldest events to retry
HOT_TENANT_RETRY_ROUTE = "ht_retry_route"  # hot-tenant lab: route retries by first or current version
HOT_TENANT_PAGE_SIZE = "ht_limit"        # hot-tenant lab: events per latest-N page
HOT_TENANT_READ_CAP = "ht_cap"           # hot-tenant lab: bucket reads allowed at once
HOT_TENANT_BATCH = "ht_batch"            # hot-tenant lab: events per owner append
HOT_TENANT_RACE_CHART = "race_chart"     # hot-tenant lab: the stream after the threaded owner race
HOT_TENANT_BACKLOG_CHART = "ht_backlog"  # hot-tenant simulation: the replayed backlog chart
HOT_TENANT_TAB = "tab"                   # hot-tenant page's open tab, bound to ?tab= so a link can open one
SIM_TAB = "tab"                          # a simulation page's open tab, bound to ?tab= the same way
PLATFORM_SCENARIO = "platform_scenario"  # scenario picker on the platform simulation page
PLATFORM_PREFIX = "platform::"           # that page's switches and sliders, per scenario
EXTRA_MINUTES = "extra::minutes"         # instructor board: extra minutes as typed (drills.instructor_actions checks)
EXTRA_REASON = "extra::reason"           # instructor board: why the extra time was granted
INSTRUCTOR_VIEW = "instructor::view"     # instructor board: which section (tab) is open
PG_LAB_EXPERIMENT = "experiment"         # PostgreSQL lab's picker, and its ?experiment= query parameter
PG_LAB_LINKED = "pg_lab::linked"         # the ?experiment= value the picker last followed
PG_LAB_RESULTS = "pg_lab::results"       # PostgreSQL lab: {guess name: (settings digest, result)} of the last runs
PG_LAB_RERUN = "pg_lab::rerun"           # PostgreSQL lab: which experiment "Run again" asked to rerun
PG_LAB_OWNER_RACE = "pg_lab::owner_race" # last DuckDB-beside-PostgreSQL owner race (hot-tenant page)
FLASH = "flash"                          # a confirmation left for the next run to show once (in the page)
ATTEMPT_READS = "attempt_reads"          # this run's reads of attempts by token (ui.context.attempt_this_run)
RUBRIC_SAVED = "rubric_saved"            # the self-score form's confirmation, shown once under its button
CONFLICT = "conflict"                    # why the last lock-in or rating did not count (shown once)
RESULTS_VIEWED = "results_viewed"        # open attempts whose results page this session has logged
NEW_RESUME_CODE = "new_resume_code"      # a resume code just issued, handed once to RESUME_CODE_NOTE
HISTORY_HANDLE = "history_handle"        # the handle whose history this session has opened with its code
RESUME_CODE_NOTE = "resume_code_note"    # (handle, code) issued in this session, shown until it is noted
RESUME_CODE_NOTED = "resume_code_noted"  # drill page: "I have noted it" hides the resume code box
STORE_OUTAGE = "store_outage"            # the store failed under this session: the outage page until it answers
STORE_OUTAGE_FRESH = "store_outage_fresh"  # ... and it failed in this very run or the one before: no second ask
FRAME_RERUN = "frame_rerun"              # this session already reran an unframed page through app.py
SIM_VISITS = "sim_visits"                # sim pages already recorded as opened during this session's attempt
SIM_PIN_PREFIX = "sim_pin::"             # a simulation tab's run pinned as A for an A/B comparison
SIM_SPREAD_PREFIX = "sim_spread::"       # a simulation tab's last seed spread: its settings digest and figures
GUESS_PARAM_PREFIX = "guess_"            # ?guess_<tab>= carries a reader's locked sim guess in a shared link
GUESS_FOR_PARAM_PREFIX = "guessfor_"     # ?guessfor_<tab>= the settings (digest) a linked guess was made for
PIN_PARAM_PREFIX = "pin_"                # ?pin_<tab>= the run pinned as A: its settings, seed and guess


def guess_key(name: str) -> str:
    return f"{GUESS_PREFIX}{name}"


def played_key(name: str) -> str:
    return f"{PLAYED_PREFIX}{name}"


def guess_stale_key(name: str) -> str:
    return f"{GUESS_STALE_PREFIX}{name}"


def platform_key(scenario: str, name: str) -> str:
    """Per-scenario widget key, so picking a scenario starts from that scenario's settings."""
    return f"{PLATFORM_PREFIX}{scenario}::{name}"


# ---- catalogue, drill page, history ------------------------------------------------------------

FINISH_ANYWAY = "finish_anyway"                    # drill page: "Finish anyway" ticked with questions still open
HISTORY_HANDLE_INPUT = "history::handle"           # history sign-in form: the handle typed
HISTORY_CODE_INPUT = "history::code"               # history sign-in form: the resume code typed
HISTORY_SCORES_CHART = "history_scores"            # history: score per attempt over time
HISTORY_CALIBRATION_CHART = "history_calibration"  # history: how often the 80% ranges held
HISTORY_SKILLS_CHART = "history_skills"            # history: rubric level per skill over time


def start_button(drill_id: str) -> str:
    """The catalogue's "Start the clock" button of one drill."""
    return f"start_button::{drill_id}"


def scope_pick(drill_id: str) -> str:
    """The catalogue's picker of a shorter practice (essentials or one break) of one drill."""
    return f"scope_pick::{drill_id}"


def start_scope(drill_id: str) -> str:
    """The catalogue's "Start this practice" button of one drill's shorter practice."""
    return f"start_scope::{drill_id}"


def hot_tenant_acquire(owner: str) -> str:
    """The hot-tenant lab's "Acquire" button of one stream owner."""
    return f"ht_acq_{owner}"


def hot_tenant_take_over(owner: str) -> str:
    """The hot-tenant lab's "Take over" button of one stream owner."""
    return f"ht_take_{owner}"


def hot_tenant_append(owner: str) -> str:
    """The hot-tenant lab's "Append" button of one stream owner."""
    return f"ht_app_{owner}"


# ---- instructor board --------------------------------------------------------------------------

INSTRUCTOR_NAME = "instructor::name"                      # the signed-in instructor's name, stamped on overrides
INSTRUCTOR_FAILURES = "instructor::failures"              # wrong passphrases this session, counted in the error
INSTRUCTOR_SIGN_OUT = "instructor_sign_out"               # the instructor's "Sign out" button
INSTRUCTOR_DRILL = "instructor::drill"                    # board filter: which drill
INSTRUCTOR_COHORT = "instructor::cohort"                  # board filter: which cohort (or all)
INSTRUCTOR_DATES_PREFIX = "instructor::dates"             # board filter: start-date range, per drill and bounds
INSTRUCTOR_CANDIDATE = "instructor::candidate"            # attempt view: the candidate picked
INSTRUCTOR_ATTEMPT = "instructor::attempt"                # attempt view: the attempt picker before a candidate is
INSTRUCTOR_FLASH = "instructor::flash"                    # an override or grant confirmation shown once (toast)
INSTRUCTOR_LEADERBOARD = "leaderboard_table"              # leaderboard tab: one row per candidate
INSTRUCTOR_HEATMAP = "heatmap"                            # skills tab: level per candidate and skill
INSTRUCTOR_SHARES = "skill_shares_table"                  # skills tab: candidates at each level per skill
INSTRUCTOR_QUESTIONS_CHART = "questions_fig"              # questions tab: the cohort's guesses against the truth
TIME_CHART = "time_fig"                                   # minutes per part against pacing (results page and board)
INSTRUCTOR_CALIBRATION_SKILL_CHART = "calib_skill"        # calibration tab: how often 80% ranges held, per skill
INSTRUCTOR_CALIBRATION_PEOPLE_CHART = "calib_people"      # calibration tab: the spread of hit rates over people
INSTRUCTOR_TIMELINE = "timeline_table"                    # attempt view: the attempt's events in order
INSTRUCTOR_GUESS_CHART = "attempt_guess_fig"              # attempt view: the candidate's answers against the truth
INSTRUCTOR_RESULTS_TABLE = "attempt_results_table"        # attempt view: the candidate's graded answers
INSTRUCTOR_RUBRIC_TABLE = "rubric_now"                    # attempt view: the rubric level that counts per skill
OVERRIDE_SKILL = "override::skill"                        # override form: the skill rescored
OVERRIDE_LEVEL = "override::level"                        # override form: the level given
OVERRIDE_COMMENT = "override::comment"                    # override form: the comment shown to the candidate
OVERRIDE_HISTORY = "override_history"                     # attempt view: every instructor override so far
GRANT_HISTORY = "grant_history"                           # attempt view: every extra-time grant so far
# The board's item analysis, integrity, time, grader gap and replay tabs (issue 22).
ITEMS_ATTEMPTS = "instructor::items_attempts"             # items tab: first attempts or every finished attempt
ITEMS_VARIANTS = "instructor::items_variants"             # items tab: show a row per variant too
ITEMS_TABLE = "items_table"                               # items tab: one row per question (and variant)
ITEMS_ALPHA_TABLE = "items_alpha_table"                   # items tab: Cronbach's alpha per drill and scope
ITEMS_CHOICES_CHART = "items_choices_fig"                 # items tab: the share choosing each option
INTEGRITY_TABLE = "integrity_table"                       # integrity tab: one row per attempt
INTEGRITY_ONLY = "instructor::integrity_only"             # integrity tab: only attempts with something to look at
TIME_HEATMAP = "time_heatmap"                             # time tab: minutes per candidate and part
GAP_TABLE = "gap_table"                                   # grader gap tab: self against instructor per skill
GAP_CHART = "gap_fig"                                     # grader gap tab: the gap per skill
GAP_AGREEMENT_TABLE = "gap_agreement_table"               # grader gap tab: two instructors on one skill
GAP_PEOPLE_TABLE = "gap_people_table"                     # grader gap tab: self against instructor per candidate
GAP_APART_TABLE = "gap_apart_table"                       # grader gap tab: where two instructors disagree


def instructor_dates(drill_id: str, first: dt.date, last: dt.date) -> str:
    """Keyed by the bounds, so a new day of attempts widens the default range instead of hiding them."""
    return f"{INSTRUCTOR_DATES_PREFIX}::{drill_id}::{first}::{last}"


def instructor_attempt(candidate_id: int) -> str:
    """One attempt picker per candidate: a picker kept across candidates kept showing the old label."""
    return f"{INSTRUCTOR_ATTEMPT}::{int(candidate_id)}"


def instructor_download(what: str, suffix: str) -> str:
    """The exports tab's download button of one export (answers, attempts) in one format (csv, parquet)."""
    return f"dl_{what}_{suffix}"


# ---- results, rubric, guesses, PostgreSQL lab --------------------------------------------------

RESULTS_GUESS_CHART = "guess_fig"                         # results page: your numbers against the truth
RESULTS_TABLE = "results_table"                           # results page: every answer, graded
PG_LAB_OWNER_RACE_BUTTON = "pg_lab_owner_race_button"     # hot-tenant page: race the owners on both engines


def rubric_level(skill_id: str) -> str:
    """The end-of-drill self-score radio of one rubric skill."""
    return f"rubric::{skill_id}"


def reguess_button(name: str) -> str:
    """A simulation guess's "Guess again" button."""
    return f"reguess::{name}"


def play_button(name: str) -> str:
    """A simulation's "Play" button, enabled once its guess is locked."""
    return f"play::{name}"


def waiting_chart(name: str) -> str:
    """The empty chart a simulation shows until Play is pressed."""
    return f"waiting::{name}"


def pg_lab_slider(experiment: str, name: str) -> str:
    """One PostgreSQL-lab experiment's slider, so experiments sharing a setting name keep their own values."""
    return f"pg_lab::{experiment}::{name}"


def pg_lab_chart(name: str) -> str:
    """A PostgreSQL-lab experiment's chart."""
    return f"pg_lab_chart::{name}"


def pg_lab_race_chart(engine: str) -> str:
    """The owner race's stream chart on one engine (DuckDB or PostgreSQL)."""
    return f"pg_lab_race::{engine}"


def pg_lab_again(experiment: str) -> str:
    """A PostgreSQL-lab experiment's "Run again with the same settings" button."""
    return f"pg_lab_again::{experiment}"


# ---- simulation pages --------------------------------------------------------------------------

HOT_SHARD_GROWN_CHART = "hs_celeb_grown_chart"            # hot-shard celebrity tab: the load after adding shards
HOT_TENANT_SIM_PREFIX = "ht_sim"                          # hot-tenant partition sim's sliders, bound to ?ht_sim_*=


def sim_setting(prefix: str, name: str) -> str:
    """A simulation tab's setting (slider, seed, seeds to spread) under the tab's URL prefix.

    The key is also the setting's ?query= parameter, so a shared link restores it.
    """
    return f"{prefix}_{name}"


def sim_chart(tab_name: str) -> str:
    """A simulation tab's replayed run."""
    return f"chart::{tab_name}"


def sim_spread_button(tab_name: str) -> str:
    """A simulation tab's "Run N seeds" button."""
    return f"spread::{tab_name}"


def sim_spread_chart(tab_name: str) -> str:
    """A simulation tab's spread of the asked figure over seeds."""
    return f"spread-chart::{tab_name}"


def sim_pin_button(tab_name: str) -> str:
    """A simulation tab's "Pin this run as A" button."""
    return f"pin::{tab_name}"


def sim_unpin_button(tab_name: str) -> str:
    """A simulation tab's "Unpin A" button."""
    return f"unpin::{tab_name}"


def sim_ab_chart(tab_name: str) -> str:
    """A simulation tab's pinned run A beside the current run B."""
    return f"ab-chart::{tab_name}"


def sim_events_csv(tab_name: str) -> str:
    """A simulation tab's events download (CSV)."""
    return f"csv::{tab_name}"


def sim_summary_json(tab_name: str) -> str:
    """A simulation tab's settings-and-summary download (JSON)."""
    return f"json::{tab_name}"


def sim_embed_chart(preset_id: str) -> str:
    """The run a drill answer was graded against, embedded under its worked answer."""
    return f"embed::{preset_id}"


def platform_chart(index: int) -> str:
    """One of the platform simulation page's charts, by position."""
    return f"platform-chart-{index}"


# -- the drill page's lock-in forms, hints and reveal buttons ----------------------------------------
def lock_form(question_id: str) -> str:
    """A question's lock-in form; its fields are lock_field(question_id, 'value' | 'low' | 'high' | ...)."""
    return f"lock::{question_id}"


def lock_field(question_id: str, field: str) -> str:
    """One input of a lock-in form: value, low, high, choice, notes, or submit (the Lock in button)."""
    return f"lock::{question_id}::{field}"


def lock_outcome(question_id: str) -> str:
    """What the Lock in button's callback made of the press (stored, lost to another tab, refused), for the run."""
    return f"lock::{question_id}::outcome"


def note_rating(question_id: str) -> str:
    """The self-rating radio under a revealed notes question."""
    return f"rate::{question_id}"


def hint_button(question_id: str, index: int) -> str:
    """The button that opens a numeric question's hint number `index` (from 0)."""
    return f"hint::{question_id}::{index}"


def reveal_button(part_id: str, section: str) -> str:
    """A part's button that opens one worked-answer section (or 'followup')."""
    return f"reveal::{part_id}::{section}"


def skip_button(part_id: str, followup: bool = False) -> str:
    """The confirm button that skips a part's open questions (or its follow-up's)."""
    return f"{'skipf' if followup else 'skip'}::{part_id}"


# -- the spaced-review page ----------------------------------------------------------------------------
REVIEW_OUTCOME = "review::outcome"    # the review just answered, shown once above the next item
REVIEW_CHECK_AGAIN = "review::check_again"  # nothing due yet but soon: reruns the page to look again


def review_form(row_id: int) -> str:
    """The answer form of the due item whose latest row is `row_id` (a new row gets a new, empty form)."""
    return f"review::{row_id}"


def review_value(row_id: int) -> str:
    """The answer typed in that form."""
    return f"review::{row_id}::value"



# ---- accounts and classes (ui/identity.py, the catalogue's start form, the board's classes) -------------
ACCOUNT = "account"                      # the signed-in account (drills.accounts.Account) this session resolved
SIDEBAR_SIGN_IN = "sidebar::sign_in"     # the sidebar's Sign in button (a provider is configured)
SIDEBAR_SIGN_OUT = "sidebar::sign_out"
JOIN_PARAM = "join"                      # ?join=<code>: a class's join link
JOINED_CLASS = "joined_class"            # the class (cohort) this session joined or picked to practise in
JOIN_NAME = "join::name"                 # the display name typed when joining a class
HANDLE_CODE = "candidate_code"           # the catalogue: the resume code of a handle already in use
CLASS_PICK = "class_pick"                # the catalogue: which of the account's classes an attempt counts for
CLASS_TITLE = "classes::title"           # instructor board: a new class's name
CLASS_SIGN_IN = "classes::sign_in"       # instructor board: whether the new class requires sign-in
CLASS_INSTRUCTORS = "classes::instructors"  # instructor board: other instructors' e-mails for the new class
NEW_JOIN_LINK = "classes::new_link"      # instructor board: the join link just made (shown once)
HISTORY_ACCOUNT_SIGN_IN = "history::account_sign_in"  # My history / review: Sign in with the provider
HISTORY_COHORT_INPUT = "history::cohort"  # history sign-in form: the cohort of the handle typed
JOIN_SIGN_IN = "join::sign_in"           # the catalogue: Sign in to join a class (a join link was opened)
CATALOGUE_SIGN_IN = "catalogue::sign_in"  # the catalogue: Sign in with the provider
INSTRUCTOR_ACCOUNT_SIGN_IN = "instructor::account_sign_in"  # the board: Sign in with the provider


def class_renew(cohort: str) -> str:
    """Instructor board: a class's "New join link" button."""
    return f"classes::renew::{cohort}"


# ---- the live room (ui/live.py) ---------------------------------------------------------------------------
LIVE_ROLE = "live::role"                 # the live page: taking part, or running the room (instructors)
LIVE_CLASS = "live::class"               # a signed-in candidate's pick among their classes
LIVE_HANDLE = "live::handle"             # without a provider: the handle, cohort and resume code typed to join
LIVE_COHORT = "live::cohort"
LIVE_CODE = "live::code"
LIVE_CANDIDATE = "live::candidate"       # the anonymous candidate row this session proved (drills.records.Candidate)
LIVE_NEW_CODE = "live::new_code"         # a resume code just issued to that handle, shown once
LIVE_SEEN = "live::seen"                 # the room's version the last full run drew: a change reruns the page
LIVE_REPORTED = "live::reported"         # (session, question) lock-ins this session has told the room of
LIVE_CONSOLE_CLASS = "live::console_class"  # the instructor's class picker
LIVE_DRILL = "live::drill"               # the drill or single break a new live session runs
LIVE_SCENARIO = "live::scenario"         # the platform-sim break the instructor may inject
LIVE_NOTE = "live::note"                 # why the instructor's last press was refused (shown once)
LIVE_BEAT = "live::beat"                 # when this page last told the store its seat is still here (store clock)
LIVE_ROOM = "live::room"                 # the live session this browser session sits in, for its sim pages to follow
LIVE_SIM_FOLLOWED = "live::sim_followed"  # (session, scenario) the platform sim page last switched to


def live_move(action: str) -> str:
    """The instructor console's button for one move of the room (next, close, reveal, end, inject)."""
    return f"live::move::{action}"


def live_chart(question_id: str) -> str:
    """The room's distribution chart of one question."""
    return f"live::chart::{question_id}"
