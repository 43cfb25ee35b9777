"""Download buttons for one board table, as CSV and Parquet, built only when the instructor clicks."""
from __future__ import annotations

from typing import Callable

import pandas as pd
import streamlit as st

from drills.reports.exports import to_csv_bytes, to_parquet_bytes
from ui import keys

FORMATS = {"CSV": (to_csv_bytes, "csv", "text/csv"),
           "Parquet": (to_parquet_bytes, "parquet", "application/octet-stream")}


def download_buttons(what: str, stem: str, build: Callable[[], pd.DataFrame], label: str) -> None:
    """`label (CSV)` and `label (Parquet)` side by side; `build` runs on the click, not on every run."""
    cols = st.columns([1] * len(FORMATS) + [1])
    for col, (name, (encode, suffix, mime)) in zip(cols, FORMATS.items()):
        col.download_button(f"{label} ({name})", lambda encode=encode: encode(build()),
                            file_name=f"{stem}_{what}.{suffix}", mime=mime,
                            key=keys.instructor_download(what, suffix), on_click="ignore")
