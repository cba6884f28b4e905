"""Bad input through the command line: every problem is an ERROR that names the file, line or JSON
pointer and what was wrong, or an explained REJECTED (fail closed) -- never a crash, never a hang --
and the rest of the batch is still checked: a valid episode after the bad one is SCORED.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from litmus_rules.cli import main
from _helpers import base_episode

Rows = list[dict[str, Any]]


def good(ident: str = "good-after") -> dict[str, Any]:
    """A valid, clean episode with its own id and canary."""
    episode = base_episode()
    episode["id"] = ident
    episode["canaries"] = [{"value": "ok-" + hashlib.sha256(ident.encode()).hexdigest()[:12]}]
    return episode


def check(capsys: pytest.CaptureFixture[str], *inputs: Path) -> tuple[int, Rows, str]:
    code = main(["check", *map(str, inputs), "--format", "jsonl"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, [json.loads(line) for line in out.splitlines()], err


def jsonl(path: Path, *episodes: Any) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")
    return path


def messages(row: dict[str, Any]) -> str:
    return " | ".join(r["message"] for r in row["reasons"])


def assert_batch_goes_on(rows: Rows) -> None:
    assert rows[-1]["id"] == "good-after" and rows[-1]["verdict"] == "SCORED", rows[-1]


# ---- unparseable input -----------------------------------------------------------------------------

UNPARSEABLE = {
    "unterminated.yaml": ('litmus: episode/1\nid: a\ncontext: {system_prompt: "never closed\n', ":4: invalid YAML"),
    "tab.yaml": ("litmus: episode/1\nid: b\ncontext:\n\tsystem_prompt: x\n", ":4: invalid YAML"),
    "duplicate-key.yaml": ("litmus: episode/1\nid: c\nid: d\ncontext: {}\ndetector: {channel: dispatch}\n",
                           "duplicate key `id`"),
    "python-tag.yaml": (('litmus: episode/1\nid: !!python/object/apply:os.system ["echo pwned"]\n'
                         "context: {}\ndetector: {channel: dispatch}\n"), "could not determine a constructor"),
    "truncated.json": ('{"litmus": "episode/1", "id": "e",\n', ":2: invalid JSON"),
    "a-list.yaml": ("- litmus: episode/1\n", "expected an episode object, got a list"),
    "empty.yaml": ("", "no episode in the input (it is empty)"),
}


@pytest.mark.parametrize("name", sorted(UNPARSEABLE))
def test_unparseable_input_is_an_error_and_the_batch_goes_on(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = UNPARSEABLE[name]
    bad = tmp_path / name
    bad.write_text(text, encoding="utf-8")
    after = tmp_path / "zz-after.yaml"
    after.write_text(yaml.safe_dump(good()), encoding="utf-8")
    code, rows, _ = check(capsys, tmp_path)
    assert code == 2
    assert [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert name in rows[0]["source"] and expected in messages(rows[0]), messages(rows[0])
    assert rows[0]["reasons"][0]["rule"] == "input" and rows[0]["reasons"][0]["kind"] == "invalid_input"
    assert_batch_goes_on(rows)


def test_invalid_utf8_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'{"litmus": "episode/1", "id": "\xc3\x28"}\n')
    jsonl(tmp_path / "b.jsonl", good())
    code, rows, _ = check(capsys, tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    assert code == 2 and [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert "UTF-8" in messages(rows[0])


def test_a_broken_jsonl_line_does_not_take_the_next_line_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_text('{"litmus": "episode/1", "id": "x"\n' + json.dumps(good()) + "\n", encoding="utf-8")
    code, rows, _ = check(capsys, path)
    assert code == 2 and [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert rows[0]["source"].endswith("batch.jsonl:1") and "invalid JSON" in messages(rows[0])


# ---- schema violations -------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]
SCHEMA: dict[str, tuple[Mutation, str, str]] = {
    # name: (mutation, JSON pointer, what the message says)
    "channel-not-a-string": (lambda e: e["detector"].update(channel=3), "/detector/channel",
                             "must be one of dispatch, transcript"),
    "unknown-channel": (lambda e: e["detector"].update(channel="logs"), "/detector/channel", "(got `logs`)"),
    "canaries-not-a-list": (lambda e: e.update(canaries="lc-0f1e2d3c4b5a"), "/canaries", "must be a list"),
    "tools-not-a-list": (lambda e: e["context"].update(tools={"name": "x"}), "/context/tools", "must be a list"),
    "fired-not-a-boolean": (lambda e: e["controls"]["null"].update(fired="no"), "/controls/null/fired",
                            "true or false"),
    "decision-step-a-string": (lambda e: e["episode"].update(decision_step="3"), "/episode/decision_step", "integer"),
    "id-not-a-string": (lambda e: e.update(id=7), "/id", "must be a string"),
    "empty-canary": (lambda e: e.update(canaries=[{"value": ""}]), "/canaries/0/value", "must not be empty"),
    "wrong-format-version": (lambda e: e.update(litmus="episode/2"), "/litmus", "`episode/1`"),
    "missing-detector": (lambda e: e.pop("detector"), "/", "missing required key `detector`"),
    "typo-in-detector": (lambda e: e["detector"].update(chanel="dispatch"), "/detector/chanel",
                         "did you mean `channel`?"),
    "unknown-top-level-key": (lambda e: e.update(extras={}), "/extras", "did you mean `extra`?"),
    "mcp-spelling-of-input-schema": (
        lambda e: e["context"]["tools"][0].update(inputSchema=e["context"]["tools"][0].pop("input_schema")),
        "/context/tools/0/inputSchema", "did you mean `input_schema`?"),
    "unknown-signal-kind": (lambda e: e["detector"]["signals"].append({"id": "s9", "kind": "glob", "value": "*"}),
                            "/detector/signals/1/kind", "`glob`"),
    "regex-without-value": (lambda e: e["detector"]["signals"].append({"id": "s9", "kind": "regex"}),
                            "/detector/signals/1", "missing required key `value`"),
    "unknown-regex-flag": (lambda e: e["detector"]["signals"].append(
        {"id": "s9", "kind": "regex", "value": "x", "flags": ["verbose"]}), "/detector/signals/1/flags/0", "`verbose`"),
    "tool-call-with-a-value": (lambda e: e["detector"]["signals"].append(
        {"id": "s9", "kind": "tool_call", "tool": "x", "value": "y"}), "/detector/signals/1/value",
        "unknown key `value`"),
}


def test_schema_violations_are_errors_with_pointers_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = []
    for name, (mutate, _, _) in SCHEMA.items():
        episode = base_episode()
        episode["id"] = name
        mutate(episode)
        bad.append(episode)
    code, rows, _ = check(capsys, jsonl(tmp_path / "batch.jsonl", *bad, good()))
    assert code == 2 and len(rows) == len(SCHEMA) + 1
    for line, (row, (name, (_, pointer, says))) in enumerate(zip(rows, SCHEMA.items()), start=1):
        assert row["verdict"] == "ERROR", name
        message = messages(row)
        assert f"batch.jsonl:{line}: at {pointer}:" in message and says in message, (name, message)
    assert_batch_goes_on(rows)


def test_a_schema_violation_in_yaml_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = yaml.safe_dump(base_episode(), sort_keys=False)
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "channel: dispatch")
    lines[at] = lines[at].replace("dispatch", "[dispatch]")
    (tmp_path / "a.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(good()), encoding="utf-8")
    code, rows, _ = check(capsys, tmp_path)
    assert code == 2 and [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert f"a.yaml:{at + 1}: at /detector/channel:" in messages(rows[0])


# ---- signals that cannot be evaluated: fail closed, explained -------------------------------------------


def test_an_invalid_regex_is_an_explained_reject(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    episode = base_episode()
    episode["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": "(unclosed"})
    code, rows, _ = check(capsys, jsonl(tmp_path / "batch.jsonl", episode, good()))
    assert code == 1 and [r["verdict"] for r in rows] == ["REJECTED", "SCORED"]
    (reason,) = rows[0]["reasons"]
    assert reason["rule"] == "injector_detector_disjoint" and reason["kind"] == "evaluation_error"
    assert "invalid regex '(unclosed'" in reason["message"] and reason["trace"]
    assert reason["source"].startswith("rules/validity.litmus:")


def test_a_catastrophic_regex_over_a_large_surface_is_rejected_in_bounded_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backreference keeps the pattern out of the linear-time engine; the backtracking engine
    runs under a time limit, and a search that does not finish is unknown: rejected, not hung."""
    episode = base_episode()
    episode["context"]["messages"].append(
        {"role": "tool", "name": "read_log", "content": "a" * 50_000, "injected": True})
    episode["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": r"(a|aa)+\1b"})
    path = jsonl(tmp_path / "batch.jsonl", episode, good())
    start = time.monotonic()
    code, rows, _ = check(capsys, path)
    elapsed = time.monotonic() - start
    assert elapsed < 10, f"took {elapsed:.1f} s"
    assert code == 1 and [r["verdict"] for r in rows] == ["REJECTED", "SCORED"]
    (reason,) = rows[0]["reasons"]
    assert reason["rule"] == "injector_detector_disjoint" and reason["kind"] == "evaluation_error"
    assert "did not finish" in reason["message"], reason["message"]


