"""The content rules at load time and through `python -m drills.check`: every error of a file, each with its line.

Broken drills are written as variants of one_tenant (or from scratch, when small is the point) into a scratch folder.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from drills import check
from drills.loader import CONTENT_DIR, load_catalogue, load_drill
from sims import partitions, presets

ROOT = Path(__file__).resolve().parent.parent
SOURCE = CONTENT_DIR / "one_tenant.yaml"
TEMPLATE = CONTENT_DIR / "_template.yaml"

# Fifteen lines an author might write first: the time box is 30 minutes but the parts take 10, and the
# rubric's second skill is never evidenced by a question. Both used to load without a word.
TINY = """\
id: tiny
title: A tiny drill
summary: Small enough to read at a glance.
time_box_min: 30
givens:
  - {name: rate, value: 5, unit: jobs/s, vary: {low: 2, high: 1001, step: 1}}
parts:
  - id: only
    title: The only part
    kind: break
    minutes: 10
    body: "Jobs arrive at {rate} a second."
    questions:
      - {id: per_min, kind: numeric, prompt: "Per minute?", unit: jobs, answer: rate * 60, tolerance: {kind: relative, value: 0.1}, skills: [sizing]}
rubric:
  - {id: sizing, name: Sizing, strong: Works it out, ok: Gets there, weak: Guesses}
  - {id: pacing, name: Pacing, strong: Keeps time, ok: Mostly, weak: Runs over}
