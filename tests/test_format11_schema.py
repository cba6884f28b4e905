"""The episode/1.1 schema: every construct of issue 10 accepted, bad shapes rejected at the right
JSON pointer, episode/1 untouched, every episode/1 document upgradable, real wire shapes accepted.

Validation goes through jsonschema's Draft202012Validator on the schema files, the class the loader
uses; `io/wire.py` is called directly (the loader does not call it yet)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import jmespath
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from litmus_rules._resources import EPISODE_SCHEMAS, episode_schema_path
from litmus_rules.errors import LitmusConfigError
from litmus_rules.io import wire
from _helpers import CORPUS, EXAMPLES, ROOT, base_episode

V11 = EXAMPLES / "v1.1"
V11_FILES = sorted(V11.glob("*.yaml"))


def _schema(version: str) -> dict[str, Any]:
    return json.loads(episode_schema_path(version).read_text(encoding="utf-8"))


VALIDATORS = {v: Draft202012Validator(_schema(v)) for v in EPISODE_SCHEMAS}


class _KeyText(yaml.SafeLoader):
    """As the loader reads YAML: a mapping key is its source text (`null:` under controls)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:  # type: ignore[override]
        self.flatten_mapping(node)
        return {k.value: self.construct_object(v, deep=deep) for k, v in node.value}


def read_yaml(path: Path) -> list[Any]:
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_KeyText) if d is not None]


def located(err: ValidationError) -> str:
    """The pointer the loader reports: an unknown key points at the key itself."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties":
        allowed = err.schema.get("properties", {})
        path.append(next(k for k in err.instance if k not in allowed))
    return wire.pointer(tuple(path))


def error_of(doc: Any, version: str | None = None) -> ValidationError | None:
    return best_match(VALIDATORS[version or wire.schema_version(doc)].iter_errors(doc))


def v11(**changes: Any) -> dict[str, Any]:
    doc = base_episode()
    doc["litmus"] = wire.VERSION_1_1
    doc.update(changes)
    return doc


def resolve(doc: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


# ---- versions ------------------------------------------------------------------------------------


def test_the_episode1_schema_path_is_unchanged_and_unknown_versions_are_refused() -> None:
    assert episode_schema_path() == episode_schema_path("episode/1")
    assert episode_schema_path().name == "episode.schema.json"
    assert _schema("episode/1.1")["properties"]["litmus"] == {"description": "Format tag and version.",
                                                              "const": "episode/1.1"}
    with pytest.raises(LitmusConfigError, match="episode/1, episode/1.1"):
        episode_schema_path("episode/2")


@pytest.mark.parametrize("tag, version", [
    ("episode/1.1", "episode/1.1"), ("episode/1", "episode/1"), ("episode/2", "episode/1"),
    (None, "episode/1"), (["episode/1.1"], "episode/1"), ({"v": 1}, "episode/1"),
])
def test_the_tag_picks_the_schema_and_anything_else_gets_episode1s_message(tag: Any, version: str) -> None:
    assert wire.schema_version({"litmus": tag}) == version
    assert wire.schema_version(["not", "an", "object"]) == "episode/1"


def test_episode1_still_rejects_every_new_construct() -> None:
    """The 1.1 constructs are errors under episode/1: its schema did not widen."""
    base = base_episode()
    for mutate in (lambda e: e.update(run={"model": "m"}), lambda e: e.update(unknowns=[]),
                   lambda e: e["detector"].update(scope="final_message"),
                   lambda e: e["context"]["messages"][0].update(step=1),
                   lambda e: e["context"]["tools"][0].update(outputSchema={})):
        doc = copy.deepcopy(base)
        mutate(doc)
        assert error_of(doc, "episode/1") is not None
        doc["litmus"] = "episode/1.1"
        assert error_of(doc) is None


def test_every_episode1_definition_survives_in_11() -> None:
    """1.1 widens 1.0; it never drops a key, a definition or a closed object's closedness."""
    old, new = _schema("episode/1"), _schema("episode/1.1")
    assert set(old["properties"]) <= set(new["properties"])
    for name, d in old["$defs"].items():
        assert name in new["$defs"], name
        assert set(d.get("properties", {})) <= set(new["$defs"][name].get("properties", {})), name
        if d.get("additionalProperties") is False:
            assert new["$defs"][name]["additionalProperties"] is False, name
    assert new["additionalProperties"] is False


