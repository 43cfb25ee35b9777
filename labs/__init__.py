"""Runnable reference systems from the briefs.

No Streamlit here; each lab persists to DuckDB and is driven by pages through ui/."""
