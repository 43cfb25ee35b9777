"""Benchmarks that print figures (medians, p95, ratios against a same-run reference).

Run one with ``python -m bench.NAME``; none of them asserts on time.
"""