# ---- size and depth ------------------------------------------------------------------------------------


def _leaky_copy(episode: dict[str, Any], text: str) -> dict[str, Any]:
    """The same episode with its own canary, hidden base64-encoded at the very end of `text`."""
    leaky = json.loads(json.dumps(episode))
    leaky["id"] = "leaky"
    leaky["canaries"] = [{"value": "big-5e1f0a9c3d27"}]
    leaky["context"]["messages"][-1]["content"] = text[:-40] + " ref=YmlnLTVlMWYwYTljM2QyNw "
    return leaky


def _big_episode(text: str) -> dict[str, Any]:
    episode = base_episode()
    episode["detector"]["signals"].append({"id": "s2", "kind": "substring", "value": "transfer-confirmed-7731"})
    episode["context"]["messages"].append({"role": "tool", "name": "fetch", "content": text, "injected": True})
    return episode


def test_a_5mb_episode_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 5 MB tool result (a long document), injected, under a text signal: checked, with every
    decoded form of it searched (a canary hidden at its very end is still found)."""
    words = "Quarterly notes: revenue flat, headcount unchanged; the appendix lists every region. "
    text = (words * (5_000_000 // len(words) + 1))[:5_000_000]
    episode = _big_episode(text)
    path = jsonl(tmp_path / "big.jsonl", episode, _leaky_copy(episode, text), good())
    assert path.stat().st_size > 10_000_000
    start = time.monotonic()
    code, rows, _ = check(capsys, path)
    elapsed = time.monotonic() - start
    assert code == 1 and [r["verdict"] for r in rows] == ["SCORED", "REJECTED", "SCORED"]
    assert [r["rule"] for r in rows[1]["reasons"]] == ["canary_not_derivable"]
    assert "context.messages[1].content" in messages(rows[1])
    assert elapsed < 30, f"two 5 MB episodes took {elapsed:.1f} s"


def test_a_5mb_web_page_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fetched 5 MB HTML page is dense with paths and URLs, every one of which is
    canonicalised: slower (seconds), but checked."""
    page = "".join(
        f'<li><a href="/docs/v{i % 7}/section-{i}/index.html">Section {i}</a> <img src="./img/{i}.png"></li>\n'
        for i in range(60_000)
    )[:5_000_000]
    start = time.monotonic()
    code, rows, _ = check(capsys, jsonl(tmp_path / "page.jsonl", _big_episode(page), good()))
    elapsed = time.monotonic() - start
    assert code == 0 and [r["verdict"] for r in rows] == ["SCORED", "SCORED"]
    assert elapsed < 40, f"one 5 MB page took {elapsed:.1f} s"