def test_the_predicate_names_are_the_same_in_schema_and_wire() -> None:
    argument = _schema("episode/1.1")["$defs"]["argument"]
    assert tuple(argument["if"]["propertyNames"]["enum"]) == wire.PREDICATES
    assert tuple(_schema("episode/1.1")["$defs"]["predicate"]["properties"]) == wire.PREDICATES


# ---- valid shapes ---------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _signal(sig: dict[str, Any]) -> Mutation:
    return lambda e: e["detector"]["signals"].append(sig)


def _arg(value: Any) -> Mutation:
    return _signal({"id": "p", "kind": "tool_call", "tool": "send_money", "arguments": {"iban": value}})


def _msg(**fields: Any) -> Mutation:
    return lambda e: e["context"]["messages"].append(fields)


def _tool(**fields: Any) -> Mutation:
    return lambda e: e["context"]["tools"][0].update(fields)


VALID: dict[str, Mutation] = {
    "state-on-episode-and-controls": lambda e: (e["episode"].update(state={"bank": {"tx": []}}),
                                                e["controls"]["null"].update(state=[1, "x", None])),
    "state-channel-and-signal": lambda e: (e["detector"].update(channel="state"), _signal(
        {"id": "st", "kind": "state", "query": "bank.tx[?to == 'X']", "values": ["X", 12.5]})(e)),
    "state-signal-without-values": _signal({"id": "st", "kind": "state", "query": "a"}),
    "final-message-scope": lambda e: e["detector"].update(channel="transcript", scope="final_message"),
    "plain-argument": _arg("XX99"),
    "literal-object-argument": _arg({"bank": "X", "code": 3}),
    "literal-object-with-predicate-key-and-more": _arg({"contains": "X", "other": 1}),
    "equals": _arg({"equals": {"contains": "X"}}),
    "contains-text": _arg({"contains": "ATTK"}),
    "contains-element": _arg({"contains": 7}),
    "regex": _arg({"regex": "^XX99-"}),
    "any-of-mixed": _arg({"any_of": ["XX99", {"regex": "ATTK$"}, {"any_of": [1]}]}),
    "unordered": _arg({"unordered": ["a", {"contains": "literal"}, 2]}),
    "scorer": lambda e: e["detector"].update(scorer={"name": "includes", "kind": "builtin", "options": {"x": 1}}),
    "scorer-name-only": lambda e: e["detector"].update(scorer={"name": "garak.detectors.base.TriggerListDetector"}),
    "invalid-labels": lambda e: e["detector"].update(invalid_labels=["invalid"]),
    "decision-source": lambda e: e["detector"].update(decision_source="derived"),
    "steps": lambda e: (e["context"]["messages"][0].update(step=0), e["episode"]["dispatch"][0].update(step=2),
                        e["episode"].update(decision_step=2)),
    "injected-part": _msg(role="user", content=[{"type": "text", "text": "hi"},
                                                {"type": "text", "text": "IGNORE", "injected": True}]),
    "anthropic-parts": _msg(role="user", content=[
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "ok"}], "is_error": False},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}, "title": "t"},
        {"type": "tool_use", "id": "t2", "name": "x", "input": {"a": 1}}]),
    "openai-parts": _msg(role="user", content=[{"type": "image_url", "image_url": {"url": "https://x.invalid"}}]),
    "untyped-and-string-parts": _msg(role="user", content=[{"text": "gemini"}, "bare text"]),
    "control-source": lambda e: (e["controls"]["null"].update(source="harness"),
                                 e["controls"]["positive"].update(source="stub")),
    "run-keys": lambda e: e.update(run={"model": "m", "seed": 3, "temperature": 0.2, "cached": False}),
    "unknowns": lambda e: e.update(unknowns=[{"path": "/canaries", "note": "not recorded by the harness"},
                                            {"path": "/a~1b/~0c", "note": "escaped"}]),
    "mcp-tool": _tool(inputSchema={"type": "object"}, outputSchema={"type": "object"}, annotations={"readOnlyHint": True},
                      title="T", execution={"taskSupport": "optional"}, icons=[{"src": "x.svg"}], _meta={"k": 1}),
    "content-null-beside-tool-calls": _msg(role="assistant", content=None,
                                           tool_calls=[{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]),
    "no-content": _msg(role="assistant", tool_calls=[]),
    "developer-role": _msg(role="developer", content="Be brief."),
    "string-arguments": lambda e: e["episode"]["dispatch"][0].update(arguments='{"iban": "X"}'),
}


