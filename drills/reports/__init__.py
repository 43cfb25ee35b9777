"""Instructor reports over the attempt store, one module per seam; no Streamlit here.

source (the only store calls), grading_key, tallies, aggregates (the board's reports), exports, timeline.
"""
