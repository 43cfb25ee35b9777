"""The run pinned as A for a comparison: kept in the session and in the URL (?pin_<tab>=) as command words.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass

import streamlit as st

from drills.disclosure import seed_may_run
from sims.__main__ import parse_params, to_args
from ui import keys
from ui.sims.tab import SEED_MAX, SimTab
from ui.sims.visits import closed_seeds

K = keys.register("sim_pins", __name__)   # this module's keys (ui.keys holds only shared ones)
PARAM_PREFIX = K.kept("pin_")            # ?pin_<tab>= the run pinned as A: its settings, seed and guess


@dataclass(frozen=True)
class Pin:
    """The run pinned as A: its settings and seed, and the guess the reader locked for it."""

    params: object
    seed: int
    guess: float | None = None


def pin_param(name: str) -> str:
    return f"{PARAM_PREFIX}{name}"


def pin_text(pin: Pin) -> str:
    """A pin as the ``python -m sims`` words of its run, plus ``guess=`` when one was locked."""
    words = to_args(pin.params, pin.seed)
    if pin.guess is not None:
        words.append(f"guess={format(pin.guess, '.12g')}")
    return " ".join(words)


def pin_from_text(tab: SimTab, text: str) -> Pin | None:
    """The pin a link carries, or None when its words do not make a valid run of this tab's model."""
    guess: float | None = None
    words = []
    for word in text.split():
        if word.startswith("guess="):
            try:
                guess = float(word.removeprefix("guess="))
            except ValueError:
                return None
            if not (math.isfinite(guess) and tab.question.min_value <= guess <= tab.question.max_value):
                return None
        else:
            words.append(word)
    try:
        params, seed = parse_params(importlib.import_module(f"sims.{tab.model}").Params, words)
    except (ValueError, TypeError):
        return None
    if not (0 <= seed <= SEED_MAX and seed_may_run(seed, closed_seeds())):
        return None                 # a graded run's seed stays closed while its question is open
    return Pin(params, seed, guess)


def pinned(tab: SimTab) -> Pin | None:
    """The tab's pinned run A: this session's, or the one a link (a reload, a shared link) carries."""
    key = keys.SIM_PIN_PREFIX + tab.name
    pin = st.session_state.get(key)
    if isinstance(pin, Pin):    # pinned before a question about it opened: back once the question is locked
        return pin if seed_may_run(pin.seed, closed_seeds()) else None
    text = st.query_params.get(pin_param(tab.name))
    pin = None if text is None else pin_from_text(tab, text)
    if pin is None:
        st.query_params.pop(pin_param(tab.name), None)
        return None
    st.session_state[key] = pin
    return pin


def with_pin(query: dict[str, str], tab: SimTab) -> dict[str, str]:
    """The query plus the pinned run A, when there is one, so a shared link keeps the comparison."""
    pin = pinned(tab)
    return query if pin is None else {**query, pin_param(tab.name): pin_text(pin)}


def scenario_of(tab: SimTab) -> object:
    """The stock params of the tab's model, or the pinned run's when one is pinned: a page whose sliders cover
    only part of the model (the retry storm's) runs the rest as the pinned run had it, so a replay of a drawn
    drill's graded run is that run. Says so under the sliders when the scenario is not the stock one."""
    stock = importlib.import_module(f"sims.{tab.model}").Params()
    pin = pinned(tab)
    if pin is None or type(pin.params) is not type(stock) or pin.params == stock:
        return stock
    differ = [f"{name.replace('_', ' ')} {format(getattr(pin.params, name), 'g')}"
              for name in stock.__dataclass_fields__ if getattr(pin.params, name) != getattr(stock, name)]
    st.caption("The pinned run's own scenario, which this page has no slider for: " + "; ".join(differ) + ".")
    return pin.params
