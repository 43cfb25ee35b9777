"""Reusable Streamlit pieces shared by the pages.

Widgets, fragments and Plotly figures; the only layer between pages and the domain."""
