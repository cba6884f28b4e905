"""A schema whose `$ref`s multiply (each definition names the next under two properties: 2^n
argument paths from a 2 KB schema) stops the walk at a limit: every rule that reads the tool's
surfaces or its fillable values rejects, and the tool is walked to the limit once per evaluation,
not once per signal and again for the trace (it was five walks: 3 s for one episode).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from litmus_rules import REJECTED, SCORED, load_rules
from litmus_rules.domain import signals
from _helpers import base_episode


def multiplying(depth: int) -> dict[str, Any]:
    defs = {f"d{i}": {"type": "object", "description": f"level {i}",
                      "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}}}
            for i in range(depth)}
    defs[f"d{depth}"] = {"type": "string", "default": "leaf"}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": defs}


@pytest.fixture(scope="module")
def rules() -> Any:
    return load_rules()


def _episode(depth: int) -> dict[str, Any]:
    ep = base_episode()
    tool = ep["context"]["tools"][0]
    tool["input_schema"] = multiplying(depth)
    ep["detector"]["signals"] = [
        {"id": f"c{k}", "kind": "tool_call", "tool": tool["name"], "arguments": {"root.a.b": f"v{k}"}}
        for k in range(3)
    ]
    return ep


def test_a_small_multiplying_schema_is_read_whole(rules: Any) -> None:
    assert rules.evaluate(_episode(6)).verdict == SCORED


def test_a_multiplying_schema_rejects_at_the_walk_limit(rules: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    walked: list[int] = []
    real = signals.tool_surfaces

    def counting(tool: Any, index: int) -> Any:
        walked.append(index)
        return real(tool, index)

    monkeypatch.setattr(signals, "tool_surfaces", counting)
    verdict = rules.evaluate(_episode(24))
    assert verdict.verdict == REJECTED
    reasons = {r.rule: r.message for r in verdict.reasons}
    assert "tool_call_argument_fillable" in reasons, reasons
    assert "surface walk limit MAX_SURFACES" in reasons["tool_call_argument_fillable"]
    assert "the walk stopped at context.tools[0]" in reasons["tool_call_argument_fillable"]
    # three signals, each asked again for the reject's trace: one walk of the tool
    assert walked == [0]


def test_a_remembered_stop_is_the_same_tools_only(rules: Any) -> None:
    """Another tool object (a fixed copy of the schema) is walked afresh, not refused."""
    hostile = _episode(24)
    assert rules.evaluate(hostile).verdict == REJECTED
    fixed = copy.deepcopy(hostile)
    fixed["context"]["tools"][0]["input_schema"] = multiplying(6)
    assert rules.evaluate(fixed).verdict == SCORED
    assert rules.evaluate(hostile).verdict == REJECTED