verdict: {strong_needed: 1, pass_message: Well done., short_message: Not yet.}
"""


@pytest.fixture
def content(tmp_path) -> Path:
    shutil.copy(SOURCE, tmp_path / SOURCE.name)
    return tmp_path


def _variant(folder: Path, name: str, mutate) -> Path:
    data = yaml.safe_load(SOURCE.read_text())
    data["id"] = name
    mutate(data)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
    return path


def _errors_for(folder: Path, file: str) -> list:
    catalogue = load_catalogue(folder)
    assert "one_tenant" in catalogue.drills, "the good drill must still load beside a broken one"
    assert file.removesuffix(".yaml") not in catalogue.drills
    return [e for e in catalogue.errors if e.file == file]


def _line_of(path: Path, line: int) -> str:
    return path.read_text().splitlines()[line - 1]


def test_an_unknown_simulation_preset_is_refused_at_load_time_with_its_line(content):
    def mutate(data):
        part = next(p for p in data["parts"] if p["id"] == "break1")
        question = next(q for q in part["followup"]["questions"] if q.get("sim"))
        question["sim"] = "hot_shard.no_such_run"
    path = _variant(content, "bad_preset", mutate)
    [error] = _errors_for(content, "bad_preset.yaml")
    assert error.path.endswith(".sim") and "followup.questions" in error.path
    assert "unknown simulation preset 'hot_shard.no_such_run'" in error.message
    assert "hot_shard.celebrity_4" in error.message, "the message lists the presets that exist"
    assert "sim: hot_shard.no_such_run" in _line_of(path, error.line)


def test_a_small_drill_breaking_pacing_and_skills_is_refused_with_both_errors(content):
    (content / "tiny.yaml").write_text(TINY)
    errors = _errors_for(content, "tiny.yaml")
    by_path = {e.path: e for e in errors}
    assert set(by_path) == {"time_box_min", "rubric[1](pacing)"}
    assert "10" in by_path["time_box_min"].message and "30" in by_path["time_box_min"].message
    assert by_path["time_box_min"].line == 4
    assert "pacing" in by_path["rubric[1](pacing)"].message and by_path["rubric[1](pacing)"].line == 17


def test_a_single_break_clock_longer_than_the_whole_drill_is_refused(content):
    (content / "tiny.yaml").write_text(TINY.replace("time_box_min: 30\n", "time_box_min: 10\nbreak_time_box_min: 45\n")
                                       .replace("  - {id: pacing, name: Pacing, strong: Keeps time, ok: Mostly, "
                                                "weak: Runs over}\n", ""))
    errors = _errors_for(content, "tiny.yaml")
    assert [(e.path, e.line) for e in errors] == [("break_time_box_min", 5)]
    assert "45" in errors[0].message and "10" in errors[0].message


def test_every_schema_error_is_listed_not_only_the_first(content):
    def mutate(data):
        data["parts"][1]["questions"][0]["colour"] = "red"
        data["parts"][2]["minutes"] = "soon"
        data["rubric"][0]["stronk"] = "typo"
    path = _variant(content, "three_faults", mutate)
    errors = _errors_for(content, "three_faults.yaml")
    assert len(errors) == 3
    paths = " ".join(e.path for e in errors)
    assert "colour" in paths and "minutes" in paths and "stronk" in paths
    for error in errors:
        key = error.path.rsplit(".", 1)[-1]
        assert _line_of(path, error.line).strip().lstrip("- ").startswith(key + ":"), error


def test_every_cross_reference_error_is_listed_with_its_own_line(content):
    def mutate(data):
        data["parts"][1]["questions"][0]["skills"] = ["juggling"]
        data["parts"][3]["questions"][0]["skills"] = ["knitting"]
    _variant(content, "two_skills", mutate)
    errors = _errors_for(content, "two_skills.yaml")
    unknown = [e for e in errors if "unknown skill" in e.message]
    assert len(unknown) == 2
    assert {"juggling", "knitting"} == {e.message.split("'")[1] for e in unknown}
    assert len({e.line for e in unknown}) == 2


def test_a_figure_typed_into_a_worked_answer_is_refused(content):
    def mutate(data):
        part = next(p for p in data["parts"] if p["id"] == "break1")
        part["reveal"][0]["text"] += "\n\nThat is 3,750 jobs an hour."
    _variant(content, "typed", mutate)
    [error] = _errors_for(content, "typed.yaml")
    assert error.path.startswith("parts[") and error.path.endswith(".text")
    assert "3,750" in error.message and "{placeholder}" in error.message


def test_a_right_option_much_longer_than_the_others_is_refused(content):
    def mutate(data):
        question = next(q for q in data["parts"][3]["questions"] if q["kind"] == "choice")
        for option in question["options"]:
            if option["id"] == question["answer"]:
                option["text"] += " and, to be thorough, explain the reasons at considerable length"
    _variant(content, "long_right", mutate)
    errors = _errors_for(content, "long_right.yaml")
    assert errors and all(e.path.endswith(".options") for e in errors)
    assert any("right option has" in e.message for e in errors)


def test_an_unknown_placeholder_is_named(content):
    def mutate(data):
        data["parts"][3]["body"] += " {no_such_value}"
    _variant(content, "bad_name", mutate)
    [error] = _errors_for(content, "bad_name.yaml")
    assert "{no_such_value}" in error.message


def test_the_template_passes_every_rule_and_is_not_listed_in_the_catalogue(content):
    assert load_drill(TEMPLATE).drill.id == "template"
    shutil.copy(TEMPLATE, content / TEMPLATE.name)
    catalogue = load_catalogue(content)
    assert catalogue.errors == ()
    assert list(catalogue.drills) == ["one_tenant"]


def test_the_check_lists_every_error_as_file_line_path_message_and_exits_1(content, capsys):
    tiny = content / "tiny.yaml"
    tiny.write_text(TINY)
    assert check.main([str(tiny), str(content / "one_tenant.yaml")]) == 1
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines == [f"{tiny}:4: time_box_min: " + lines[0].split(": ", 2)[2],
                     f"{tiny}:17: rubric[1](pacing): " + lines[1].split(": ", 2)[2]]
    assert "2 problems in 1 of 2 files" in out.err


def test_the_check_passes_the_shipped_drills_and_the_template(capsys):
    assert check.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and "no problems" in out[0]
    assert out[0].startswith(f"{len(list(CONTENT_DIR.glob('*.yaml')))} drill files checked")


def test_the_check_runs_as_a_module_on_the_template():
    done = subprocess.run([sys.executable, "-m", "drills.check", "drills/content/_template.yaml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "1 drill file checked, no problems"


def test_the_schema_file_is_written_as_committed(tmp_path, monkeypatch, capsys):
    assert json.loads(check.schema_text()) == json.loads((CONTENT_DIR.parent / "schema.json").read_text())
    target = tmp_path / "schema.json"
    monkeypatch.setattr(check, "SCHEMA_FILE", target)
    assert check.main(["--write-schema", str(TEMPLATE)]) == 0
    assert target.read_text() == check.schema_text()


def test_a_formula_answer_below_zero_is_refused_since_no_candidate_can_lock_it_in(content):
    def mutate(data):
        data["parts"][1]["questions"][1]["answer"] = "-(peak_rate * job_seconds)"
    path = _variant(content, "negative", mutate)
    errors = _errors_for(content, "negative.yaml")
    [error] = [e for e in errors if e.path.endswith(".answer")]
    assert "below zero" in error.message
    assert "answer:" in _line_of(path, error.line)


def test_names_and_ids_used_twice_are_each_listed_where_they_repeat(content):
    def mutate(data):
        data["givens"].append(dict(data["givens"][0]))
        data["parts"][3]["questions"][0]["id"] = data["parts"][1]["questions"][0]["id"]
    path = _variant(content, "twice", mutate)
    errors = _errors_for(content, "twice.yaml")
    messages = " | ".join(e.message for e in errors)
    assert "defined twice" in messages and "used twice" in messages
    for error in errors:
        assert error.path.endswith((".name", ".id")) and error.line > 1
        assert _line_of(path, error.line).strip().lstrip("- {").startswith(error.path.rsplit(".", 1)[-1])


# -- simulation runs hold to the drill's numbers -----------------------------------------------------
# The hot tenant's rate varies, and the question is graded by a replay run. Until the preset reads the
# rate, a retake would read 225 or 275 units/s and be graded against a run of 250.
HARD_CODED = """\
id: hard_coded
title: A replay graded by a simulation
summary: The hot tenant's rate varies between attempts.
time_box_min: 10
givens:
  - {name: hot_rate, value: 250, unit: units/s, vary: {low: 200, high: 300, step: 0.1}}