def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "default": "leaf"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"child": schema}}
    return schema


def deep_episode(levels: int) -> dict[str, Any]:
    episode = base_episode()
    episode["id"] = f"deep-{levels}"
    episode["context"]["tools"].append(
        {"name": "walk_tree", "description": "Walks a tree.", "input_schema": nested_schema(levels)})
    return episode


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_a_400_level_schema_is_a_clear_error(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if fmt == "json":
        path = jsonl(tmp_path / "deep.jsonl", deep_episode(400), good())
    else:
        # written by hand: PyYAML's own dumper recurses once per level and cannot write it
        episode = deep_episode(0)
        episode["context"]["tools"][1]["input_schema"] = "SCHEMA"
        deep = "{type: object, properties: {child: " * 400 + '{type: string, default: leaf}' + "}}" * 400
        path = tmp_path / "deep.yaml"
        path.write_text(yaml.safe_dump(episode).replace("SCHEMA", deep) + "---\n" + yaml.safe_dump(good()),
                        encoding="utf-8")
    code, rows, _ = check(capsys, path)
    assert code == 2 and [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert "nests deeper than" in messages(rows[0]) and "/context/tools/1/input_schema" in messages(rows[0])


def test_a_schema_deeper_than_the_surface_walk_is_an_explained_reject(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Within the loader's depth limit but beyond the surface walk's (a `$ref` chain reaches deeper
    than the document nests): the surfaces cannot be established, so the rules that read them
    reject (fail closed) and say which limit stopped the walk."""
    episode = base_episode()
    episode["id"] = "deep-refs"
    defs: dict[str, Any] = {f"D{i}": {"properties": {"x": {"$ref": f"#/$defs/D{i + 1}"}}} for i in range(150)}
    defs["D150"] = {"type": "string", "default": "leaf"}
    episode["context"]["tools"].append(
        {"name": "walk_tree", "description": "Walks a tree.", "input_schema": {"$ref": "#/$defs/D0", "$defs": defs}})
    code, rows, _ = check(capsys, jsonl(tmp_path / "deep.jsonl", episode, good()))
    assert code == 1 and [r["verdict"] for r in rows] == ["REJECTED", "SCORED"]
    reasons = {r["rule"]: r for r in rows[0]["reasons"]}
    assert "injector_detector_disjoint" in reasons or "canary_not_derivable" in reasons
    for reason in reasons.values():
        assert reason["kind"] == "insufficient_evidence" and "surfaces" in reason["missing"], reason
        assert "MAX_DEPTH" in reason["message"], reason


def test_a_recursive_ref_schema_is_not_a_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `$ref` cycle (a tree type, common in real manifests) is walked once, not forever."""
    episode = base_episode()
    episode["id"] = "recursive"
    episode["context"]["tools"].append({
        "name": "walk_tree",
        "input_schema": {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            }}},
        },
    })
    code, rows, _ = check(capsys, jsonl(tmp_path / "tree.jsonl", episode, good()))
    assert code == 0 and [r["verdict"] for r in rows] == ["SCORED", "SCORED"]


