"""When a limit stops the surface walk, the check is unknown (an explained reject), never clean.

Each limit is exercised at the limit and one step past it (the count limits made tiny with
monkeypatch); past it, every rule that reads the surfaces rejects with `insufficient_evidence`,
and the `surfaces` fact says which limit stopped the walk, and where.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from litmus_rules import REJECTED, SCORED, load_rules
from litmus_rules.domain import walk
from litmus_rules.domain.facts import DERIVED
from litmus_rules.lang.values import UNKNOWN
from litmus_rules.io.load import MAX_DEPTH as LOADER_DEPTH
from litmus_rules.io.load import iter_episodes
from litmus_rules.domain.walk import WalkLimit, walk_context
from _helpers import base_episode

SURFACE_RULES = {"injector_detector_disjoint", "canary_not_derivable"}


@pytest.fixture(scope="module")
def rules() -> Any:
    return load_rules()


def with_text_signal(ep: dict[str, Any]) -> dict[str, Any]:
    ep["detector"]["signals"].append({"id": "s2", "kind": "substring", "value": "zq-unrelated-7781"})
    return ep


def ref_chain(hops: int) -> dict[str, Any]:
    """A schema only a few levels deep in the document whose `$ref`s reach `hops` definitions deep
    (each hop: a definition, its `properties`, the property's schema)."""
    defs = {f"D{i}": {"properties": {"x": {"$ref": f"#/$defs/D{i + 1}"}}} for i in range(hops)}
    defs[f"D{hops}"] = {"type": "string", "default": "leaf"}
    return {"$ref": "#/$defs/D0", "$defs": defs}


def nested(levels: int, leaf: Any = "leaf") -> Any:
    for _ in range(levels):
        leaf = {"k": leaf}
    return leaf


def assert_unknown_surfaces(v: Any) -> None:
    assert v.verdict == REJECTED
    reasons = {r.rule: r for r in v.reasons}
    assert set(reasons) == SURFACE_RULES, [(r.rule, r.message) for r in v.reasons]
    for r in reasons.values():
        assert r.kind == "insufficient_evidence" and "surfaces" in r.missing, (r.kind, r.message)


def why(ep: dict[str, Any]) -> str | None:
    note = DERIVED["surfaces"].why_unknown
    assert note is not None
    return note(ep, {})


def test_the_walk_reads_any_document_the_loader_accepts(tmp_path: Path) -> None:
    """Consistent with the loader: a context nested as deep as a document may be is walked whole,
    so only `$ref` chains (or documents handed over without the loader) can reach the walk's depth."""
    assert walk.MAX_DEPTH >= LOADER_DEPTH
    ep = base_episode()
    path = tmp_path / "deep.json"
    for levels in range(LOADER_DEPTH, 0, -1):  # the deepest annotations the loader still accepts
        ep["context"]["tools"][0]["annotations"] = nested(levels)
        path.write_text(json.dumps(ep), encoding="utf-8")
        (item,) = iter_episodes([str(path)])
        if item.error is None:
            break
    assert levels > LOADER_DEPTH - 10
    assert item.data is not None
    found = walk_context(item.data["context"])
    assert found[-1].text == "leaf" and found[-1].origin.endswith(".k" * levels)


def deep_part(levels: int) -> dict[str, Any]:
    """A message whose one content part nests `levels` objects: the innermost is at depth
    3 + levels below `context` (messages list, message, content list)."""
    return {"role": "user", "content": [{"type": "text", "text": "hi", "meta": nested(levels - 1)}]}


def test_depth_at_the_limit_and_one_past(rules: Any) -> None:
    ep = with_text_signal(base_episode())
    ep["context"]["messages"].append(deep_part(walk.MAX_DEPTH - 3))
    # (not validated: validation refuses documents this deep, see the test above)
    assert rules.evaluate(ep, validate=False).verdict == SCORED
    assert why(ep) is None
    ep["context"]["messages"][1] = deep_part(walk.MAX_DEPTH - 2)
    assert_unknown_surfaces(rules.evaluate(ep, validate=False))
    note = why(ep)
    assert note is not None and "MAX_DEPTH" in note and f"deeper than {walk.MAX_DEPTH} levels" in note
    assert "the walk stopped at context.messages[1].content[0].meta" + ".k" * (walk.MAX_DEPTH - 4) + ", so" in note


def test_a_tool_too_deep_to_read_fails_the_fillable_check_too(rules: Any) -> None:
    """`fillable_call` reads the tool through the same walk: past its depth, it cannot say."""
    ep = base_episode()
    ep["context"]["tools"][0]["annotations"] = nested(walk.MAX_DEPTH)
    reasons = {r.rule: r for r in rules.evaluate(ep, validate=False).reasons}
    assert "MAX_DEPTH" in reasons["tool_call_argument_fillable"].message


def test_a_ref_chain_past_the_depth_is_an_explained_reject(rules: Any) -> None:
    """A document the loader accepts (a few levels deep) whose `$ref`s go deeper than the walk."""
    ep = with_text_signal(base_episode())
    ep["context"]["tools"].append({"name": "walk_tree", "description": "Walks.", "input_schema": ref_chain(150)})
    v = rules.evaluate(ep)  # validated: the episode itself is fine
    assert_unknown_surfaces(v)
    note = why(ep)
    assert note is not None and "MAX_DEPTH" in note and "context.tools[1].input_schema.$defs.D" in note
    ep["context"]["tools"][1]["input_schema"] = ref_chain(30)
    assert rules.evaluate(ep).verdict == SCORED


@pytest.mark.parametrize("limit, at_limit", [("MAX_SURFACES", 20), ("MAX_TEXT", 20 * len("word")), ("MAX_NODES", 1)])
def test_count_limits_at_the_limit_and_one_past(limit: str, at_limit: int, rules: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    ep = with_text_signal(base_episode())
    ep["context"] = {"system_prompt": ["word"] * 20}  # 20 surfaces of 4 characters in one list (one node)
    monkeypatch.setattr(walk, limit, at_limit)
    assert rules.evaluate(ep, validate=False).verdict == SCORED
    monkeypatch.setattr(walk, limit, at_limit - 1)
    assert_unknown_surfaces(rules.evaluate(ep, validate=False))
    note = why(ep)
    assert note is not None and limit in note and "context.system_prompt" in note


def test_a_hostile_context_is_not_walked_twice_for_its_message(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = base_episode()
    ep["context"]["messages"].append(deep_part(walk.MAX_DEPTH))
    assert DERIVED["surfaces"].compute(ep, {}) is UNKNOWN
    calls = []
    monkeypatch.setattr("litmus_rules.domain.walk.walk_context", lambda c: calls.append(c))
    assert "MAX_DEPTH" in (why(ep) or "")
    assert calls == []


def test_without_a_rule_that_reads_surfaces_a_limit_changes_nothing(rules: Any) -> None:
    """No text signal, no canary, no rubric: nothing reads the surfaces, so nothing is unknown."""
    ep = base_episode()
    ep["canaries"] = []
    ep["context"]["messages"].append(deep_part(walk.MAX_DEPTH))
    assert rules.evaluate(ep, validate=False).verdict == SCORED


def test_walk_limit_is_an_evaluation_error_naming_limit_and_origin() -> None:
    with pytest.raises(WalkLimit) as caught:
        walk_context({"tools": [{"name": "t", "input_schema": ref_chain(150)}]})
    assert caught.value.limit == "MAX_DEPTH" and caught.value.origin.startswith("context.tools[0].input_schema.$defs.D")
    assert caught.value.code == "L600"


def test_the_reject_message_names_the_limit_and_where_it_stopped(rules: Any) -> None:
    ep = with_text_signal(base_episode())
    ep["context"]["tools"].append({"name": "walk_tree", "input_schema": ref_chain(150)})
    for r in rules.evaluate(ep).reasons:
        assert "MAX_DEPTH" in r.message and "context.tools[1].input_schema.$defs.D" in r.message
