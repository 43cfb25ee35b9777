"""Session-state and widget keys: the registry of each module's own key prefix, and the keys modules share.

A key one module uses lives in that module, under a prefix it registers once:

    K = keys.register("history", __name__)
    HANDLE_INPUT = K("handle")              # "history::handle"
    SCORES_CHART = K.kept("history_scores")  # a value older than its prefix, kept for links and tests

A prefix registered by a second module, or a key value another module already made, raises at import, so
two modules cannot share a key by accident (as two constants both "tab" once did). Keys read or written by
more than one module stay below, each named once. tests/test_architecture.py fails on a key spelled inline
anywhere under app.py, pages/ or ui/.
"""
from __future__ import annotations


_PREFIXES: dict[str, str] = {}   # prefix -> the module that registered it
_MADE: dict[str, str] = {}       # every key value made through a prefix -> the module that made it


class KeyPrefix:
    """One module's key space: `K("name", ...)` spells "<prefix>::name::..."; `K.kept(value)` records a
    value that predates the prefix (a query parameter, a test's or a browser test's st-key- selector)."""

    def __init__(self, prefix: str, owner: str):
        self.prefix, self.owner = prefix, owner

    def __call__(self, *parts: object) -> str:
        return self._record("::".join((self.prefix, *map(str, parts))))

    def kept(self, value: str) -> str:
        return self._record(value)

    def item(self, *parts: object) -> str:
        """A per-item key (a question's form, a drill's button), not recorded: its parts come at run time."""
        return "::".join((self.prefix, *map(str, parts)))

    def _record(self, value: str) -> str:
        if value in _SHARED:
            raise ValueError(f"key {value!r} of {self.owner} is a shared key in ui.keys")
        if _MADE.setdefault(value, self.owner) != self.owner:
            raise ValueError(f"key {value!r} of {self.owner} is already {_MADE[value]}'s")
        return value


def register(prefix: str, owner: str) -> KeyPrefix:
    """Reserve `prefix` for the module `owner` (its __name__); a prefix another module holds raises.

    Registering again from the same module (Streamlit reloading it after an edit) is allowed.
    """
    if not prefix or "::" in prefix:
        raise ValueError(f"a key prefix is one word: {prefix!r}")
    if _PREFIXES.setdefault(prefix, owner) != owner:
        raise ValueError(f"key prefix {prefix!r} is already registered by {_PREFIXES[prefix]}")
    return KeyPrefix(prefix, owner)


# ---- keys more than one module reads or writes -----------------------------------------------------

ATTEMPT_TOKEN = "attempt"                # also the ?attempt= query parameter
PART = "part"                            # ?part= query parameter: where the candidate is
PART_SELECT = "part_select"              # the drill page's part picker widget
MY_ATTEMPTS = "my_attempts"              # tokens started or resumed in this browser session
HISTORY_HANDLE = "history_handle"        # the handle whose history this session has opened with its code
NEW_RESUME_CODE = "new_resume_code"      # a resume code just issued, handed once to ui.drill.history.RESUME_CODE_NOTE
CONFLICT = "conflict"                    # why the last lock-in or rating did not count (shown once)
JOIN_PARAM = "join"                      # ?join=<code>: a class's join link
JOIN_SIGN_IN = "join::sign_in"           # the catalogue: Sign in to join a class (a join link was opened)
INSTRUCTOR_OK = "instructor_signed_in"
INSTRUCTOR_NAME = "instructor::name"     # the signed-in instructor's name, stamped on overrides
INSTRUCTOR_VIEW = "instructor::view"     # instructor board: which section (tab) is open
INSTRUCTOR_CANDIDATE = "instructor::candidate"  # attempt view: the candidate picked
INSTRUCTOR_ATTEMPT = "instructor::attempt"  # attempt view: the attempt picker before a candidate is
TIME_CHART = "time_fig"                  # minutes per part against pacing (results page and board)
TAB = "tab"                              # a page's open tab (hot tenant, hot shard, retry storm), bound to
#                                          ?tab= so a link can open one; one key, since one page shows at a time
PLATFORM_SCENARIO = "platform_scenario"  # scenario picker on the platform simulation page
PLATFORM_PREFIX = "platform::"           # that page's switches and sliders, per scenario
PLAYED_PREFIX = "played::"               # which sim tabs have been played
SIM_PIN_PREFIX = "sim_pin::"             # a simulation tab's run pinned as A for an A/B comparison
HOT_TENANT_SIM_PREFIX = "ht_sim"         # hot-tenant partition sim's sliders, bound to ?ht_sim_*=


def played_key(name: str) -> str:
    return f"{PLAYED_PREFIX}{name}"


def platform_key(scenario: str, name: str) -> str:
    """Per-scenario widget key, so picking a scenario starts from that scenario's settings."""
    return f"{PLATFORM_PREFIX}{scenario}::{name}"


def sim_setting(prefix: str, name: str) -> str:
    """A simulation tab's setting (slider, seed, seeds to spread) under the tab's URL prefix.

    The key is also the setting's ?query= parameter, so a shared link restores it.
    """
    return f"{prefix}_{name}"


def instructor_attempt(candidate_id: int) -> str:
    """One attempt picker per candidate: a picker kept across candidates kept showing the old label."""
    return f"{INSTRUCTOR_ATTEMPT}::{int(candidate_id)}"


def instructor_download(what: str, suffix: str) -> str:
    """The exports tab's download button of one export (answers, attempts) in one format (csv, parquet)."""
    return f"dl_{what}_{suffix}"


# ---- pages' keys: a page is a script Streamlit runs as __main__, not a module that can own a prefix --------

FINISH_ANYWAY = "finish_anyway"          # drill page: "Finish anyway" ticked with questions still open


def start_button(drill_id: str) -> str:
    """The catalogue's "Start the clock" button of one drill."""
    return f"start_button::{drill_id}"


def scope_pick(drill_id: str) -> str:
    """The catalogue's picker of a shorter practice (essentials or one break) of one drill."""
    return f"scope_pick::{drill_id}"


def start_scope(drill_id: str) -> str:
    """The catalogue's "Start this practice" button of one drill's shorter practice."""
    return f"start_scope::{drill_id}"


# ---- read or written by two modules: the lock-in's outcome (ui.drill.lockin writes it, ui.live.seat reads it for the
# room) and the store outage (ui.context sets it, ui.drill.reveal's fragment leaves it to a whole run).

STORE_OUTAGE = "store_outage"            # the store failed under this session: the outage page until it answers


def lock_outcome(question_id: str) -> str:
    """What the Lock in button's callback made of the press (stored, lost to another tab, refused), for the run."""
    return f"lock::{question_id}::outcome"


# Every shared value above, once: a module's own key may not take one (KeyPrefix._record).
_SHARED = frozenset(value for name, value in dict(globals()).items()
                    if name.isupper() and not name.startswith("_") and isinstance(value, str))
