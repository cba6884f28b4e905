"""The compiled schema validator (fastjsonschema) and jsonschema accept and reject the same documents.

The compiled validator decides, jsonschema explains (io/episode_schema.py). These tests hold the two
to one meaning: on every episode the project ships or tests with, on hypothesis mutations of them
(keys dropped, added, retyped; bad enums; unicode, big numbers, trailing newlines), and under both
format versions' schemas. A disagreement the loader can see fails closed; one it cannot is what this
corpus is for.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from _helpers import base_episode
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.errors import FactsError
from litmus_rules.io import episode_schema, load, wire
from litmus_rules.io.load import INVALID, prepare_episode

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = (wire.VERSION_1, wire.VERSION_1_1)
SOURCES = ("examples", "tests/data", "tests/cases", "rules/tests")  # not tests/hostile: alias bombs


def _documents(path: Path) -> Iterator[Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        if path.suffix == ".jsonl":
            yield from (json.loads(line) for line in text.splitlines() if line.strip())
        elif path.suffix == ".json":
            yield json.loads(text)
        else:
            yield from yaml.safe_load_all(text)
    except (ValueError, RecursionError, yaml.YAMLError):  # the hostile inputs
        return


def _episodes(value: Any) -> Iterator[dict[str, Any]]:
    """Every mapping that says it is an episode, however deep (rule tests embed them)."""
    if isinstance(value, dict):
        if "litmus" in value or "detector" in value:
            yield value
            return
        for child in value.values():
            yield from _episodes(child)
    elif isinstance(value, list):
        for child in value:
            yield from _episodes(child)


def _json_shaped(value: Any) -> bool:
    """What a decoder can produce (YAML's timestamps and the like excluded)."""
    try:
        return json.loads(json.dumps(value, allow_nan=True)) == value
    except (TypeError, ValueError, RecursionError):
        return False


def _corpus() -> list[dict[str, Any]]:
    found = [base_episode()]
    for source in SOURCES:
        for path in sorted((ROOT / source).rglob("*")):
            if path.suffix in (".yaml", ".yml", ".json", ".jsonl") and path.is_file():
                for doc in _documents(path):
                    found.extend(e for e in _episodes(doc) if _json_shaped(e))
    return found


CORPUS = _corpus()


def _fast_accepts(version: str, doc: Any) -> bool:
    compiled = episode_schema._compiled(version)
    assert compiled is not None
    try:
        compiled(doc)
    except Exception:  # noqa: BLE001 -- any rejection
        return False
    return True


def _jsonschema_accepts(version: str, doc: Any) -> bool:
    return next(episode_schema._validator(version).iter_errors(doc), None) is None


def _agree(doc: Any) -> None:
    for version in VERSIONS:
        assert _fast_accepts(version, doc) == _jsonschema_accepts(version, doc), (version, doc)


def test_the_corpus_is_large_and_mixed() -> None:
    verdicts = [_jsonschema_accepts(wire.schema_version(d), d) for d in CORPUS]
    assert len(CORPUS) >= 60 and sum(verdicts) >= 15 and verdicts.count(False) >= 20


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_both_validators_agree_on_every_shipped_and_tested_episode(index: int) -> None:
    _agree(CORPUS[index])


def test_the_shipped_schemas_take_the_compiled_path() -> None:
    for version in VERSIONS:
        assert episode_schema._compiled(version) is not None, version


# ---- mutations -------------------------------------------------------------------------------------


def _schema_strings() -> list[str]:
    out: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                out.add(key)
                if key in ("enum", "const"):
                    out.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for version in VERSIONS:
        walk(episode_schema._load(version))
    return sorted(s for s in out if not s.startswith("$"))


STRINGS = _schema_strings()
VALID = [d for d in CORPUS if _jsonschema_accepts(wire.schema_version(d), d)]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**200),
    st.floats(allow_nan=True), st.just(1.0), st.sampled_from(STRINGS),
    st.sampled_from(STRINGS).map(lambda s: s + "\n"), st.text(max_size=6), st.just(""),
    st.sampled_from(["/a", "/a\n", "/~2", "a", "/é/~0", "\u212a", "ſ", "episode/1.1\n"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(STRINGS), inner, max_size=3)),
    max_leaves=6,
)


