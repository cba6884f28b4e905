"""`RuleSet.evaluate(dict)` prepares an episode exactly as `check` prepares a file (issue 10): the
episode's own version's schema, then the wire normalisation; a wire contradiction is the same ERROR."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from litmus_rules import load_rules
from litmus_rules.cli import main
from litmus_rules.io import wire
from litmus_rules.io.yamltext import Loader as _Loader  # the loader's YAML reading: `null:` stays the key "null"
from _helpers import EXAMPLES, base_episode

RULES = load_rules()
PENDING = sorted((EXAMPLES / "v1.1").glob("*.yaml"))


def check_file(path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    main(["check", str(path), "--format", "jsonl"])
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("pending", PENDING, ids=lambda p: p.name)
def test_evaluate_of_the_parsed_document_is_check_of_the_file(pending: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / pending.name
    shutil.copy(pending, path)
    (from_file,) = check_file(path, capsys)
    doc = yaml.load(path.read_text(), Loader=_Loader)
    from_dict = RULES.evaluate(doc, source=from_file["source"]).to_json()
    assert from_dict == from_file


def test_the_wire_shapes_are_normalised_for_a_dict_too() -> None:
    doc = yaml.load((EXAMPLES / "v1.1" / "wire-shapes.yaml").read_text(), Loader=_Loader)
    assert isinstance(doc["episode"]["dispatch"][0]["arguments"], str)
    normalised = wire.normalise(doc)
    assert normalised is not doc
    assert RULES.evaluate(doc).to_json() == RULES.evaluate(normalised, validate=False).to_json()


def contradiction() -> dict[str, Any]:
    ep = wire.upgrade(base_episode())
    ep["context"]["tools"][0]["inputSchema"] = {"type": "object"}  # differs from input_schema
    return ep


def test_a_wire_contradiction_is_the_same_error_verdict_as_in_a_file(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(contradiction()))
    (from_file,) = check_file(path, capsys)
    v = RULES.evaluate(contradiction(), source=from_file["source"])
    assert v.verdict == from_file["verdict"] == "ERROR"
    (reason,) = v.reasons
    assert (reason.kind, reason.code) == ("invalid_input", from_file["reasons"][0]["code"])
    detail = "at /context/tools/0/inputSchema: `inputSchema` and `input_schema` are both given and differ"
    assert detail in reason.message and detail in from_file["reasons"][0]["message"]


def test_an_episode1_dict_is_validated_against_episode1() -> None:
    ep = base_episode()
    ep["run"] = {"model": "m"}  # a 1.1 key
    v = RULES.evaluate(ep)
    assert v.verdict == "ERROR" and "unknown key `run`" in v.reasons[0].message
    assert RULES.evaluate({**ep, "litmus": "episode/1.1"}).verdict == "SCORED"
