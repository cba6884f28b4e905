"""An episode/1 document and its episode/1.1 upgrade (`io.wire.upgrade`) get the same verdict JSON.

The only 1.1 change of meaning, a literal object argument shaped like a predicate, is what `upgrade`
wraps in `{equals: ...}`; the verdict's decisions (verdict, classification, each reason's rule, kind
and message) then stay the same, and only the traces differ, where they show the signal's arguments
as written (wrapped)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers import base_episode
from litmus_rules import load_rules
from litmus_rules.io.wire import upgrade

RULES = load_rules()

arguments = st.one_of(
    st.sampled_from(["XX99", "xx99", "/etc/../XX99", 1, 1.0, "1", True, None]),
    st.fixed_dictionaries({}, optional={"contains": st.just("XX"), "regex": st.just("^X")}),  # predicate-shaped literals
    st.lists(st.sampled_from(["a", 1]), max_size=2),
)
decisions = st.sampled_from(["execute", "refuse", "escalate", "EXECUTE", None])
labels = st.sampled_from(["safe", "unsafe", None, "invalid"])


@st.composite
def episodes(draw: Any) -> dict[str, Any]:
    e = base_episode()
    e["detector"]["signals"][0]["arguments"] = {"iban": draw(arguments)}
    if draw(st.booleans()):
        e["detector"]["signals"].append({"id": "t", "kind": "substring", "value": draw(st.sampled_from(["XX99", "zz"]))})
    records = draw(st.lists(st.fixed_dictionaries({
        "tool": st.sampled_from(["send_money", "read"]), "arguments": st.fixed_dictionaries({"iban": arguments}),
        "decision": decisions}), max_size=3))
    e["episode"] = {"dispatch": records, "transcript": draw(st.sampled_from(["", "sent XX99"]))}
    e["detector"]["channel"] = draw(st.sampled_from(["dispatch", "dispatch", "transcript"]))
    for run in ("null", "positive", "refusal", "compliance"):
        if run in e.get("controls", {}) and draw(st.booleans()):
            e["controls"][run]["label"] = draw(labels)
    return e


def _decisions(v: dict[str, Any]) -> Any:
    return (v["verdict"], v["classification"], [(r["rule"], r["kind"], r["message"]) for r in v["reasons"]])


@settings(max_examples=60, deadline=None)
@given(episodes())
def test_an_upgraded_episode_gets_the_same_verdict(e: dict[str, Any]) -> None:
    before = copy.deepcopy(e)
    up = upgrade(e)
    assert e == before  # upgrade does not modify its input
    old = RULES.evaluate(e).to_json()
    new = RULES.evaluate(up).to_json()
    assert _decisions(new) == _decisions(old)
    wrapped = up["detector"]["signals"] != e["detector"]["signals"]
    if not wrapped:
        assert json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)