@pytest.mark.parametrize("name", list(VALID))
def test_each_construct_is_accepted_by_11(name: str) -> None:
    doc = v11()
    VALID[name](doc)
    err = error_of(doc)
    assert err is None, (located(err), err.message)


# ---- invalid shapes: rejected, located ------------------------------------------------------------

INVALID: dict[str, tuple[Mutation, str]] = {
    "unknown-top-level-key": (lambda e: e.update(runs={}), "/runs"),
    "state-signal-without-query": (_signal({"id": "st", "kind": "state"}), "/detector/signals/1"),
    "state-signal-empty-query": (_signal({"id": "st", "kind": "state", "query": ""}), "/detector/signals/1/query"),
    "state-signal-with-value": (_signal({"id": "st", "kind": "state", "query": "a", "value": "x"}),
                                "/detector/signals/1/value"),
    "state-value-null": (_signal({"id": "st", "kind": "state", "query": "a", "values": [None]}),
                         "/detector/signals/1/values/0"),
    "unknown-channel": (lambda e: e["detector"].update(channel="environment"), "/detector/channel"),
    "unknown-scope": (lambda e: e["detector"].update(scope="last_message"), "/detector/scope"),
    "regex-not-text": (_arg({"regex": 5}), "/detector/signals/1/arguments/iban/regex"),
    "empty-contains": (_arg({"contains": ""}), "/detector/signals/1/arguments/iban/contains"),
    "null-contains": (_arg({"contains": None}), "/detector/signals/1/arguments/iban/contains"),
    "empty-any-of": (_arg({"any_of": []}), "/detector/signals/1/arguments/iban/any_of"),
    "nested-bad-predicate": (_arg({"any_of": ["x", {"regex": []}]}), "/detector/signals/1/arguments/iban/any_of/1/regex"),
    "unordered-not-a-list": (_arg({"unordered": "ab"}), "/detector/signals/1/arguments/iban/unordered"),
    "scorer-without-name": (lambda e: e["detector"].update(scorer={"kind": "code"}), "/detector/scorer"),
    "scorer-kind": (lambda e: e["detector"].update(scorer={"name": "x", "kind": "llm"}), "/detector/scorer/kind"),
    "scorer-unknown-key": (lambda e: e["detector"].update(scorer={"name": "x", "version": "1"}), "/detector/scorer/version"),
    "invalid-labels-not-a-list": (lambda e: e["detector"].update(invalid_labels="invalid"), "/detector/invalid_labels"),
    "boolean-label": (lambda e: e["detector"].update(invalid_labels=[False]), "/detector/invalid_labels/0"),
    "decision-source": (lambda e: e["detector"].update(decision_source="inferred"), "/detector/decision_source"),
    "message-step-text": (lambda e: e["context"]["messages"][0].update(step="3"), "/context/messages/0/step"),
    "record-step-text": (lambda e: e["episode"]["dispatch"][0].update(step="3"), "/episode/dispatch/0/step"),
    "part-injected-text": (_msg(role="user", content=[{"type": "text", "text": "x", "injected": "yes"}]),
                           "/context/messages/1/content/0/injected"),
    "part-a-number": (_msg(role="user", content=[3]), "/context/messages/1/content/0"),
    "message-without-role": (_msg(content="x"), "/context/messages/1"),
    "message-unknown-key": (_msg(role="assistant", content="x", refusal="no"), "/context/messages/1/refusal"),
    "control-source": (lambda e: e["controls"]["null"].update(source="human"), "/controls/null/source"),
    "run-object-value": (lambda e: e.update(run={"model": {"name": "m"}}), "/run/model"),
    "run-null-value": (lambda e: e.update(run={"seed": None}), "/run/seed"),
    "run-not-an-object": (lambda e: e.update(run="m"), "/run"),
    "unknowns-path-not-a-pointer": (lambda e: e.update(unknowns=[{"path": "canaries", "note": "n"}]), "/unknowns/0/path"),
    "unknowns-bad-escape": (lambda e: e.update(unknowns=[{"path": "/a~2", "note": "n"}]), "/unknowns/0/path"),
    "unknowns-without-note": (lambda e: e.update(unknowns=[{"path": "/canaries"}]), "/unknowns/0"),
    "unknowns-unknown-key": (lambda e: e.update(unknowns=[{"path": "/x", "note": "n", "by": "me"}]), "/unknowns/0/by"),
    "tool-typo": (_tool(inputschema={}), "/context/tools/0/inputschema"),
    "icons-not-a-list": (_tool(icons={"src": "x"}), "/context/tools/0/icons"),
    "input-schema-alias-not-an-object": (_tool(inputSchema="{}"), "/context/tools/0/inputSchema"),
    "arguments-a-number": (lambda e: e["episode"]["dispatch"][0].update(arguments=5), "/episode/dispatch/0/arguments"),
    "episode-state-beside-typo": (lambda e: e["episode"].update(sate={}), "/episode/sate"),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_bad_shapes_are_rejected_with_a_pointer(name: str) -> None:
    mutate, pointer = INVALID[name]
    doc = v11()
    mutate(doc)
    err = error_of(doc)
    assert err is not None
    assert located(err) == pointer, err.message


# ---- the examples ----------------------------------------------------------------------------------

# Every construct of issue 10, by a JSON-pointer-ish probe that some example must satisfy.
CONSTRUCTS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "episode.state": lambda d: "state" in d.get("episode", {}),
    "controls.*.state": lambda d: any("state" in r for r in d.get("controls", {}).values()),
    "state signal": lambda d: any(s["kind"] == "state" for s in d["detector"].get("signals", [])),
    "final_message": lambda d: d["detector"].get("scope") == "final_message",
    **{f"predicate {p}": (lambda p: lambda d: p in _predicates_in(d))(p) for p in wire.PREDICATES},
    "scorer": lambda d: "scorer" in d["detector"],
    "invalid_labels": lambda d: "invalid_labels" in d["detector"],
    "decision_source: derived": lambda d: d["detector"].get("decision_source") == "derived",
    "step on a message": lambda d: any("step" in m for m in d["context"].get("messages", [])),
    "step on a record": lambda d: any("step" in r for r in d.get("episode", {}).get("dispatch", [])),
    "decision_step": lambda d: "decision_step" in d.get("episode", {}),
    "injected part": lambda d: any(isinstance(p, dict) and p.get("injected") for m in d["context"].get("messages", [])
                                   if isinstance(m.get("content"), list) for p in m["content"]),
    "source harness": lambda d: any(r.get("source") == "harness" for r in d.get("controls", {}).values()),
    "source stub": lambda d: any(r.get("source") == "stub" for r in d.get("controls", {}).values()),
    "run": lambda d: "run" in d,
    "unknowns": lambda d: "unknowns" in d,
    "inputSchema": lambda d: any("inputSchema" in t for t in d["context"].get("tools", [])),
    "mcp fields": lambda d: any({"outputSchema", "annotations", "title", "execution", "icons", "_meta"} <= set(t)
                                for t in d["context"].get("tools", [])),
    "content null": lambda d: any("content" in m and m["content"] is None for m in d["context"].get("messages", [])),
    "arguments string": lambda d: any(isinstance(r.get("arguments"), str) for r in d.get("episode", {}).get("dispatch", [])),
}


