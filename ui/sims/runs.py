"""A tab's runs, cached per (params, seed), and the run's files to download (events CSV, summary JSON).
"""
from __future__ import annotations

import importlib

import streamlit as st

from sims import export
from ui import keys
from ui.sims.tab import SimTab

K = keys.register("sim_runs", __name__)   # this module's keys (ui.keys holds only shared ones)


def events_csv(tab_name: str) -> str:
    """A simulation tab's events download (CSV)."""
    return f"csv::{tab_name}"


def summary_json(tab_name: str) -> str:
    """A simulation tab's settings-and-summary download (JSON)."""
    return f"json::{tab_name}"


HEAVY_MODELS = frozenset({"platform"})        # about 2 MB a cached run; the others about 0.2 MB


@st.cache_data(max_entries=400, show_spinner=False)
def _run_light(model: str, params: object, seed: int):
    return importlib.import_module(f"sims.{model}").run(params, seed)


@st.cache_data(max_entries=48, show_spinner=False)
def _run_heavy(model: str, params: object, seed: int):
    return importlib.import_module(f"sims.{model}").run(params, seed)


def cached_run(model: str, params: object, seed: int = 1):
    """Run ``sims.<model>`` once per (params, seed); params are frozen, so they hash.

    Two caches so a few seed spreads of the big platform model cannot push memory past ~100 MB.
    """
    return (_run_heavy if model in HEAVY_MODELS else _run_light)(model, params, seed)


@st.cache_data(max_entries=64, show_spinner=False)
def _files(model: str, params: object, seed: int) -> tuple[str, str]:
    module = importlib.import_module(f"sims.{model}")
    result = cached_run(model, params, seed)
    return export.events_csv(model, result), export.summary_json(model, result, module.summary(result))


def download_panel(tab: SimTab, params: object, seed: int) -> None:
    events, summary = _files(tab.model, params, seed)
    stem = f"{tab.name.replace('.', '-')}-seed{seed}"
    left, right = st.columns(2)
    left.download_button("Events (CSV)", events, file_name=f"{stem}-events.csv", mime="text/csv",
                         key=events_csv(tab.name), width="stretch", icon=":material/download:")
    right.download_button("Settings and summary (JSON)", summary, file_name=f"{stem}-summary.json",
                          mime="application/json", key=summary_json(tab.name), width="stretch",
                          icon=":material/download:")
