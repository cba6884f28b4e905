"""The parsed-ruleset cache (engine/rulecache.py, lang/astjson.py): a stored tree reads back equal to
the parsed one (spans and comments too) and gives the same verdicts; a hit parses nothing; a
damaged, foreign or planted file is a miss, never an error and never another ruleset."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings

from _helpers import ROOT
from litmus_rules.engine import rulecache, stages
from litmus_rules.engine.ruleset import load_rules, load_rules_text
from litmus_rules.lang import ast, astjson
from litmus_rules.lang.syntax import parse
from litmus_rules.source import Source, Span

sys.path.insert(0, str(Path(__file__).resolve().parent / "property"))
from strategies import rule_texts  # noqa: E402

# Small, with one of every node the planted changes below edit (the shipped rules take a while to parse).
SMALL = """ruleset t.cache version "1"
param n = 3
let xs = [s for s in detector.signals if s.kind in ["a", "b"]]
rule r
  "doc: reject unless"
  reject when any s in xs: len(s.value) == n or s.id != "x" and not (1 + 2 > n)
  because "bad {n}"
classify c
  "a" when count s in xs: true
  "b" otherwise
"""
SHIPPED = ROOT / "rules" / "validity.litmus"
TEXT = SHIPPED.read_text(encoding="utf-8")
NAME = "rules/validity.litmus"


def _rule_files() -> list[Path]:
    return sorted([*(ROOT / "rules").rglob("*.litmus"), *(ROOT / "tests" / "cases").rglob("*.litmus"),
                   *(ROOT / "examples").rglob("*.litmus")])


def _spans(node: Any) -> Iterator[tuple[str, int, int, str]]:
    """Every node's class and span, in a fixed order (spans are outside node equality)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
        elif ast.is_node_class(type(n)) and type(n).__module__ == ast.__name__:
            yield type(n).__name__, n.span.start, n.span.end, n.span.source.name
            stack.extend(getattr(n, f.name) for f in ast.fields(type(n)) if f.name != "span")


