"""Guess-then-play for the simulation pages: lock a guess, press Play, compare.

Reader guesses live in session state only (readers are not candidates); drill
embeds store theirs through the attempt store instead. A guess belongs to the
settings it was made for: move a slider and the page asks for a fresh one.
"""
from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Iterable

import plotly.graph_objects as go
import streamlit as st

from ui import keys
from ui.chart_notes import centre_note

K = keys.register("guess", __name__)   # this module's keys (ui.keys holds only shared ones)
PARAM_PREFIX = K.kept("guess_")          # ?guess_<tab>= carries a reader's locked sim guess in a shared link
FOR_PARAM_PREFIX = K.kept("guessfor_")   # ?guessfor_<tab>= the settings (digest) a linked guess was made for
STALE_PREFIX = K.kept("guess_stale::")   # a guess was dropped because the settings changed


def guess_key(name: str) -> str:
    """A reader's locked guess on one simulation tab."""
    return K.item(name)


def stale_key(name: str) -> str:
    return f"{STALE_PREFIX}{name}"


def reguess_key(name: str) -> str:
    """A simulation guess's "Guess again" button."""
    return f"reguess::{name}"


def play_key(name: str) -> str:
    """A simulation's "Play" button, enabled once its guess is locked."""
    return f"play::{name}"


def waiting_key(name: str) -> str:
    """The empty chart a simulation shows until Play is pressed."""
    return f"waiting::{name}"


ANIMATION_S = 2.4                      # a progressive draw: long enough to watch, short enough to wait for
MIN_FRAME_S = 0.12                     # below this the browser drops frames and the chart looks empty


def digest(*settings: object) -> str:
    """A short stable fingerprint of frozen params (their repr), used to scope a guess to them."""
    return hashlib.blake2b(repr(settings).encode(), digest_size=6).hexdigest()


def plural(count: float, word: str, many: str | None = None) -> str:
    """``1 call``, ``2 calls``: the count with the word in the form that reads naturally."""
    shown = f"{count:,.0f}" if float(count).is_integer() else f"{count:,g}"
    return f"{shown} {word if count == 1 else (many or word + 's')}"


def fmt_figure(value: float) -> str:
    """A simulated figure at the precision the page's text uses: 130, 62.5, 3.6, 0.05."""
    size = abs(value)
    text = f"{value:,.0f}" if size >= 100 else f"{value:,.1f}" if size >= 1 or size == 0 else f"{value:.2g}"
    return text[:-2] if text.endswith(".0") else text


def fmt_guess(value: float) -> str:
    """A reader's own number, shown as typed (no rounding away of what they entered)."""
    return f"{value:,.6g}"


def guess_param(name: str) -> str:
    """The query parameter that carries a locked guess in a shared link: ``guess_hot_shard.celebrity``."""
    return f"{PARAM_PREFIX}{name}"


def guess_for_param(name: str) -> str:
    """The query parameter naming the settings a linked guess was made for (their digest)."""
    return f"{FOR_PARAM_PREFIX}{name}"


def _from_link(name: str, scope: str, low: float, high: float) -> None:
    """Adopt a guess carried in the URL (a reload or a shared link) for the settings now shown.

    A guess belongs to the settings it was made for: a link whose digest (``guess_for_param``) names other
    settings, say the pinned run A's before B's were set, loses its guess here. A link with no digest keeps it.
    """
    raw = st.query_params.get(guess_param(name))
    made_for = st.query_params.get(guess_for_param(name))
    if made_for is not None and made_for != scope:
        st.query_params.pop(guess_param(name), None)
        st.query_params.pop(guess_for_param(name), None)
        st.session_state[stale_key(name)] = True     # the form says why it is empty
        return
    if raw is None or guess_key(name) in st.session_state:
        return
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and low <= value <= high:
        st.session_state[guess_key(name)] = (scope, value)
    else:
        st.query_params.pop(guess_param(name), None)


def _forget(name: str) -> None:
    st.session_state.pop(guess_key(name), None)
    st.session_state.pop(keys.played_key(name), None)
    st.query_params.pop(guess_param(name), None)
    st.query_params.pop(guess_for_param(name), None)


def _link_scope(name: str, scope: str, locked: float | None) -> None:
    """Keep the URL's digest beside its guess: the settings this guess was made for, or nothing without one."""
    if locked is None:
        st.query_params.pop(guess_for_param(name), None)
    elif scope and st.query_params.get(guess_for_param(name)) != scope:
        st.query_params[guess_for_param(name)] = scope


def _locked(name: str, scope: str) -> float | None:
    """The guess locked for these settings; a guess made for other settings is dropped with its Play."""
    stored = st.session_state.get(guess_key(name))
    if stored is None:
        return None
    if not (isinstance(stored, tuple) and stored[0] == scope):
        _forget(name)
        st.session_state[stale_key(name)] = True
        return None
    return float(stored[1])