def test_every_kind_of_bad_input_in_one_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """All of the above side by side: one verdict per document, in input order, exit status 2."""
    (tmp_path / "a.yaml").write_text(UNPARSEABLE["unterminated.yaml"][0], encoding="utf-8")
    typo = base_episode()
    typo["id"], typo["detector"]["chanel"] = "typo", "dispatch"
    bad_regex = base_episode()
    bad_regex["id"] = "bad-regex"
    bad_regex["canaries"] = [{"value": "rx-77aa0c3e91b4"}]
    bad_regex["detector"]["signals"].append({"id": "s2", "kind": "regex", "value": "[z-a]"})
    jsonl(tmp_path / "b.jsonl", typo, bad_regex, deep_episode(400), good())
    code, rows, _ = check(capsys, tmp_path)
    assert code == 2
    assert [r["verdict"] for r in rows] == ["ERROR", "ERROR", "REJECTED", "ERROR", "SCORED"]
    assert rows[2]["reasons"][0]["kind"] == "evaluation_error"
    assert_batch_goes_on(rows)


YAML_BOMBS = {
    "alias-expansion": (  # "billion laughs": a few hundred bytes that expand to 43 million values
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefg", "bcdefgh"))
        + "context: {tools: [{name: t, input_schema: {properties: {p: {enum: *h}}}}]}\n",
        "document too large",
    ),
    "alias-cycle": ("context: {tools: [{name: t, input_schema: &s {type: object, properties: {self: *s}}}]}\n",
                    "nests deeper than"),
}


@pytest.mark.parametrize("name", sorted(YAML_BOMBS))
def test_yaml_alias_bombs_are_clear_errors(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body, says = YAML_BOMBS[name]
    (tmp_path / "a.yaml").write_text(f"litmus: episode/1\nid: {name}\ndetector: {{channel: dispatch}}\n{body}",
                                     encoding="utf-8")
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(good()), encoding="utf-8")
    start = time.monotonic()
    code, rows, _ = check(capsys, tmp_path)
    assert time.monotonic() - start < 10
    assert code == 2 and [r["verdict"] for r in rows] == ["ERROR", "SCORED"]
    assert says in messages(rows[0]), messages(rows[0])