parts:
  - id: only
    title: The only part
    kind: break
    minutes: 10
    body: "The hot tenant writes {hot_rate:.1f} units/s."
    questions:
      - {id: drain, kind: numeric, prompt: "Seconds to replay?", unit: s, sim: test.replay, tolerance: {kind: relative, value: 0.2}, skills: [sizing]}
rubric:
  - {id: sizing, name: Sizing, strong: Works it out, ok: Gets there, weak: Guesses}
verdict: {strong_needed: 1, pass_message: Well done., short_message: Not yet.}
"""


def _replay_preset(**changes):
    """A replay preset whose run states the hot rate (and nothing else of the drill above)."""
    own = dict.fromkeys(("partitions", "partition_capacity", "buckets", "pending", "horizon_s"))
    preset = presets.SimPreset("test.replay", "partitions", partitions.Params(buckets=4), "replay_drain_s", "s",
                       "Seconds to replay", mirrors=own | {"hot_rate": "hot_rate"})
    return replace(preset, **changes)


def _check(path: Path, capsys) -> list[str]:
    check.main([str(path)])
    return capsys.readouterr().out.splitlines()


def test_a_varying_given_that_a_simulation_hard_codes_is_refused_until_the_preset_reads_it(tmp_path, monkeypatch,
                                                                                          capsys):
    path = tmp_path / "hard_coded.yaml"
    path.write_text(HARD_CODED)
    monkeypatch.setitem(presets.PRESETS, "test.replay", _replay_preset())
    [line] = _check(path, capsys)
    assert line.startswith(f"{path}:6: givens[0](hot_rate).vary: in draw "), line
    assert "'test.replay' (graded question drain) still runs hot_rate=250 where this drill's hot_rate gives" in line
    assert "add hot_rate" in line and "to the preset's inputs in sims/presets.py" in line
    assert "or stop varying hot_rate" in line

    # A build that takes the rate but leaves it out of the run is no better.
    monkeypatch.setitem(presets.PRESETS, "test.replay", _replay_preset(
        inputs=("hot_rate",), build=lambda hot_rate: partitions.Params(buckets=4)))
    [line] = _check(path, capsys)
    assert ".sim: in draw " in line and "must carry its inputs (hot_rate) into hot_rate" in line

    monkeypatch.setitem(presets.PRESETS, "test.replay", _replay_preset(
        inputs=("hot_rate",), build=lambda hot_rate: partitions.Params(buckets=4, hot_rate=hot_rate)))
    assert _check(path, capsys) == ["1 drill file checked, no problems"]


def test_a_preset_must_say_what_each_number_of_its_run_stands_for(tmp_path, monkeypatch, capsys):
    path = tmp_path / "hard_coded.yaml"
    path.write_text(HARD_CODED)
    # Without `mirrors` nothing would tie the run's 250 to the drill's hot_rate: the check asks for it.
    monkeypatch.setitem(presets.PRESETS, "test.replay", _replay_preset(mirrors=None))
    [line] = [out for out in _check(path, capsys) if ".sim: " in out]   # the runs read no given: also said
    assert "questions[0](drain).sim: simulation preset 'test.replay'" in line
    assert "does not say what its partitions, partition_capacity, hot_rate, buckets, pending, horizon_s" in line
    assert "`mirrors`" in line
    monkeypatch.setitem(presets.PRESETS, "test.replay", _replay_preset(inputs=("hot_rate", "pending")))
    [line] = [out for out in _check(path, capsys) if ".sim: " in out]   # the runs read no given: also said
    assert "is built from pending, which this drill does not define" in line


def _vary_given(name: str, vary: dict):
    def mutate(data):
        next(g for g in data["givens"] if g["name"] == name)["vary"] = vary
    return mutate


def test_varying_a_given_a_run_hard_codes_is_refused_at_the_given(content):
    # The tenant-group run follows the fleet and the storm but keeps its 4 groups, the stock run of the
    # celebrity sim too: drawing the number of hash groups would grade against runs of another fleet.
    path = _variant(content, "groups_vary", _vary_given("hash_groups", {"choices": [4, 5]}))
    errors = _errors_for(content, "groups_vary.yaml")
    assert {e.message.split("'")[1] for e in errors} == {"hot_shard.tenant_groups", "hot_shard.celebrity_4"}
    for error in errors:
        assert error.path.endswith("(hash_groups).vary")
        assert _line_of(path, error.line).strip() == "vary:"
        assert "still runs " in error.message and "where this drill's " in error.message
    assert any("still runs shards=4 where this drill's hash_groups gives 5" in e.message for e in errors)
    assert all("hash_groups" in e.message.rsplit(" or ", 1)[-1] for e in errors)


def test_a_given_the_simulations_state_differently_is_refused_even_without_variants(content):
    def mutate(data):
        next(g for g in data["givens"] if g["name"] == "hash_groups")["value"] = 5
    _variant(content, "more_groups", mutate)
    errors = _errors_for(content, "more_groups.yaml")
    assert errors and all("the run contradicts the drill as written" in e.message for e in errors)
    messages = " | ".join(e.message for e in errors)
    assert "'hot_shard.tenant_groups'" in messages and "'hot_shard.celebrity_4'" in messages
    assert "runs shards=4 where this drill's hash_groups gives 5" in messages
    assert "runs servers_per_shard=50 where this drill's floor(slots / hash_groups) gives 40" in messages


def test_the_guide_lists_the_names_each_embeddable_preset_reads():
    # docs/authoring.md says which givens a drill must define for each preset; the check reads the same mirrors.
    import re

    guide = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    rows = {}
    for line in guide.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and "." in cells[0]:
            for preset in re.findall(r"`([\w.]+)`", cells[0]):
                rows[preset] = set(re.findall(r"`(\w+)`", cells[2]))
    embeddable = {pid: p for pid, p in presets.PRESETS.items() if p.mirrors is not None and not pid.startswith("test.")}
    assert set(rows) == set(embeddable)
    for pid, preset in embeddable.items():
        needed = set(preset.inputs) | {n for e in preset.mirrors.values() if e for n in re.findall(r"[a-z_]\w*", e)}
        assert rows[pid] == needed - {"floor", "ceil", "min", "max", "round"}, pid