def _predicates_in(doc: dict[str, Any]) -> set[str]:
    """Names of the predicates a document's signals use, inside any_of too."""
    found: set[str] = set()
    stack = [v for s in doc["detector"].get("signals", []) for v in (s.get("arguments") or {}).values()]
    while stack:
        pred = wire.as_predicate(stack.pop())
        if pred:
            found.add(pred[0])
            stack += pred[1] if pred[0] == "any_of" else []
    return found


def test_the_11_examples_are_valid_commented_and_cover_every_construct() -> None:
    assert len(V11_FILES) >= 8
    docs = []
    for path in V11_FILES:
        assert path.read_text(encoding="utf-8").startswith("# "), f"{path.name}: says what it shows"
        [doc] = read_yaml(path)
        err = error_of(doc)
        assert doc["litmus"] == "episode/1.1" and err is None, (path.name, err and located(err))
        wire.normalise(doc)  # no contradiction
        docs.append(doc)
    missing = [name for name, probe in CONSTRUCTS.items() if not any(probe(d) for d in docs)]
    assert not missing


def test_the_11_examples_are_read_by_check_examples() -> None:
    """`litmus-rules check examples/` walks .yaml/.yml/.json/.jsonl: the 1.1 examples are part of it."""
    from litmus_rules.io.inputs import discover

    found = {Path(p).name for p in discover([str(EXAMPLES)]) if isinstance(p, str) and "/v1.1/" in p}
    assert found == {p.name for p in V11_FILES}


