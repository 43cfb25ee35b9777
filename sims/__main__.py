"""Headless runner: ``python -m sims NAME [param=value ...]`` prints one JSON object.

Any model module under ``sims/`` that exposes ``Params``, ``run`` and ``summary`` is runnable.
Bad names, parameters or values exit with status 2 and a one-line message on stderr.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import pkgutil
import sys
import typing

import sims

SEED_KEY = "seed"


def available_models() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(sims.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"sims.{info.name}")
        if all(hasattr(mod, attr) for attr in ("Params", "run", "summary")):
            names.append(info.name)
    return sorted(names)


def _convert(raw: str, kind: type, name: str):
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered in ("true", "1", "yes", "on"):
            return True
        if lowered in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{name} must be true or false, got {raw!r}")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if kind is float:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{name} must be a number, got {raw!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} must be a finite number, got {raw!r}")
        return value
    return raw


def parse_params(params_cls: type, pairs: list[str]) -> tuple[object, int]:
    """Turn ``key=value`` words into a Params instance and a seed."""
    hints = typing.get_type_hints(params_cls)
    fields = {f.name for f in dataclasses.fields(params_cls)}
    values: dict[str, object] = {}
    seed = 1
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"expected name=value, got {pair!r}")
        key, raw = pair.split("=", 1)
        if key == SEED_KEY:
            seed = _convert(raw, int, SEED_KEY)
            continue
        if key not in fields:
            raise ValueError(f"unknown parameter {key!r}; known: {', '.join(sorted(fields))}")
        values[key] = _convert(raw, hints.get(key, str), key)
    return params_cls(**values), seed


def _word(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def to_args(params: object, seed: int) -> list[str]:
    """The ``name=value`` words that rebuild ``params`` (fields left at their default are left out).

    ``parse_params(type(params), to_args(params, seed))`` gives back ``(params, seed)``. A model
    whose params start from a scenario is compared with that scenario's own values.
    """
    cls = type(params)
    base = cls(scenario=params.scenario) if hasattr(params, "scenario") else cls()
    words = [f"scenario={params.scenario}"] if hasattr(params, "scenario") else []
    for field in dataclasses.fields(cls):
        value = getattr(params, field.name)
        if field.name != "scenario" and value != getattr(base, field.name):
            words.append(f"{field.name}={_word(value)}")
    return words + [f"{SEED_KEY}={seed}"]


def command(model: str, params: object, seed: int) -> str:
    """The shell command that reruns this exact simulation and prints its summary."""
    return " ".join(["python -m sims", model, *to_args(params, seed)])


def main(argv: list[str]) -> int:
    models = available_models()
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: python -m sims NAME [param=value ...]  (models: {', '.join(models)})")
        return 0 if argv else 2
    name, pairs = argv[0], argv[1:]
    if name not in models:
        print(f"error: unknown model {name!r}; choose one of: {', '.join(models)}", file=sys.stderr)
        return 2
    mod = importlib.import_module(f"sims.{name}")
    try:
        params, seed = parse_params(mod.Params, pairs)
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        result = mod.run(params, seed)
    except ValueError as exc:            # an event budget met inside the run (sims._budget)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(mod.summary(result), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
