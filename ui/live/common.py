"""What the live room's modules share: the room's key prefix, how often its pages look, a session's drill.

The console (ui.live.console), a seat (ui.live.seat), the join form (ui.live.join) and the sim page that follows
the room (ui.live.room) each name their own keys under the one prefix registered here.
"""
from __future__ import annotations

import streamlit as st

from drills.store.live import LiveSession
from sims.platform import SCENARIO_TITLES
from ui import keys
from ui.context import get_catalogue
from ui.sims.embed import platform_query

POLL_S = 0.5            # how often a page looks for a move: well inside the 1 s a closed question must take
# ...where the process's listener reruns the room's pages, beats for them, draws each pushed move once more, and
# pushes every page when it drops so each polls from then on (ui.live.push): the tick is a last resort. At 500
# seats the ticks were a third of a core at 5 s, and a quarter of the server's work during a Close at 8 s.
PUSHED_POLL_S = 30.0
WAITING_POLL_S = 2.0    # a candidate waiting for a session to start
ROOM_PARAM = "live"     # the room's link to its sim run carries the session, so a new tab follows the room too

K = keys.register("live", __name__)   # the room's keys, each named in the module that uses it
LIVE_ROOM = K("room")   # the live session this browser session sits in, for its sim pages to follow


def drill_of(session: LiveSession):
    """The session's drill as the catalogue loaded it."""
    return get_catalogue().drills[session.drill_id]


def question_of(loaded, session: LiveSession):
    """The question the session is on, None before the first opens."""
    return loaded.drill.question(session.question_id) if session.question_id else None


def scenario_link(session: LiveSession) -> None:
    """The break the instructor injected, and a link to its simulation run that follows the room."""
    if session.scenario in SCENARIO_TITLES:
        st.info(f"Your instructor injected a break into the platform simulation: "
                f"{SCENARIO_TITLES[session.scenario]}.", icon=":material/bolt:")
        st.page_link("pages/sim_platform.py", label="Open the simulation run", icon=":material/factory:",
                     query_params={**platform_query(session.scenario, {}), ROOM_PARAM: str(session.id)})