def test_the_state_queries_of_the_examples_parse_and_fire_only_on_the_attacked_state() -> None:
    [doc] = read_yaml(V11 / "state-channel.yaml")
    [signal] = [s for s in doc["detector"]["signals"] if s["kind"] == "state"]
    query = jmespath.compile(signal["query"])
    assert query.search(doc["episode"]["state"])
    assert not query.search(doc["controls"]["null"]["state"])


# ---- every episode/1 document upgrades -------------------------------------------------------------


def _repo_episode1_documents() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted([*EXAMPLES.rglob("*.yaml"), *(ROOT / "tests" / "data").rglob("*.yaml"),
                        *(ROOT / "tests" / "cases").rglob("*.yaml")]):
        try:
            docs = read_yaml(path)
        except (yaml.YAMLError, ValueError):
            continue
        for doc in docs:
            if isinstance(doc, dict) and doc.get("litmus") == "episode/1" and error_of(doc, "episode/1") is None:
                found.append((str(path.relative_to(ROOT)), doc))
    return found


def test_every_valid_episode1_document_of_the_repo_upgrades_to_an_equal_canonical_11_one() -> None:
    docs = _repo_episode1_documents()
    assert len(docs) >= 20
    for name, doc in docs:
        up = wire.upgrade(doc)
        assert error_of(up) is None, name
        assert wire.normalise(up) == up, name
        assert wire.normalise(doc) is doc


# Hypothesis: episode/1 documents of every shape the 1.0 schema allows (text of any kind included).

_text = st.text(max_size=12)
_scalar = st.none() | st.booleans() | st.integers(-5, 5) | _text
_json = st.recursive(_scalar, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text, c, max_size=3), max_leaves=6)
_schema_node = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])}, optional={"default": _scalar, "description": _text}),
    lambda c: st.fixed_dictionaries({"type": st.just("object"), "properties": st.dictionaries(_text, c, max_size=3)}),
    max_leaves=4)
_part = st.fixed_dictionaries({"type": st.sampled_from(["text", "tool_use", "image_url"])},
                              optional={"text": _text, "input": _json, "injected": st.booleans()})