def _same(a: ast.RuleSet, b: ast.RuleSet) -> bool:
    return a == b and a.comments == b.comments and list(_spans(a)) == list(_spans(b)) \
        and list(_spans(a.comments)) == list(_spans(b.comments))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("LITMUS_RULES_CACHE_DIR", str(folder))
    rulecache.clear_memo()
    yield folder
    rulecache.clear_memo()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts really parsed (by lark) from here on."""
    seen: list[str] = []

    def counting(text: str, name: str) -> ast.RuleSet:
        seen.append(text)
        return parse(text, name)

    monkeypatch.setattr(stages, "_parse", counting)
    return seen


# ---- the codec ------------------------------------------------------------------------------------


@pytest.mark.parametrize("file", _rule_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_rule_file_reads_back_equal(file: Path) -> None:
    text = file.read_text(encoding="utf-8")
    try:
        tree = parse(text, str(file))
    except Exception:  # noqa: BLE001 -- the syntax-error case: nothing to store
        pytest.skip("does not parse")
    again = astjson.loads(astjson.dumps(tree), Source(str(file), text))
    assert _same(again, tree)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rule_texts())
def test_any_rule_text_reads_back_equal(text: str) -> None:
    tree = parse(text, "gen.litmus")
    assert _same(astjson.loads(astjson.dumps(tree), Source("gen.litmus", text)), tree)


def test_a_hit_gives_the_same_verdicts_as_a_parse(cache: Path, parses: list[str]) -> None:
    from _helpers import base_episode

    episodes = [base_episode()]
    examples = ROOT / "examples"
    if examples.is_dir():
        from litmus_rules.io.load import iter_episodes

        episodes += [e.data for e in iter_episodes([examples]) if e.data is not None]
    parsed = load_rules()
    rulecache.clear_memo()
    stored = load_rules()
    assert len(parses) == 1  # the second load read the stored tree
    assert _same(stored.ast, parsed.ast)
    for ep in episodes:
        assert stored.evaluate(ep, explain="full").to_json() == parsed.evaluate(ep, explain="full").to_json()


# ---- hits and misses ---------------------------------------------------------------------------------


def test_a_stored_tree_is_read_instead_of_parsed(cache: Path, parses: list[str]) -> None:
    first = stages.parse(TEXT, NAME)
    assert len(parses) == 1 and len(list(cache.glob("ast-*.json"))) == 1
    assert stages.parse(TEXT, NAME) is first  # the memo
    rulecache.clear_memo()
    second = stages.parse(TEXT, "elsewhere/validity.litmus")  # the key is the text: any name reads it
    assert len(parses) == 1
    assert second == first and second.span.source.name == "elsewhere/validity.litmus"
    assert cache.stat().st_mode & 0o777 == 0o700


def test_each_load_is_its_own_ruleset(cache: Path, parses: list[str]) -> None:
    a = load_rules(params={"min_partial_len": 9})
    b = load_rules()
    assert len(parses) == 1
    assert a is not b and a.params["min_partial_len"] == 9 and b.params["min_partial_len"] != 9
    assert a.checked is not b.checked and a.environment is not b.environment


def test_another_text_is_another_entry(cache: Path, parses: list[str]) -> None:
    stages.parse(TEXT, NAME)
    stages.parse(TEXT + "\n# changed\n", NAME)
    assert len(parses) == 2 and len(list(cache.glob("ast-*.json"))) == 2


def test_an_empty_setting_turns_the_disk_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    parses: list[str]) -> None:
    monkeypatch.setenv("LITMUS_RULES_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    rulecache.clear_memo()
    stages.parse(TEXT, NAME)
    rulecache.clear_memo()
    stages.parse(TEXT, NAME)
    assert len(parses) == 2 and not any(tmp_path.iterdir())


def test_stored_trees_are_bounded(cache: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]) -> None:
    monkeypatch.setattr(rulecache, "MAX_FILES", 3)
    for i in range(6):
        stages.parse(f'ruleset r version "{i}"\n', "r.litmus")
    assert len(list(cache.glob("ast-*.json"))) == 3


def test_a_syntax_error_is_not_stored(cache: Path) -> None:
    from litmus_rules.errors import LitmusSyntaxError

    for _ in range(2):
        with pytest.raises(LitmusSyntaxError):
            stages.parse("ruleset r version\n", "bad.litmus")
    assert not list(cache.glob("ast-*.json"))


def test_a_folder_others_can_write_is_not_read(cache: Path, parses: list[str]) -> None:
    stages.parse(TEXT, NAME)
    os.chmod(cache, 0o777)
    rulecache.clear_memo()
    stages.parse(TEXT, NAME)
    assert len(parses) == 2


# ---- damaged and planted files -----------------------------------------------------------------------


def _stored(cache: Path) -> Path:
    (path,) = cache.glob("ast-*.json")
    return path


def _resealed(header: dict[str, Any], body: bytes) -> bytes:
    """A body with a matching digest: what a hostile writer (not a random fault) would store."""
    import hashlib

    return json.dumps({**header, "sha256": hashlib.sha256(body).hexdigest()}).encode() + b"\n" + body


def _tamper(raw: bytes, how: str) -> bytes:
    head, _, body = raw.partition(b"\n")
    header = json.loads(head)
    doc = json.loads(body)
    if how == "garbage":
        return b"{not json"
    if how == "empty":
        return b""
    if how == "truncated":
        return raw[: len(raw) // 2]
    if how == "pickle":
        import pickle

        return pickle.dumps(doc)
    if how == "wrong key":
        return json.dumps({**header, "key": "0" * 64}).encode() + b"\n" + body
    if how == "flipped byte":  # a random fault: the digest no longer matches
        return head + b"\n" + body.replace(b'"t.cache"', b'"t.cachf"', 1)
    if how == "huge":
        return _resealed(header, body + b" " * (9 * 2**20))
    return _resealed(header, _planted(doc, how).encode())


def _planted(doc: Any, how: str) -> str:
    if how == "deep":  # built as text: json itself cannot write what it is meant to choke on
        rule = next(i for i in doc["items"] if i["@"] == "Rule")
        rule["condition"] = "DEEP"
        n = 100_000
        deep = '{"@":"Not","span":[0,0],"operand":' * n + '{"@":"Literal","span":[0,0],"value":1}' + "}" * n
        return json.dumps(doc).replace('"DEEP"', deep, 1)
    return json.dumps(_edit(doc, how))


def _edit(doc: Any, how: str) -> Any:
    """The stored tree with one planted change, re-sealed: the reader's own checks must refuse it."""
    rule = next(i for i in doc["items"] if i["@"] == "Rule")
    if how == "unknown class":
        rule["@"] = "Subprocess"
    elif how == "class outside the AST":
        rule["condition"] = {"@": "Span", "span": [0, 1], "source": None, "start": 0, "end": 1}
    elif how == "wrong field type":
        rule["name"] = ["not", "a", "string"]
    elif how == "bool for a string":
        rule["mode"] = True
    elif how == "missing field":
        del rule["condition"]
    elif how == "extra field":
        rule["__class__"] = "x"
    elif how == "span past the text":
        rule["span"] = [0, 10**9]
    elif how == "negative span":
        rule["span"] = [-5, 3]
    elif how == "not a ruleset":
        return rule
    elif how == "renamed fact":
        _first(doc, "Name")["name"] = "no_such_fact"
    elif how == "changed literal":
        literal = _first(doc, "Literal", lambda n: type(n["value"]) is int)
        literal["value"] += 1
    elif how == "string for a number":
        literal = _first(doc, "Literal", lambda n: type(n["value"]) is int)
        literal["value"] = str(literal["value"])
    elif how == "and for or":
        _first(doc, "BoolOp", lambda n: n["op"] == "or")["op"] = "and"
    elif how == "other comparison":
        compare = _first(doc, "Compare", lambda n: n["op"] == "==")
        compare["op"] = "!="
    elif how == "unknown operator":
        _first(doc, "Compare")["op"] = "__import__"
    elif how == "unless for when":
        _first(doc, "Rule", lambda n: n["mode"] == "when")["mode"] = "unless"
    elif how == "renamed call":
        _first(doc, "Call")["func"] = "no_such_builtin"
    elif how == "other quantifier":
        quantifier = _first(doc, "Quantifier", lambda n: n["kind"] == "any")
        quantifier["kind"] = "all"
    return doc