def guess_lockin(name: str, label: str, unit: str, *, min_value: float, max_value: float,
                 step: float = 1.0, scope: str = "", in_url: bool = False) -> float | None:
    """Show a one-field form; return the locked guess, or None until the reader locks one.

    The field starts empty: a number already in the box would anchor the guess.

    ``scope`` is a digest of the settings the guess is about; when it changes the old guess
    (and its Play) no longer apply, so the form comes back with a note saying why. With
    ``in_url`` the locked guess also lives in the URL (``guess_param``), so a reload or a
    shared link brings it back for the settings the link carries.
    """
    if in_url:
        _from_link(name, scope, min_value, max_value)
    locked = _locked(name, scope)
    if in_url:
        _link_scope(name, scope, locked)
    if locked is not None:
        cols = st.columns([3, 1])
        cols[0].info(f"**{label}**  \nYour locked guess: **{fmt_guess(locked)} {unit}**")
        if cols[1].button("Guess again", key=reguess_key(name)):
            _forget(name)
            st.rerun()
        return locked
    if st.session_state.get(stale_key(name)):
        st.info("The settings changed, so your last guess no longer applies. Lock in a fresh guess for "
                "these settings, then press Play.")
    with st.form(f"guessform::{name}", border=True):
        value = st.number_input(f"{label} ({unit})", min_value=float(min_value),
                                max_value=float(max_value), value=None, step=float(step),
                                placeholder="your guess")
        if st.form_submit_button("Lock in my guess", type="primary"):
            if value is None or not math.isfinite(value):
                st.error("Type your guess first: a number between "
                         f"{fmt_guess(min_value)} and {fmt_guess(max_value)} {unit}.")
            else:
                st.session_state[guess_key(name)] = (scope, float(value))
                st.session_state.pop(stale_key(name), None)
                if in_url:
                    st.query_params[guess_param(name)] = format(float(value), ".12g")
                    _link_scope(name, scope, float(value))
                st.rerun()
    st.caption("Lock in a guess to unlock Play.")
    return None


def play_button(name: str, guess: float | None) -> bool:
    """Play is enabled only once a guess is locked; stays 'played' until the guess is reset."""
    if st.button("▶ Play", key=play_key(name), disabled=guess is None, type="primary"):
        st.session_state[keys.played_key(name)] = True
    return guess is not None and bool(st.session_state.get(keys.played_key(name)))


def waiting_chart(name: str, *, height: int = 260) -> None:
    """An empty frame where the run will be drawn: it holds no data, so it gives nothing away.

    It also makes the browser load Plotly before Play, so the first frames of the progressive
    draw are seen instead of being spent fetching the charting library.
    """
    fig = centre_note(go.Figure(), "Lock in a guess, then press ▶ Play to draw the run here.")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=10, b=10))
    st.plotly_chart(fig, width="stretch", key=waiting_key(name), config={"staticPlot": True})


def animate(frames: Iterable[go.Figure], *, total_s: float = ANIMATION_S, animate_now: bool = True,
            chart_key: str | None = None) -> None:
    """Draw a sequence of figures into one placeholder over about ``total_s``; the last one stays.

    When ``animate_now`` is false (a rerun after the first play) only the final frame is drawn.
    """
    placeholder = st.empty()
    frames = list(frames)
    if not frames:
        return
    shown = frames if animate_now else frames[-1:]
    delay_s = max(MIN_FRAME_S, total_s / max(1, len(shown) - 1))
    for i, fig in enumerate(shown):
        last = i == len(shown) - 1
        placeholder.plotly_chart(fig, width="stretch", key=chart_key if last else None)
        if not last:
            time.sleep(delay_s)


def off_unit(unit: str) -> str:
    """The unit of a difference: two percentages differ by (percentage) points, not by a percent.

    "points" rather than "percentage points" so the figure fits a metric column; the metric's
    help says it in full.
    """
    return "points" if unit.startswith("%") else unit


def _decimals(text: str) -> int:
    """Digits after the decimal point in a shown number (``1,234.5`` gives 1)."""
    return len(text.rpartition(".")[2]) if "." in text else 0


def shown_difference(guess: float, truth_text: str) -> str | None:
    """The gap between the guess and the truth *as shown*, at the finer of their two precisions.

    Reading the guess, the truth and the gap off the page, guess − truth = gap holds exactly: the
    truth is parsed back from its own text, so a "160" shown is never off by a hidden 159.8.
    None when the text is not a plain number (a custom formatter); the caller then uses the raw gap.
    """
    guess_text = fmt_guess(guess)
    try:
        shown_truth = float(truth_text.replace(",", ""))
    except ValueError:
        return None
    if "e" in guess_text.lower() or "e" in truth_text.lower():
        return fmt_guess(abs(guess - shown_truth))
    places = max(_decimals(guess_text), _decimals(truth_text))
    return f"{abs(round(guess - shown_truth, places)):,.{places}f}"


def guess_verdict(guess: float, truth: float, unit: str, *, tolerance_rel: float = 0.1,
                  format_truth: Callable[[float], str] | None = None) -> bool:
    """Show the guess beside the simulated truth; return whether it was within tolerance.

    Grading uses the exact truth; the "Off by" figure is the difference of the two numbers shown,
    so a reader can check it by subtraction.
    """
    fmt = format_truth or fmt_figure
    close = abs(guess - truth) <= tolerance_rel * max(abs(truth), 1e-9)
    truth_text = fmt(truth)
    off = guess - truth
    off_text = shown_difference(guess, truth_text) or fmt(abs(off))
    cols = st.columns(3)
    cols[0].metric("Your guess", f"{fmt_guess(guess)} {unit}")
    cols[1].metric("Simulation", f"{truth_text} {unit}")
    verdict = "within tolerance" if close else ("too high" if off > 0 else "too low")
    points = unit.startswith("%")
    cols[2].metric("Off by", f"{off_text} {off_unit(unit)}", delta=verdict,
                   help="Percentage points: your guess minus the simulated figure, both as shown." if points
                   else "Your guess minus the simulated figure, both as shown.",
                   delta_color="green" if close else "red",
                   delta_arrow="off" if close else ("up" if off > 0 else "down"))
    return close
