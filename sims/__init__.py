"""SimPy models of the failures the drills talk about.

Each module exposes ``Params`` (frozen dataclass, checked in ``__post_init__``),
``run(params, seed) -> Result`` and ``summary(result) -> dict`` for the CLI.
"""