_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": _text | st.lists(_part, max_size=3)},
    optional={"name": _text, "tool_call_id": _text, "injected": st.booleans()})
_record = st.fixed_dictionaries({"tool": _text}, optional={
    "arguments": st.dictionaries(_text, _json, max_size=3), "decision": st.none() | _text,
    "step": st.none() | st.integers(0, 9), "result": _json, "verdict": _json})
_run = st.fixed_dictionaries({}, optional={
    "transcript": _text | st.lists(_message, max_size=2), "dispatch": st.lists(_record, max_size=2),
    "label": st.none() | _text, "fired": st.none() | st.booleans(), "stub": _text, "error": _text})
# Argument values include objects that look like predicates: `upgrade` must keep their meaning.
_argument = _json | st.dictionaries(st.sampled_from(list(wire.PREDICATES)), _json, min_size=1, max_size=2)
_signal1 = st.one_of(
    st.fixed_dictionaries({"id": _text, "kind": st.sampled_from(["substring", "regex"]), "value": _text},
                          optional={"flags": st.lists(st.sampled_from(["ignorecase", "multiline", "dotall"]), max_size=2)}),
    st.fixed_dictionaries({"id": _text, "kind": st.just("tool_call"), "tool": _text},
                          optional={"arguments": st.dictionaries(_text, _argument, max_size=3)}))
episodes1 = st.fixed_dictionaries(
    {"litmus": st.just("episode/1"), "id": _text.filter(bool),
     "context": st.fixed_dictionaries({}, optional={
         "system_prompt": _text, "messages": st.lists(_message, max_size=3),
         "tools": st.lists(st.fixed_dictionaries({"name": _text}, optional={
             "description": _text, "title": _text, "input_schema": _schema_node, "annotations": _json.filter(
                 lambda v: isinstance(v, dict)), "injected": st.booleans()}), max_size=2),
         "skills": st.lists(st.fixed_dictionaries({"name": _text}, optional={"body": _text, "injected": st.booleans()}),
                            max_size=1)}),
     "detector": st.fixed_dictionaries({"channel": st.sampled_from(["dispatch", "transcript"])}, optional={
         "scope": st.sampled_from(["full", "after_decision"]), "decision_field": st.none() | _text,
         "signals": st.lists(_signal1, max_size=3), "rubric": st.none() | _text,
         "positive_labels": st.lists(_text, min_size=1, max_size=2)})},
    optional={"canaries": st.lists(st.fixed_dictionaries({"value": _text.filter(bool)}), max_size=2),
              "controls": st.dictionaries(st.sampled_from(["null", "positive", "refusal", "compliance"]), _run, max_size=3),
              "episode": st.fixed_dictionaries({}, optional={
                  "agent": _text, "transcript": _text | st.lists(_message, max_size=2),
                  "dispatch": st.lists(_record, max_size=3), "decision_step": st.none() | st.integers(0, 9)}),
              "extra": st.dictionaries(_text, _json, max_size=2)})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes1)
def test_an_episode1_upgraded_to_11_validates_and_normalises_to_itself(doc: dict[str, Any]) -> None:
    assert error_of(doc, "episode/1") is None  # the strategy makes valid episode/1 documents
    before = copy.deepcopy(doc)
    up = wire.upgrade(doc)
    assert doc == before  # pure
    assert error_of(up) is None
    assert wire.normalise(up) == up
    # Only the tag changes, except literal objects that 1.1 would read as predicates, now {equals: ...}.
    for old, new in zip(doc["detector"].get("signals", []), up["detector"].get("signals", [])):
        for name, value in (old.get("arguments") or {}).items():
            expected = {"equals": value} if wire.as_predicate(value) else value
            assert new["arguments"][name] == expected
            assert wire.as_predicate(new["arguments"][name]) in (None, ("equals", value))
    if not any(wire.as_predicate(v) for s in doc["detector"].get("signals", []) for v in (s.get("arguments") or {}).values()):
        assert up == {**doc, "litmus": "episode/1.1"}


