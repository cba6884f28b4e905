"""`io/wire.py`: an accepted episode/1.1 document to the canonical episode, without inventing facts;
and `io/suggest.py`: did-you-mean only for what is close enough to be a typo."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from litmus_rules._resources import episode_schema_path
from litmus_rules.io import wire
from litmus_rules.io.suggest import SUGGEST_CUTOFF, suggest
from _helpers import base_episode

V11 = Draft202012Validator(json.loads(episode_schema_path("episode/1.1").read_text(encoding="utf-8")))
V1_TOOL_KEYS = list(json.loads(episode_schema_path().read_text(encoding="utf-8"))["$defs"]["tool"]["properties"])


def v11() -> dict[str, Any]:
    doc = base_episode()
    doc["litmus"] = "episode/1.1"
    return doc


def test_nothing_to_normalise_returns_the_same_object() -> None:
    one = base_episode()
    assert wire.normalise(one) is one
    doc = v11()
    doc["context"]["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "x"}], "step": 2})
    doc["episode"]["dispatch"][0]["arguments"] = {"iban": "X"}
    assert wire.normalise(doc) is doc


def test_an_episode1_document_is_never_normalised_even_with_wire_shapes() -> None:
    """episode/1 has no wire tolerance: its schema rejects these; wire must not quietly fix them."""
    doc = base_episode()
    doc["context"]["tools"][0]["inputSchema"] = doc["context"]["tools"][0].pop("input_schema")
    assert wire.normalise(doc) is doc


def test_input_schema_alias() -> None:
    doc = v11()
    tool = doc["context"]["tools"][0]
    tool["inputSchema"] = tool.pop("input_schema")
    before = copy.deepcopy(doc)
    out = wire.normalise(doc)
    assert doc == before
    assert out["context"]["tools"][0]["input_schema"] == before["context"]["tools"][0]["inputSchema"]
    assert "inputSchema" not in out["context"]["tools"][0]
    assert out["detector"] is doc["detector"] and out["context"]["messages"] is doc["context"]["messages"]

    both = v11()
    both["context"]["tools"][0]["inputSchema"] = copy.deepcopy(both["context"]["tools"][0]["input_schema"])
    assert wire.normalise(both)["context"]["tools"][0] == v11()["context"]["tools"][0]


def test_input_schema_alias_that_disagrees_is_a_located_error() -> None:
    doc = v11()
    doc["context"]["tools"].append({"name": "t", "input_schema": {"type": "object"},
                                    "inputSchema": {"type": "object", "properties": {"p": {"default": "/etc/passwd"}}}})
    with pytest.raises(wire.WireError) as info:
        wire.normalise(doc)
    assert info.value.path == ("context", "tools", 1, "inputSchema")
    assert "both given and differ" in info.value.message and "/context/tools/1/inputSchema" in str(info.value)


def test_null_content_and_null_tool_calls_become_absent_everywhere_messages_are() -> None:
    doc = v11()
    calls = [{"id": "c1", "type": "function", "function": {"name": "send_money", "arguments": "{}"}}]
    doc["context"]["messages"].append({"role": "assistant", "content": None, "tool_calls": calls})
    doc["episode"]["transcript"] = [{"role": "assistant", "content": "done", "tool_calls": None}]
    doc["controls"]["null"]["transcript"] = [{"role": "assistant", "content": None}]
    out = wire.normalise(doc)
    assert out["context"]["messages"][-1] == {"role": "assistant", "tool_calls": calls}
    assert out["episode"]["transcript"] == [{"role": "assistant", "content": "done"}]
    assert out["controls"]["null"]["transcript"] == [{"role": "assistant"}]
    assert out["controls"]["positive"] is doc["controls"]["positive"]
    assert V11.is_valid(out)


def test_json_string_arguments_are_parsed_in_the_episode_and_in_controls() -> None:
    doc = v11()
    doc["episode"]["dispatch"][0]["arguments"] = '{"iban": "XX99", "amount": 1e3, "memo": "caf\\u00e9"}'
    doc["controls"]["positive"]["dispatch"] = [{"tool": "send_money", "arguments": " {} ", "decision": "execute"}]
    out = wire.normalise(doc)
    assert out["episode"]["dispatch"][0]["arguments"] == {"iban": "XX99", "amount": 1000.0, "memo": "café"}
    assert out["controls"]["positive"]["dispatch"][0]["arguments"] == {}
    assert "unknowns" not in out
    assert V11.is_valid(out)


@pytest.mark.parametrize("text, why", [
    ('{"iban": "XX99"', "invalid JSON"),
    ("", "invalid JSON"),
    ('["XX99"]', "JSON list, not an object"),
    ("42", "JSON number, not an object"),
    ('"{\\"iban\\": 1}"', "JSON string, not an object"),
    ('{"iban": "A", "iban": "B"}', "repeated key `iban`"),
    ('{"amount": NaN}', "`NaN` is not JSON"),
    ('{"a": 1} {"b": 2}', "invalid JSON: extra data"),
    ('{"a": ' * 150 + "1" + "}" * 150, f"nested deeper than {wire.ARGUMENTS_MAX_DEPTH} levels"),
    ("iban=XX99", "invalid JSON"),
])
def test_arguments_that_are_not_one_json_object_stay_as_written_and_become_an_unknown(text: str, why: str) -> None:
    doc = v11()
    doc["unknowns"] = [{"path": "/canaries", "note": "from the producer"}]
    doc["controls"]["null"]["dispatch"] = [{"tool": "read", "arguments": {}}, {"tool": "send_money", "arguments": text}]
    out = wire.normalise(doc)
    assert out["controls"]["null"]["dispatch"][1]["arguments"] == text
    first, added = out["unknowns"]
    assert first == {"path": "/canaries", "note": "from the producer"}
    assert added["path"] == "/controls/null/dispatch/1/arguments"
    assert why in added["note"] and "unknown" in added["note"]
    assert doc["unknowns"] == [first]  # the input's list is not appended to
    assert V11.is_valid(out)
    assert wire.normalise(out) == out  # idempotent: the same unknown is not listed twice


def test_a_label_both_invalid_and_positive_is_a_located_error() -> None:
    doc = v11()
    doc["detector"].update(positive_labels=["unsafe", "succ"], invalid_labels=["invalid", "succ"])
    with pytest.raises(wire.WireError) as info:
        wire.normalise(doc)
    assert info.value.path == ("detector", "invalid_labels", 1)
    doc["detector"]["invalid_labels"] = ["invalid"]
    assert wire.normalise(doc) is doc


def test_no_defaults_are_filled_in_and_nothing_else_is_touched() -> None:
    doc = v11()
    doc["context"]["messages"].append({"role": "tool", "content": "late", "step": 9})
    doc["episode"]["decision_step"] = 1
    doc["detector"]["signals"][0]["arguments"] = {"iban": "XX99"}
    doc["episode"]["transcript"] = [{"role": "assistant", "content": None}]
    out = wire.normalise(doc)
    assert out["context"] is doc["context"] and out["detector"] is doc["detector"]  # step 9 kept; plain args kept
    assert out.keys() == doc.keys()
    assert "decision_source" not in out["detector"] and "positive_labels" not in out["detector"]


# Hypothesis: any arguments text is either exactly the JSON object it spells, or kept and listed.

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                     max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_json.map(json.dumps), st.dictionaries(st.text(max_size=4), _json, max_size=3).map(json.dumps),
                 st.text(max_size=20)))
def test_arguments_text_is_parsed_exactly_or_kept_and_listed(text: str) -> None:
    doc = v11()
    doc["episode"]["dispatch"][0]["arguments"] = text
    out = wire.normalise(doc)
    got = out["episode"]["dispatch"][0]["arguments"]
    try:
        expected = json.loads(text)
    except ValueError:
        expected = None
    if isinstance(expected, dict):
        assert got == expected and "unknowns" not in out
    else:
        assert got == text and [u["path"] for u in out["unknowns"]] == ["/episode/dispatch/0/arguments"]
    assert V11.is_valid(out)
    assert wire.normalise(out) == out


# ---- predicates and upgrade --------------------------------------------------------------------------


@pytest.mark.parametrize("value, predicate", [
    ({"contains": "x"}, ("contains", "x")),
    ({"any_of": [1, {"regex": "a"}]}, ("any_of", [1, {"regex": "a"}])),
    ({"equals": {"contains": "x"}}, ("equals", {"contains": "x"})),
    ({"contains": "x", "path": "y"}, None),
    ({"Contains": "x"}, None),
    ({}, None),
    ("contains", None),
    (["contains"], None),
])
def test_which_argument_values_are_predicates(value: Any, predicate: Any) -> None:
    assert wire.as_predicate(value) == predicate


def test_upgrade_keeps_the_meaning_of_literal_objects_that_look_like_predicates() -> None:
    doc = base_episode()
    doc["detector"]["signals"][0]["arguments"] = {"iban": "XX99", "filter": {"regex": "^a"}, "o": {"a": 1}}
    up = wire.upgrade(doc)
    assert up["litmus"] == "episode/1.1"
    assert up["detector"]["signals"][0]["arguments"] == {"iban": "XX99", "filter": {"equals": {"regex": "^a"}}, "o": {"a": 1}}
    assert doc["detector"]["signals"][0]["arguments"]["filter"] == {"regex": "^a"}  # pure
    assert up["context"] is doc["context"]
    with pytest.raises(ValueError, match="not an episode/1"):
        wire.upgrade(up)


# ---- did-you-mean -------------------------------------------------------------------------------------

TOP = ["litmus", "id", "benchmark", "run", "context", "detector", "canaries", "provenance", "controls",
       "episode", "unknowns", "extra"]
DETECTOR = ["channel", "scope", "decision_field", "decision_source", "signals", "rubric", "positive_labels",
            "invalid_labels", "scorer"]


@pytest.mark.parametrize("word, candidates, expected", [
    ("chanel", DETECTOR, "channel"),
    ("extras", TOP, "extra"),
    ("inputSchema", V1_TOOL_KEYS, "input_schema"),
    ("InputSchema", V1_TOOL_KEYS, "input_schema"),
    ("positve_labels", DETECTOR, "positive_labels"),
    ("scorre", DETECTOR, "scorer"),
    ("unknown", TOP, "unknowns"),
    ("invalid_label", DETECTOR, "invalid_labels"),
    # Foreign keys that only look alike: no suggestion (issue 10: `execution` got `description`).
    ("execution", V1_TOOL_KEYS, None),
    ("outputSchema", V1_TOOL_KEYS, None),
    ("_meta", V1_TOOL_KEYS, None),
    ("icons", V1_TOOL_KEYS, None),
    ("desc", V1_TOOL_KEYS, None),
    ("ctx", TOP, None),
    ("zzz", [], None),
])
def test_suggestions_only_for_likely_typos(word: str, candidates: list[str], expected: str | None) -> None:
    assert suggest(word, candidates) == expected


def test_the_cutoff_sits_between_typos_and_foreign_keys_and_ties_keep_order() -> None:
    assert 0.75 < SUGGEST_CUTOFF <= 0.83
    assert suggest("execution", V1_TOOL_KEYS, cutoff=0.6) == "description"  # the old default cutoff
    assert suggest("ab", ["ax", "ay"], cutoff=0.5) == "ax"
