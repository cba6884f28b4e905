"""The checker knows the episode/1.1 fact paths (issue 10): rules are checked against the 1.1 schema,
a superset of episode/1, so the new paths are typed and a typo in one gets a did-you-mean, while the
shipped rules' diagnostics are those the episode/1 schema gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litmus_rules._resources import default_rules_dir, episode_schema_path
from litmus_rules.domain.environment import build_environment
from litmus_rules.engine import stages
from litmus_rules.errors import Diagnostic
from litmus_rules.lang.checker import Checker
from litmus_rules.lang.syntax import parse

HEAD = 'ruleset t version "1"\n'


def diagnostics(text: str, schema: dict | None = None) -> list[Diagnostic]:
    return Checker(parse(HEAD + text, "x.litmus"), build_environment(schema)).run()


@pytest.mark.parametrize("condition", [
    'run.model == "gpt-4o"',
    'any u in unknowns: u.path == "/canaries" and u.note != ""',
    'detector.scorer.name == "garak.detectors.base.TriggerListDetector"',
    'detector.scorer.kind == "model_judge"',
    '"invalid" in detector.invalid_labels',
    'detector.decision_source == "derived"',
    'episode.state != null',
    'controls.null.state != null and controls.null.source == "harness"',
    'episode.decision_step > 3',
    'any s in detector.signals: s.query != "" and len(s.values) > 0',
    'any m in left_out: m.step > 3 and m.origin != ""',
])
def test_the_11_paths_are_known(condition: str) -> None:
    assert diagnostics(f"rule r reject when {condition}\n") == []


@pytest.mark.parametrize("typo, suggestion", [
    ("detector.scorr", "detector.scorer"),
    ("detector.decision_sorce", "detector.decision_source"),
    ("detector.invalid_label", "detector.invalid_labels"),
    ("detector.scorer.nme", "detector.scorer.name"),
    ("unknown", "unknowns"),
    ("left_ot", "left_out"),
])
def test_a_typo_in_an_11_path_gets_a_did_you_mean(typo: str, suggestion: str) -> None:
    (d,) = diagnostics(f"rule r reject when {typo} == 1\n")
    assert d.code in ("L201", "L202") and typo in d.message
    assert d.help == f"did you mean `{suggestion}`?"


def test_under_episode1_the_11_paths_were_unknown() -> None:
    """What the 1.1 schema adds: the same rules checked against episode/1 fail."""
    schema = json.loads(Path(episode_schema_path("episode/1")).read_text())
    assert [d.code for d in diagnostics('rule r reject when run.model == "m"\n', schema)] == ["L201"]
    assert diagnostics('rule r reject when detector.scorer.name == "m"\n', schema)[0].code == "L202"


def test_the_shipped_rules_read_1_1_paths_and_nothing_unknown() -> None:
    # The shipped rules read 1.1 facts (unknowns, invalid_labels, state, ...): clean under the 1.1
    # schema; under episode/1's, the only complaints are those names and paths.
    schema = json.loads(Path(episode_schema_path("episode/1")).read_text())
    texts = stages.find_and_read(default_rules_dir()).texts
    assert [d.render() for d in stages.parse_and_check(texts).diagnostics] == []
    under_1 = stages.parse_and_check(texts, build_environment(schema)).diagnostics
    assert under_1, "the shipped rules read no 1.1 fact"
    assert {d.code for d in under_1} <= {"L201", "L202"}