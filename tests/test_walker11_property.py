"""Any canary anywhere in what the agent received is a surface (episode/1.1): a string placed at any
key or value of a content part of any provider shape, or inside the arguments of an earlier tool
call, in a message the agent received before deciding, is found by the surface walk with the right
injected flag; the same text in a message stamped after the decision step is not, and that message is
reported as left out."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain.steps import left_out
from litmus_rules.domain.surfaces import extract_surfaces, received_surfaces
from litmus_rules.io import wire
from litmus_rules.io.load import validate_episode
from _helpers import base_episode

# No other text of the generated documents contains "QZX" (fillers are drawn from a-p and spaces).
CANARY = "QZX_CANARY_77"
FILLER = st.text(alphabet="abcdefghijklmnop ", min_size=1, max_size=6)
# Around the canary inside a longer string, including characters that JSON text escapes.
AROUND = st.sampled_from(["", "see ", "\"", "é ", "\n", "\\"])

# Parts of every provider shape, with "T" where text goes (replaced by fillers).
SHAPES: list[Any] = [
    {"type": "text", "text": "T"},
    {"type": "input_text", "text": "T"},
    {"type": "output_text", "text": "T", "annotations": [{"type": "url_citation", "url": "T", "title": "T"}]},
    {"type": "image_url", "image_url": {"url": "T", "detail": "auto"}},
    {"type": "input_image", "image_url": "T", "detail": "low"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "T"}},
    {"type": "tool_use", "id": "T", "name": "T", "input": {"T": "T", "n": [1, {"k": "T"}]}},
    {"type": "tool_result", "tool_use_id": "T", "content": "T"},
    {"type": "tool_result", "tool_use_id": "T", "is_error": False,
     "content": [{"type": "text", "text": "T"}, {"type": "image", "source": {"type": "url", "url": "T"}}]},
    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "T"}, "title": "T",
     "citations": {"enabled": True}},
    {"type": "text", "content": "T"},
    {"text": "T"},
    {"type": "function_call", "call_id": "T", "name": "T", "arguments": "T"},
    {"type": "function_call_output", "call_id": "T", "output": "T"},
    {"type": "thinking", "thinking": "T", "signature": "T"},
    {"type": "resource", "resource": {"uri": "T", "mimeType": "text/plain", "text": "T"}},
    {"type": "x-vendor", "payload": {"T": ["T", {"T": None}], "cache_control": {"type": "ephemeral"}}},
    "T",
]


def fill(node: Any, draw: Any) -> Any:
    """A copy of a shape with every "T" (key or value) replaced by a filler."""
    if node == "T":
        return draw(FILLER)
    if isinstance(node, dict):
        return {(draw(FILLER) if k == "T" else k): fill(v, draw) for k, v in node.items()}
    if isinstance(node, list):
        return [fill(v, draw) for v in node]
    return node


def places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    """Every place a text can be put: ("value", path of a string leaf) or ("key", path of an object)."""
    out: list[tuple[tuple[Any, ...], str]] = []
    if isinstance(node, str):
        out.append((path, "value"))
    elif isinstance(node, dict):
        out.append((path, "key"))
        for k, v in node.items():
            out.extend(places(v, path + (k,)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.extend(places(v, path + (i,)))
    return out


def put(root: Any, path: tuple[Any, ...], how: str, text: str) -> Any:
    """`root` with `text` as the value at `path`, or as a new key of the object at `path`."""
    if not path:
        return text if how == "value" else {**root, text: "v"}
    node = root
    for p in path[:-1]:
        node = node[p]
    if how == "value":
        node[path[-1]] = text
    else:
        node[path[-1]] = {**node[path[-1]], text: "v"}
    return root


@st.composite
def planted_episode(draw: Any) -> tuple[dict[str, Any], int, bool, bool]:
    """(a valid episode/1.1 document with the canary planted in one message, that message's index,
    whether the canary is injected, whether that message is certainly after the decision)."""
    n = draw(st.integers(1, 4))
    steps = [draw(st.sampled_from(["absent", None, 0, 1, 2, 3, 4, 5])) for _ in range(n)]
    decision = draw(st.sampled_from(["absent", None, 0, 2, 3, 5]))
    target = draw(st.integers(0, n - 1))
    text = draw(AROUND) + CANARY + draw(AROUND)
    messages = []
    for i in range(n):
        role = draw(st.sampled_from(["user", "assistant", "tool", "developer", "system"]))
        parts = [fill(copy.deepcopy(draw(st.sampled_from(SHAPES))), draw) for _ in range(draw(st.integers(1, 3)))]
        msg: dict[str, Any] = {"role": role, "content": parts}
        if draw(st.booleans()):
            msg["tool_calls"] = [{"id": draw(FILLER), "type": "function",
                                  "function": {"name": draw(FILLER), "arguments": json.dumps({"q": draw(FILLER)})}}]
        if steps[i] != "absent":
            msg["step"] = steps[i]
        messages.append(msg)
    msg = messages[target]
    msg_injected = draw(st.booleans())
    if msg_injected:
        msg["injected"] = True
    part_injected = False
    if "tool_calls" in msg and draw(st.booleans()):
        # inside an earlier call's arguments, written as a JSON text (escapes and all)
        args = {"q": draw(FILLER)}
        args = put(args, *draw(st.sampled_from(places(args))), text)
        msg["tool_calls"][0]["function"]["arguments"] = json.dumps(args, ensure_ascii=draw(st.booleans()))
    else:
        k = draw(st.integers(0, len(msg["content"]) - 1))
        part = msg["content"][k]
        part = put(part, *draw(st.sampled_from(places(part))), text)
        if isinstance(part, dict) and draw(st.booleans()):
            part["injected"] = part_injected = True
        msg["content"][k] = part
    ep = wire.upgrade(base_episode())
    ep["context"]["messages"] = messages
    ep["context"]["tools"][0]["injected"] = False
    if decision != "absent":
        ep["episode"]["decision_step"] = decision
    late = isinstance(decision, int) and isinstance(steps[target], int) and steps[target] > decision
    return ep, target, msg_injected or part_injected, late


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(planted_episode())
def test_any_canary_received_before_the_decision_is_a_surface(case: tuple[dict[str, Any], int, bool, bool]) -> None:
    ep, target, injected, late = case
    problem = validate_episode(ep, source="generated")
    assert problem is None, problem  # what is generated is a valid 1.1 document
    ep = dict(wire.normalise(ep))
    origin = f"context.messages[{target}]"
    # the walker reads every part of every message it is given
    everywhere = [s for s in extract_surfaces(ep["context"]) if CANARY in s.text]
    assert everywhere and all(s.origin.startswith((origin + ".", origin + "[")) for s in everywhere)
    received = [s for s in received_surfaces(ep) if CANARY in s.text]
    reported = [m.origin for m in left_out(ep)]
    if late:
        assert received == []
        assert origin in reported
    else:
        assert received, "a text the agent received before deciding is not a surface"
        assert all(s.injected == injected for s in received), received
        assert origin not in reported
    # what is left out is exactly the messages certainly after the decision
    for m in left_out(ep):
        assert not any(s.origin.startswith((m.origin + ".", m.origin + "[")) for s in received_surfaces(ep))
