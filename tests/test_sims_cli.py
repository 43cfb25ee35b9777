"""Headless use of the three live models: ``python -m sims NAME ...`` and the drill presets.

Checks the JSON keys the issue names, the exit status for bad input, and preset evaluation.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sims import presets
from sims.__main__ import main as sims_main

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("hot_shard", "concurrency_pool", "retry_storm")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sims", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_concurrency_pool_prints_one_json_object():
    out = cli("concurrency_pool", "pool_size=10")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["fanout"] == {"rejected": 75, "makespan_s": 6.1, "peak_in_service": 5}
    assert set(data["pool"]) >= {"rejected", "makespan_s"}


def test_hot_shard_prints_the_named_keys():
    data = json.loads(cli("hot_shard", "shards=6").stdout)
    assert data["shards"] == 6
    assert {"hot_shard_load_pct", "fleet_utilisation_pct"} <= set(data)


def test_retry_storm_reads_booleans():
    data = json.loads(cli("retry_storm", "jitter=true", "seed=3").stdout)
    assert data["jitter"] is True
    assert data["peak_calls_per_s"] <= data["provider_limit_per_s"]


@pytest.mark.parametrize("args, message", [
    (("no_such_model",), "unknown model"),
    (("hot_shard", "colour=red"), "unknown parameter"),
    (("hot_shard", "shards=99"), "shards must be between"),
    (("concurrency_pool", "calls=lots"), "whole number"),
    (("retry_storm", "jitter=maybe"), "true or false"),
])
def test_bad_input_exits_2_with_one_line(args, message, capsys):
    assert sims_main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_models_are_listed_by_the_runner():
    from sims.__main__ import available_models
    assert set(MODELS) <= set(available_models())


@pytest.mark.parametrize("name", MODELS + ("stable_hash", "presets"))
def test_models_import_neither_streamlit_nor_plotly(name):
    tree = ast.parse((ROOT / "sims" / f"{name}.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"streamlit", "plotly"}


def test_presets_cover_the_issue_list():
    wanted = {"hot_shard.celebrity_4", "hot_shard.celebrity_6", "concurrency_pool.fanout_rejected",
              "concurrency_pool.pool10_rejected", "concurrency_pool.pool10_makespan",
              "retry_storm.no_jitter_peak"}
    assert wanted <= set(presets.PRESETS)
    for key, preset in presets.PRESETS.items():
        assert preset.id == key and preset.unit and preset.label
        assert key.split(".")[0] == preset.model


def test_presets_evaluate_to_the_brief_figures():
    assert presets.evaluate("hot_shard.celebrity_4", 1) == pytest.approx(153, abs=3)
    assert presets.evaluate("hot_shard.celebrity_6", 5) == pytest.approx(127, abs=3)
    assert presets.evaluate("concurrency_pool.fanout_rejected", 2) == 75
    assert presets.evaluate("concurrency_pool.pool10_rejected", 2) == pytest.approx(19, abs=1)
    assert presets.evaluate("concurrency_pool.pool10_makespan", 2) == pytest.approx(5.2, abs=0.2)
    assert presets.evaluate("retry_storm.no_jitter_peak", 2) >= 360


def test_preset_truth_follows_the_attempt_seed():
    values = {presets.evaluate("retry_storm.jitter_peak", seed) for seed in range(4)}
    assert len(values) > 1 and max(values) <= 50


def test_unknown_preset_and_bad_metric_paths():
    with pytest.raises(KeyError, match="unknown simulation preset"):
        presets.evaluate("nope", 1)
    with pytest.raises(KeyError):
        presets.metric_value({"fanout": {"rejected": 3}}, "fanout.makespan_s")
    with pytest.raises(TypeError):
        presets.metric_value({"jitter": True}, "jitter")
    assert presets.metric_value({"fanout": {"rejected": 3}}, "fanout.rejected") == 3.0