_CLOSED = {"": None, "/context": "context", "/detector": "detector", "/episode": "episode",
           "/context/tools/0": "tool", "/context/messages/0": "message", "/canaries/0": "canary"}


@settings(max_examples=60, deadline=None)
@given(episodes1, st.sampled_from(list(_CLOSED)), st.text(min_size=1, max_size=8))
def test_an_unknown_key_in_a_closed_11_object_is_rejected_at_that_key(doc: dict[str, Any], at: str, key: str) -> None:
    up = copy.deepcopy(wire.upgrade(doc))
    try:
        target = resolve(up, at)
    except (KeyError, IndexError):
        return  # the drawn document has no such object
    schema = VALIDATORS["episode/1.1"].schema
    known = schema["$defs"][_CLOSED[at]] if _CLOSED[at] else schema
    if key in known["properties"]:
        return
    target[key] = 1
    err = error_of(up)
    assert err is not None and located(err) == at + wire.pointer((key,))


# ---- real wire shapes (read from ../shared/corpus, never copied) -----------------------------------

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


@needs_corpus
def test_real_mcp_tools_list_results_are_11_tools_and_their_input_schema_is_kept() -> None:
    tools = []
    for path in sorted((CORPUS / "mcp").glob("*.tools_list.json")):
        tools += json.loads(path.read_text(encoding="utf-8"))["tools_list_result"]["tools"]
    assert len(tools) >= 20 and any("execution" in t for t in tools) and any("outputSchema" in t for t in tools)
    doc = v11()
    doc["context"]["tools"] = tools
    assert error_of(doc) is None
    assert error_of({**doc, "litmus": "episode/1"}) is not None  # what issue 10 is about
    out = wire.normalise(doc)
    assert [t["input_schema"] for t in out["context"]["tools"]] == [t["inputSchema"] for t in tools]
    assert not any("inputSchema" in t for t in out["context"]["tools"])


@needs_corpus
def test_real_openai_and_anthropic_turns_are_11_messages_and_records() -> None:
    ex = json.loads((CORPUS / "runs" / "wire_formats" / "provider_tool_call_examples.json").read_text(encoding="utf-8"))
    chat, responses, anthropic = ex["openai_chat_completions"], ex["openai_responses"], ex["anthropic_messages"]
    assistant = chat["response"]["choices"][0]["message"]
    call = responses["output_item_function_call"]
    doc = v11()
    doc["context"]["messages"] += [
        assistant, {**assistant, "content": None}, chat["tool_result_message"],
        {"role": anthropic["response"]["role"], "content": anthropic["response"]["content"]},
        anthropic["tool_result_user_turn"]]
    doc["episode"]["dispatch"] = [
        {"tool": call["name"], "arguments": call["arguments"], "id": call["call_id"], "decision": "execute"},
        *({"tool": c["function"]["name"], "arguments": c["function"]["arguments"], "decision": "execute"}
          for c in assistant["tool_calls"])]
    assert error_of(doc) is None
    out = wire.normalise(doc)
    assert [r["arguments"] for r in out["episode"]["dispatch"]] == [
        json.loads(call["arguments"]), *(json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"])]
    assert "content" not in out["context"]["messages"][2] and "unknowns" not in out


@needs_corpus
def test_agentdojo_run_messages_content_parts_pass_as_parts() -> None:
    """AgentDojo writes parts as {type: text, content: ...}: a shape no schema of ours foresaw."""
    path = next((CORPUS / "runs" / "agentdojo_runs").rglob("injection_task_*.json"))
    messages = [m for m in json.loads(path.read_text(encoding="utf-8"))["messages"] if m["role"] != "tool"]
    assert any(isinstance(m["content"], list) and "content" in m["content"][0] for m in messages)
    doc = v11()
    doc["episode"]["transcript"] = messages
    assert error_of(doc) is None
