"""L410: a fact the episode schema allows to be null, used where null fails, without a null guard.

`detector.rubric in context.system_prompt` checks clean, yet rejects every episode with
`rubric: null`: lint says so. Which facts may be null comes from the episode schema's types."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from litmus_rules import load_rules_text
from litmus_rules.authoring.null_lint import unguarded_nulls
from litmus_rules.domain.environment import build_environment
from litmus_rules.domain.facts import episode_schema
from litmus_rules.engine import stages
from litmus_rules.lang.syntax import parse

from _helpers import ROOT, base_episode

CLI = [sys.executable, "-m", "litmus_rules"]
HEAD = 'ruleset t version "1"\n'


def _flagged(condition: str, schema: Any = None) -> list[str]:
    tree = parse(HEAD + f"rule r reject when {condition}\n", "t.litmus")
    environment = build_environment(schema) if schema is not None else None
    checked = stages.check(tree, environment)
    assert [d for d in checked.diagnostics if d.severity == "error"] == []
    return [d.span.text for d in unguarded_nulls(checked) if d.span is not None]


def test_the_naive_rubric_check_is_flagged_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "r.litmus"
    path.write_text(HEAD + '\nrule r\n  "d"\n  cite "c"\n  reject when detector.rubric in context.system_prompt\n'
                    '  because "rubric {detector.rubric!r}"\n', encoding="utf-8")
    out = subprocess.run([*CLI, "lint", str(path)], capture_output=True, text=True, cwd=tmp_path)
    assert "warning[L410]" in out.stdout, out.stdout + out.stderr
    assert "`detector.rubric` may be null" in out.stdout
    assert "r.litmus:6:15:" in out.stdout  # located at the nullable fact


def test_what_the_lint_warns_about_really_rejects_on_null() -> None:
    rules = load_rules_text(HEAD + "rule r reject when detector.rubric in context.system_prompt\n", "t.litmus")
    episode = base_episode()
    episode["detector"]["rubric"] = None
    verdict = rules.evaluate(episode)
    assert verdict.verdict == "REJECTED" and verdict.reasons[0].kind == "evaluation_error"
    guarded = load_rules_text(
        HEAD + "rule r reject when detector.rubric != null and detector.rubric in context.system_prompt\n", "t.litmus"
    )
    assert guarded.evaluate(episode).verdict == "SCORED"


@pytest.mark.parametrize(
    "condition",
    [
        "detector.rubric in context.system_prompt",
        "context.system_prompt in detector.rubric",
        "lower(detector.rubric) == \"x\"",
        "overlap(detector.rubric, context.system_prompt)",
        "any d in episode.dispatch: d.step > 2",
        "detector.channel == \"dispatch\" and detector.rubric in context.system_prompt",
        "(detector.rubric != null or true) and detector.rubric in context.system_prompt",
        "any s in detector.signals where r = detector.rubric: r in s.value",
    ],
)
def test_an_unguarded_use_where_null_fails_is_flagged(condition: str) -> None:
    assert _flagged(condition) != []


@pytest.mark.parametrize(
    "condition",
    [
        "detector.rubric != null and detector.rubric in context.system_prompt",
        "null != detector.rubric and lower(detector.rubric) == \"x\"",
        "default(detector.rubric, null) != null and (any t in surfaces: overlap(detector.rubric, t.text))",
        "detector.rubric == null or detector.rubric in context.system_prompt",
        "not (detector.rubric == null) and detector.rubric in context.system_prompt",
        "detector.rubric == \"x\" and starts_with(detector.rubric, \"x\")",
        "detector.rubric == context.system_prompt",  # `==` and `!=` are fine with null
        "detector.rubric in [\"a\", null]",  # membership of null in a list is false, not a failure
        "\"x\" in context.system_prompt",  # the schema does not allow null here
        "len([r for r in [detector.rubric] if r != null and r in context.system_prompt]) > 0",
        "any s in detector.signals where r = detector.rubric: r != null and r in s.value",
    ],
)
def test_a_guarded_or_null_safe_use_is_not_flagged(condition: str) -> None:
    assert _flagged(condition) == []


def test_nullability_comes_from_the_schema_not_a_list_of_names() -> None:
    schema = copy.deepcopy(dict(episode_schema()))
    context = schema["$defs"]["context"]["properties"]
    assert "null" not in _types(context["system_prompt"])
    assert _flagged('"x" in context.system_prompt') == []
    context["system_prompt"] = {**context["system_prompt"], "type": ["string", "null"]}
    assert _flagged('"x" in context.system_prompt', schema) == ["context.system_prompt"]


def _types(node: dict[str, Any]) -> list[str]:
    typ = node.get("type", [])
    return [typ] if isinstance(typ, str) else list(typ)


def test_the_shipped_rules_have_no_unguarded_null() -> None:
    checked = stages.check(stages.merge([parse((ROOT / "rules" / "validity.litmus").read_text(encoding="utf-8"),
                                                 "rules/validity.litmus")]).tree)
    assert [d.render() for d in unguarded_nulls(checked)] == []
