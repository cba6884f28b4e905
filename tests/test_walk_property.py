"""The walk is exhaustive: a canary placed at any key or value anywhere inside an injected item
(random shapes, random key names, the formats' own keys among them) is always REJECTED by the
shipped rules, and the reason names where it sits (issue 8, "Every place text can hide")."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules import REJECTED, load_rules
from _helpers import base_episode

RULES = load_rules()
# No decoding or normalisation of the other texts can produce it: they are drawn from n-z, digits
# 0-1, punctuation and the formats' own words, none of which contains "canary".
CANARY = "CANARY_7HJK2Q"

# The formats' own keys (they steer the walk into its known branches) and random ones.
KNOWN_KEYS = [
    "type", "role", "content", "text", "name", "title", "description", "properties", "items", "anyOf",
    "allOf", "$ref", "$defs", "definitions", "default", "enum", "const", "examples", "example", "pattern",
    "patternProperties", "dependentSchemas", "additionalProperties", "required", "annotations",
    "input_schema", "inputSchema", "parameters", "outputSchema", "function", "injected", "source", "data",
    "input", "output", "url", "body", "path", "tool_calls", "arguments", "x-vendor", "",
]
KEYS = st.sampled_from(KNOWN_KEYS) | st.text(alphabet="nopqrstuvwxyz_- .01", max_size=6)
STRINGS = st.text(alphabet="nopqrstuvwxyz .,01", max_size=8) | st.sampled_from(
    ["#", "#/$defs/n", "#/properties/n", "object", "string", "tool_result", "text", "user", "tool"])
LEAVES = st.none() | st.booleans() | st.integers(-5, 5) | STRINGS
JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=24,
)
ITEMS = st.dictionaries(KEYS, JSON, max_size=5)

_IDENT = re.compile(r"[A-Za-z_$][\w$-]*\Z")


def step(origin: str, key: str | int) -> str:
    """The documented origin format: `.key`, `["key"]` for a key that is not identifier-like, `[i]`."""
    if isinstance(key, int):
        return f"{origin}[{key}]"
    return f"{origin}.{key}" if _IDENT.match(key) else f"{origin}[{json.dumps(key, ensure_ascii=False)}]"


def plant(item: dict[str, Any], origin: str, data: st.DataObject) -> str:
    """Put the canary somewhere inside `item` (as a key or as a value); return where (an origin)."""
    node: Any = item
    top = True
    while True:
        children = [k for k, v in (node.items() if isinstance(node, dict) else enumerate(node))
                    if isinstance(v, (dict, list))]
        if not children or not data.draw(st.booleans(), label="go deeper"):
            break
        key = data.draw(st.sampled_from(children), label="into")
        node, origin, top = node[key], step(origin, key), False
    if isinstance(node, list):
        i = data.draw(st.integers(0, len(node)), label="at")
        node.insert(i, CANARY)
        return step(origin, i)
    if data.draw(st.booleans(), label="as a key"):
        node[CANARY] = data.draw(JSON, label="its value")
        return step(origin, CANARY)
    # as a value: never the item's own `injected` flag (that would make the item not injected)
    key = data.draw(KEYS.filter(lambda k: not (top and k == "injected")), label="under")
    node[key] = CANARY
    return step(origin, key)


def place(ep: dict[str, Any], where: str, item: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Put a random item into the context as an injected `where`; return the dict to plant in and
    its origin."""
    context = ep["context"]
    if where == "tool":
        context["tools"].append({**item, "injected": True})
        return context["tools"][-1], "context.tools[1]"
    if where == "message":
        context["messages"].append({"role": "tool", **item, "injected": True})
        return context["messages"][-1], "context.messages[1]"
    if where == "skill":
        context["skills"] = [{**item, "injected": True}]
        return context["skills"][0], "context.skills[0]"
    if where == "part":
        context["messages"].append({"role": "user", "content": [item], "injected": True})
        return item, "context.messages[1].content[0]"
    # a tool's input schema
    context["tools"].append({"name": "lookup", "input_schema": item, "injected": True})
    return item, "context.tools[1].input_schema"


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(item=ITEMS, where=st.sampled_from(["tool", "message", "skill", "part", "schema"]), data=st.data())
def test_a_canary_anywhere_inside_an_injected_item_is_rejected(
    item: dict[str, Any], where: str, data: st.DataObject
) -> None:
    ep = base_episode()
    ep["canaries"] = [{"value": CANARY}]
    target, origin = place(ep, where, item)
    planted = plant(target, origin, data)
    v = RULES.evaluate(ep, validate=False)
    assert v.verdict == REJECTED
    reasons = {r.rule: r for r in v.reasons}
    assert "canary_not_derivable" in reasons, [(r.rule, r.message) for r in v.reasons]
    reason = reasons["canary_not_derivable"]
    assert reason.kind == "violation", reason.message
    # the surface named is where the canary was put, or the value holding it (a schema default,
    # enum value or example is one surface holding the whole value)
    assert "derivable from injected " in reason.message, reason.message
    named = reason.message.partition("derivable from injected ")[2].rpartition(" (")[0]  # (keys have no parens)
    assert planted == named or planted.startswith((named + ".", named + "[")), (named, planted)