def _first(doc: Any, cls: str, cond: Any = lambda n: True) -> dict[str, Any]:
    stack = [doc]
    while stack:
        n = stack.pop(0)
        if isinstance(n, dict):
            if n.get("@") == cls and cond(n):
                return n
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    raise AssertionError(f"the shipped rules have no {cls} to plant a change in")


HOW = ["garbage", "empty", "truncated", "pickle", "wrong key", "flipped byte", "huge", "unknown class",
       "class outside the AST", "wrong field type", "bool for a string", "missing field", "extra field",
       "span past the text", "negative span", "not a ruleset", "deep", "renamed fact", "changed literal",
       "string for a number", "and for or", "other comparison", "unknown operator", "unless for when",
       "renamed call", "other quantifier"]


@pytest.mark.parametrize("how", HOW)
def test_a_damaged_or_planted_file_is_a_miss(cache: Path, parses: list[str], how: str) -> None:
    original = stages.parse(SMALL, "t.litmus")
    path = _stored(cache)
    path.write_bytes(_tamper(path.read_bytes(), how))
    rulecache.clear_memo()
    again = stages.parse(SMALL, "t.litmus")
    assert len(parses) == 2  # parsed again, not read
    assert _same(again, original)
    rulecache.clear_memo()
    assert _same(stages.parse(SMALL, "t.litmus"), original)  # and stored again, whole
    assert len(parses) == 2


def test_the_checks_refuse_what_they_should_without_the_digest() -> None:
    # the decoder alone (no header, no digest) refuses every planted body, in the shipped rules too
    for text in (SMALL, TEXT):
        body = astjson.dumps(parse(text, NAME))
        for how in HOW[7:]:
            with pytest.raises(ValueError):
                astjson.loads(_planted(json.loads(body), how), Source(NAME, text))


def test_a_tree_with_a_foreign_span_is_not_stored() -> None:
    tree = parse(TEXT, NAME)
    other = Source("other", TEXT)
    moved = ast.replace(tree, items=(ast.replace(tree.items[0], span=Span(other, 0, 1)), *tree.items[1:]))
    with pytest.raises(astjson.Unencodable):
        astjson.dumps(moved)


def test_load_rules_text_uses_the_cache_too(cache: Path, parses: list[str]) -> None:
    text = 'ruleset t version "1"\nrule r\n  reject when canaries == []\n  because "none"\n'
    a = load_rules_text(text, "t.litmus")
    rulecache.clear_memo()
    b = load_rules_text(text, "t.litmus")
    assert len(parses) == 1 and a.ast == b.ast