def _containers(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, child in items:
        if isinstance(child, (dict, list)):
            yield from _containers(child, path + (key,))


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_both_validators_agree_on_mutated_episodes(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(VALID)))
    if data.draw(st.booleans()):
        doc["litmus"] = data.draw(st.sampled_from(VERSIONS))
    for _ in range(data.draw(st.integers(1, 3))):
        target = _at(doc, data.draw(st.sampled_from(list(_containers(doc)))))
        op = data.draw(st.sampled_from(["drop", "set", "add", "retype"]))
        if isinstance(target, dict):
            keys = list(target)
            if op == "drop" and keys:
                del target[data.draw(st.sampled_from(keys))]
            elif op in ("set", "retype") and keys:
                target[data.draw(st.sampled_from(keys))] = data.draw(values)
            else:
                target[data.draw(st.sampled_from(STRINGS))] = data.draw(values)
        elif isinstance(target, list):
            if op == "drop" and target:
                target.pop(data.draw(st.integers(0, len(target) - 1)))
            elif op in ("set", "retype") and target:
                target[data.draw(st.integers(0, len(target) - 1))] = data.draw(values)
            else:
                target.append(data.draw(values) if op == "retype" else copy.deepcopy(data.draw(st.sampled_from(target or [{}]))))
    _agree(doc)


def test_a_final_dollar_keeps_pythons_meaning_under_both() -> None:
    # jsonschema's `$` matches before a final newline; fastjsonschema would read it as `\Z`.
    schema = {"type": "object", "properties": {"p": {"type": "string", "pattern": "^ab$"}}}
    prepared = episode_schema._vetted(schema)
    assert prepared is not None
    import fastjsonschema
    import jsonschema

    compiled = fastjsonschema.compile(prepared, use_formats=False, use_default=False)
    reference = jsonschema.Draft202012Validator(schema)
    for text in ["ab", "ab\n", "ab\n\n", "xab", "a", "ab\r"]:
        try:
            compiled({"p": text})
            fast = True
        except fastjsonschema.JsonSchemaValueException:
            fast = False
        assert fast == reference.is_valid({"p": text}), repr(text)


@pytest.mark.parametrize("schema", [
    {"type": "object", "unevaluatedProperties": False},  # 2020-12: fastjsonschema does not know it
    {"type": "array", "prefixItems": [{"type": "string"}]},
    {"properties": {"a": {"$ref": "#/$defs/x", "type": "string"}}, "$defs": {"x": {}}},  # a $ref with siblings
    {"properties": {"a": {"$ref": "https://example.invalid/s.json"}}},  # remote
    {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": "^a$|^b$"},
    {"enum": [1, True]},  # only strings are vetted
])
def test_a_schema_outside_the_vetted_keywords_leaves_jsonschema_alone_to_decide(schema: dict[str, Any]) -> None:
    assert episode_schema._vetted(schema) is None


# ---- failing closed ----------------------------------------------------------------------------------


def _always_rejects(data: Any) -> Any:
    raise ValueError("data.context must be object")


def test_a_rejection_jsonschema_does_not_confirm_is_an_error_never_a_scored_episode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(episode_schema, "_compiled", lambda version: _always_rejects)
    data, problem = prepare_episode(base_episode(), source="ep.yaml")
    assert data is None and isinstance(problem, FactsError)
    assert problem.code == INVALID and problem.pointer == ""
    assert problem.message == episode_schema.DISAGREEMENT.format(detail="data.context must be object")

    import litmus_rules

    verdict = litmus_rules.load_rules().evaluate(base_episode())  # validate=True: the io stage
    assert verdict.verdict == "ERROR"


def test_a_rejection_jsonschema_confirms_keeps_its_exact_message(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = base_episode()
    del ep["detector"]
    expected = load.validate_episode(ep, source="ep.yaml")
    monkeypatch.setattr(episode_schema, "_compiled", lambda version: _always_rejects)
    got = load.validate_episode(ep, source="ep.yaml")
    assert expected is not None and got is not None
    assert (got.message, got.pointer, got.code) == (expected.message, expected.pointer, expected.code)
    assert "missing required key `detector`" in got.message


def test_a_document_not_made_of_json_types_is_judged_by_jsonschema_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # fastjsonschema takes a tuple for an array; jsonschema does not. Such a document never reaches it.
    ep = base_episode()
    ep["context"]["messages"] = tuple(ep["context"]["messages"])
    monkeypatch.setattr(episode_schema, "_compiled", lambda version: pytest.fail("compiled validator used"))
    problem = load.validate_episode(ep, source="ep.yaml")
    assert problem is not None and problem.code == INVALID
    assert problem.message == "context: `messages` must be a list (got a value of type tuple)"


def test_the_schema_comes_from_the_document_tag_only_as_one_of_the_shipped_versions() -> None:
    for tag in ["episode/1", "episode/1.1", "../../etc/passwd", "/tmp/evil.json", None, 3, "episode/2"]:
        assert wire.schema_version({"litmus": tag}) in VERSIONS
