"""Schema and loader: good content loads, each kind of broken file names its file and key path."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from drills.loader import CONTENT_DIR, load_catalogue
from drills.schema import SECTION_ORDER

SOURCE = CONTENT_DIR / "one_tenant.yaml"


def _write_variant(folder: Path, name: str, mutate) -> Path:
    data = yaml.safe_load(SOURCE.read_text())
    data["id"] = name
    mutate(data)
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


@pytest.fixture
def content(tmp_path) -> Path:
    shutil.copy(SOURCE, tmp_path / SOURCE.name)
    return tmp_path


def test_shipped_content_loads_without_errors():
    catalogue = load_catalogue()
    assert catalogue.errors == ()
    assert "one_tenant" in catalogue.drills


def test_every_shipped_text_renders_and_every_section_keeps_the_order():
    loaded = load_catalogue().drills["one_tenant"]
    for part in loaded.drill.parts:
        stages = [SECTION_ORDER.index(s.stage) for s in part.reveal]
        assert stages == sorted(stages)
        for section in part.reveal:
            assert "{" not in loaded.text(section.text).replace("{{", "")


def _only_error(folder: Path):
    catalogue = load_catalogue(folder)
    assert "one_tenant" in catalogue.drills, "the good drill must still load beside a broken one"
    assert len(catalogue.errors) == 1
    return catalogue.errors[0]


def test_bad_yaml_names_the_file_and_line(content):
    (content / "broken.yaml").write_text("id: broken\ntitle: [unclosed\n")
    error = _only_error(content)
    assert error.file == "broken.yaml"
    assert error.line == 3                      # where the parser gave up: the end of the file
    assert "YAML" in error.message and "starts on line 2" in error.message
    assert str(error).startswith("broken.yaml:3: not valid YAML")


def test_unknown_key_names_the_key_path(content):
    def mutate(data):
        data["parts"][1]["questions"][0]["colour"] = "red"
    _write_variant(content, "unknown_key", mutate)
    error = _only_error(content)
    assert error.file == "unknown_key.yaml"
    assert error.path.startswith("parts[1](board).questions[0](job_duration)")
    assert "colour" in error.path
    assert "not permitted" in error.message


def test_expression_with_missing_given_names_the_answer(content):
    def mutate(data):
        data["parts"][1]["questions"][1]["answer"] = "peak_rate * no_such_given"
    _write_variant(content, "missing_given", mutate)
    error = _only_error(content)
    assert error.path == "parts[1](board).questions[1](jobs_in_flight).answer"
    assert "no_such_given" in error.message


def test_text_naming_an_unknown_value_is_caught(content):
    def mutate(data):
        data["parts"][0]["body"] += "Scale: {not_a_number} jobs"
    _write_variant(content, "bad_text", mutate)
    error = _only_error(content)
    assert error.path == "parts[0](prompt).body"
    assert "not_a_number" in error.message


def test_reveal_sections_out_of_order_are_refused(content):
    def mutate(data):
        part = next(p for p in data["parts"] if p["id"] == "break1")
        part["reveal"] = list(reversed(part["reveal"]))
    _write_variant(content, "out_of_order", mutate)
    error = _only_error(content)
    assert "order" in error.message


def test_question_linking_an_unknown_skill_is_refused(content):
    def mutate(data):
        data["parts"][1]["questions"][0]["skills"] = ["juggling"]
    _write_variant(content, "bad_skill", mutate)
    error = _only_error(content)
    assert "juggling" in error.message


def test_expressions_cannot_reach_python_internals(content):
    def mutate(data):
        data["parts"][1]["questions"][0]["answer"] = "().__class__.__bases__[0].__subclasses__()"
    _write_variant(content, "escape", mutate)
    error = _only_error(content)
    assert error.path.endswith("(job_duration).answer")


def test_id_must_match_file_name(content):
    data = yaml.safe_load(SOURCE.read_text())
    (content / "other_name.yaml").write_text(yaml.safe_dump(data))
    error = _only_error(content)
    assert error.file == "other_name.yaml" and error.path == "id"


def test_committed_json_schema_matches_the_models():
    import json

    from drills.schema import Drill

    committed = json.loads((CONTENT_DIR.parent / "schema.json").read_text())
    assert committed == Drill.model_json_schema()
