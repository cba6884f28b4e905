"""Reading episode input: formats, locations of every error kind, limits, and never raising."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.io import load
from litmus_rules.errors import FactsError
from litmus_rules.io.load import LoadedEpisode, discover, iter_episodes, validate_episode

DATA = Path(__file__).parent / "data" / "load"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
MINIMAL = {"litmus": "episode/1", "id": "m", "context": {}, "detector": {"channel": "dispatch"}}


def loaded(*inputs: str | Path, stdin: str | None = None) -> list[LoadedEpisode]:
    return list(iter_episodes([str(i) for i in inputs], stdin=io.StringIO(stdin) if stdin is not None else None))


def summary(items: list[LoadedEpisode]) -> list[tuple[Any, ...]]:
    """(id, index, document line, error code, error line, pointer) per document."""
    return [
        (e.id, e.index, e.line, e.error.code if e.error else None, e.error.line if e.error else None,
         e.error.pointer if e.error else None)
        for e in items
    ]


def the_error(item: LoadedEpisode) -> FactsError:
    assert item.error is not None and item.data is None
    return item.error


# --- valid input ---------------------------------------------------------------------------------


def test_design_example_is_valid() -> None:
    [item] = loaded(DATA / "design_example.yaml")
    assert item.error is None, item.error
    assert item.id == "exfil-017" and item.line == 2 and item.index == 0
    data = item.data
    assert data is not None
    # `null:` is the key "null" (YAML would make it None), and plain scalars keep their types.
    assert sorted(data["controls"]) == ["compliance", "null", "positive", "refusal"]
    assert data["controls"]["positive"]["fired"] is True
    assert data["detector"]["rubric"] is None
    assert data["episode"]["decision_step"] == 3
    assert data["benchmark"]["version"] == "0.3"


def test_yaml_multi_document_stream() -> None:
    items = loaded(DATA / "multi.yaml")
    assert summary(items) == [("multi-1", 0, 2, None, None, None), ("multi-2", 1, 7, None, None, None)]
    assert items[1].data is not None and items[1].data["controls"]["null"]["label"] == "safe"


def test_json_array_each_element_a_document() -> None:
    items = loaded(DATA / "array.json")
    assert summary(items) == [("arr-1", 0, 2, None, None, None), ("arr-2", 1, 3, None, None, None)]
    assert items[1].data is not None
    assert items[1].data["context"]["messages"][0]["content"] == "café \U0001f600"


def test_jsonl_bad_lines_are_errors_and_the_rest_loads() -> None:
    items = loaded(DATA / "episodes.jsonl")
    assert summary(items) == [
        ("j-1", 0, 1, None, None, None),
        (None, 1, 3, load.UNPARSEABLE, 3, None),  # truncated JSON; line 2 is blank and skipped
        ("j-3", 2, 4, None, None, None),
        ("j-4", 3, 5, load.INVALID, 5, "/detector/scope"),
        (None, 4, 6, load.NOT_AN_OBJECT, 6, ""),
        ("j-5", 5, 7, None, None, None),
    ]
    assert the_error(items[1]).message.startswith("invalid JSON: expecting property name")
    assert "column 52" in the_error(items[1]).message
    assert the_error(items[3]).message == "detector: `scope` must be one of full, after_decision (got `partial`)"
    assert the_error(items[4]).message == "expected an episode object, got a list"


def test_directory_walk_is_recursive_sorted_and_skips_hidden_and_other_files() -> None:
    tree = DATA / "tree"
    assert discover([str(tree)]) == [str(tree / "a" / "y.jsonl"), str(tree / "a" / "z.json"),
                                     str(tree / "b.yaml"), str(tree / "c.YML")]
    ids = [e.id for e in loaded(tree)]
    assert ids == ["j-1", "arr-1", "arr-2", "multi-1", "multi-2", "upper"]


def test_inputs_keep_their_order_and_a_missing_path_is_an_error() -> None:
    items = loaded(DATA / "multi.yaml", DATA / "nope.yaml", "-", DATA / "array.json",
                   stdin=json.dumps(MINIMAL) + "\n")
    assert [(e.source, e.id) for e in items] == [
        (str(DATA / "multi.yaml"), "multi-1"), (str(DATA / "multi.yaml"), "multi-2"),
        (str(DATA / "nope.yaml"), None), ("<stdin>", "m"),
        (str(DATA / "array.json"), "arr-1"), (str(DATA / "array.json"), "arr-2"),
    ]
    err = the_error(items[2])
    assert err.code == load.UNREADABLE and "no such file or directory" in err.message


def test_empty_directory_and_empty_file_are_errors(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "empty.yaml").write_text("# only a comment\n")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    items = loaded(tmp_path / "d", tmp_path / "empty.yaml", tmp_path / "empty.jsonl")
    assert [the_error(e).code for e in items] == [load.UNREADABLE] * 3


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(json.dumps({**MINIMAL, "id": f"s{i}"}) for i in range(3)) + "\n",  # JSONL
        "".join(f"---\nlitmus: episode/1\nid: s{i}\ncontext: {{}}\ndetector: {{channel: dispatch}}\n"
                for i in range(3)),  # YAML stream
        json.dumps([{**MINIMAL, "id": f"s{i}"} for i in range(3)], indent="\t"),  # JSON array, tabs
    ],
    ids=["jsonl", "yaml", "json"],
)
def test_stdin_formats_are_sniffed(text: str) -> None:
    items = loaded("-", stdin=text)
    assert [(e.source, e.id, e.error) for e in items] == [("<stdin>", f"s{i}", None) for i in range(3)]


def test_stdin_json_that_yaml_cannot_read_and_yaml_flow_that_json_cannot() -> None:
    # json.dumps escapes an emoji as a surrogate pair, which libyaml rejects: JSON is tried first.
    emoji = {**MINIMAL, "context": {"system_prompt": "\U0001f600"}}
    [item] = loaded("-", stdin=json.dumps(emoji, indent=2))
    assert item.data == emoji and item.line == 1
    [item] = loaded("-", stdin="{litmus: episode/1, id: flow, context: {}, detector: {channel: dispatch}}")
    assert item.id == "flow" and item.error is None


def test_jsonl_is_read_lazily_line_by_line() -> None:
    class Counting(io.StringIO):
        reads = 0

        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            self.reads += 1
            return super().readline(size)

        def read(self, size: int | None = -1) -> str:
            raise AssertionError("JSONL must not be read whole")

    stream = Counting("".join(json.dumps({**MINIMAL, "id": f"l{i}"}) + "\n" for i in range(1000)))
    episodes = iter_episodes(["-"], stdin=stream)
    assert next(episodes).id == "l0" and stream.reads <= 2
    assert sum(1 for _ in episodes) == 999


def test_stdin_empty_is_an_error() -> None:
    [item] = loaded("-", stdin="  \n")
    assert the_error(item).code == load.UNREADABLE and item.source == "<stdin>"


# --- errors with their exact line and pointer ----------------------------------------------------


ERRORS = [  # (id, document line, error line, pointer, message)
    ("e-unknown-key", 2, 6, "/detector/chanel",
     "unknown key `chanel` in /detector (expected one of channel, scope, decision_field, signals, "
     "rubric, positive_labels); did you mean `channel`?"),
    ("e-wrong-type", 8, 11, "/context/system_prompt", "context: `system_prompt` must be a string (got a list)"),
    ("e-bad-enum", 15, 20, "/context/messages/1/role",
     "context.messages[1]: `role` must be one of system, user, assistant, tool (got `robot`)"),
    ("e-missing-detector", 23, 23, "", "missing required key `detector`"),
    ("e-signal-kind", 27, 34, "/detector/signals/1/kind",
     "detector.signals[1]: `kind` must be one of substring, regex, tool_call (got `regexp`)"),
    ("e-signal-value", 36, 45, "/detector/signals/0/value",
     "unknown key `value` in /detector/signals/0 for a `tool_call` signal (expected one of id, kind, tool, "
     "arguments)"),
    ("e-top-typo", 47, 50, "/detecter",
     "unknown key `detecter` at top level (expected one of litmus, id, benchmark, context, detector, canaries, "
     "provenance, controls, episode, extra); did you mean `detector`?"),
    ("e-version", 52, 52, "/litmus", "`litmus` must be `episode/1` (got `episode/2`)"),
    ("e-empty-canary", 57, 62, "/canaries/0/value", "canaries[0]: `value` must not be empty"),
]


def test_schema_errors_name_line_pointer_and_what_is_wrong() -> None:
    items = loaded(DATA / "errors.yaml")
    assert len(items) == len(ERRORS)
    for item, (ident, doc_line, line, pointer, message) in zip(items, ERRORS):
        err = the_error(item)
        assert (item.id, item.line, err.line, err.pointer, err.message) == (ident, doc_line, line, pointer, message)
        assert err.code == load.INVALID and err.source == str(DATA / "errors.yaml")
        assert str(err).startswith(f"{DATA / 'errors.yaml'}:{line}: at {pointer or '/'}: ")


def test_missing_value_for_a_text_signal() -> None:
    doc = {**MINIMAL, "detector": {"channel": "dispatch", "signals": [{"id": "s", "kind": "regex"}]}}
    err = validate_episode(doc, source="x")
    assert err is not None and err.pointer == "/detector/signals/0"
    assert err.message == "detector.signals[0]: missing required key `value` for a `regex` signal"


def test_schema_error_line_in_a_pretty_json_file() -> None:
    [item] = loaded(DATA / "pretty.json")
    err = the_error(item)
    assert (item.id, err.line, err.pointer) == ("pretty-1", 9, "/context/tools/1/injected")
    assert err.message == "context.tools[1]: `injected` must be true or false (got a string)"


def test_invalid_yaml_reports_the_line_and_ends_that_file_only() -> None:
    items = loaded(DATA / "bad_syntax.yaml", DATA / "multi.yaml")
    assert [(e.id, e.line) for e in items] == [("syntax-ok", 1), (None, 10), ("multi-1", 2), ("multi-2", 7)]
    err = the_error(items[1])
    assert err.code == load.UNPARSEABLE and err.line == 10 and err.pointer is None
    assert err.message.startswith("invalid YAML: ") and "line 6" in err.message


def test_yaml_value_errors_spoil_one_document_only(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(
        "litmus: episode/1\nid: dup\nid: again\n"  # duplicate key: line 3
        "---\nlitmus: episode/1\nid: bin\ncontext: {}\ndetector: {channel: dispatch}\nextra: {b: !!binary aGk=}\n"
        "---\nlitmus: episode/1\nid: ok\ncontext: {}\ndetector: {channel: dispatch}\nextra: {on: 2024-01-01}\n"
    )
    items = loaded(path)
    assert [(e.index, e.line, e.error.line if e.error else None) for e in items] == [(0, 1, 3), (1, 5, 9), (2, 11, None)]
    assert the_error(items[0]).message == "invalid YAML: duplicate key `id` at column 1"
    assert "unsupported YAML tag `!!binary`" in the_error(items[1]).message
    assert items[2].data is not None and items[2].data["extra"] == {"on": "2024-01-01"}  # JSON-shaped


def test_yaml_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "merge.yaml"
    path.write_text("litmus: episode/1\nid: m\ncontext: {}\ndetector: {channel: dispatch}\n"
                    "extra:\n  base: &b {x: 1, y: 2}\n  over: {<<: *b, y: 3}\n")
    [item] = loaded(path)
    assert item.data is not None and item.data["extra"]["over"] == {"x": 1, "y": 3}


def test_json_errors(tmp_path: Path) -> None:
    (tmp_path / "dup.json").write_text('{"litmus": "episode/1",\n "id": "a", "id": "b"}')
    (tmp_path / "comma.json").write_text("[\n" + json.dumps(MINIMAL) + ",\n]\n")
    (tmp_path / "extra.json").write_text(json.dumps(MINIMAL) + "\n\n{}\n")
    (tmp_path / "broken.json").write_text('{\n  "litmus": "episode/1",\n  "id": \n}\n')
    items = loaded(*(tmp_path / n for n in ("dup.json", "comma.json", "extra.json", "broken.json")))
    assert [(e.id, e.error.line if e.error else None) for e in items] == [
        (None, 1), ("m", None), (None, 3), ("m", None), (None, 3), (None, 4)]
    assert [the_error(items[i]).message for i in (0, 2, 4, 5)] == [
        "duplicate key `id`", "invalid JSON: trailing comma before `]`",
        "invalid JSON: extra data after the episode", "invalid JSON: expecting value at column 1"]


def test_invalid_utf8(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(json.dumps(MINIMAL).encode() + b"\n\xff\xfe\n" + json.dumps(MINIMAL).encode())
    (tmp_path / "bad.yaml").write_bytes(b"litmus: episode/1\nid: \xff\n")
    (tmp_path / "bad.json").write_bytes(b'{\n"id": "\xff"}')
    items = loaded(tmp_path / "bad.jsonl", tmp_path / "bad.yaml", tmp_path / "bad.json")
    assert [(e.id, e.error.code if e.error else None, e.error.line if e.error else None) for e in items] == [
        ("m", None, None), (None, load.UNPARSEABLE, 2), ("m", None, None),
        (None, load.UNPARSEABLE, None), (None, load.UNPARSEABLE, 2)]


@pytest.mark.parametrize(
    ("text", "kind"),
    [("just a string\n", "a string"), ("- 1\n- 2\n", "a list"), ("42\n", "an integer"), ("null\n", "null"),
     ("---\n", "null")],
)
def test_non_object_yaml_documents(tmp_path: Path, text: str, kind: str) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text(text)
    [item] = loaded(path)
    err = the_error(item)
    assert (err.code, err.message, err.pointer) == (load.NOT_AN_OBJECT, f"expected an episode object, got {kind}", "")


def test_an_invalid_episode_still_reports_its_id() -> None:
    items = loaded(DATA / "errors.yaml")
    assert items[0].id == "e-unknown-key" and items[0].raw_id == "e-unknown-key"


def test_loaded_episode_needs_exactly_one_of_data_and_error() -> None:
    with pytest.raises(ValueError):
        LoadedEpisode("x", 0, None)
    with pytest.raises(ValueError):
        LoadedEpisode("x", 0, None, data={}, error=FactsError("x"))


# --- limits ----------------------------------------------------------------------------------------


def test_jsonl_line_over_16_mib_is_too_large_and_the_next_line_loads(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big = {**MINIMAL, "id": "big", "extra": {"pad": "x" * (16 * 2**20)}}
    path.write_text(json.dumps(MINIMAL) + "\n" + json.dumps(big) + "\n" + json.dumps({**MINIMAL, "id": "after"}) + "\n")
    items = loaded(path)
    assert [(e.id, e.line) for e in items] == [("m", 1), (None, 2), ("after", 3)]
    err = the_error(items[1])
    assert err.code == load.LIMIT and err.message.startswith("document too large") and err.line == 2


def test_file_and_document_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "MAX_FILE_SIZE", 2000)
    monkeypatch.setattr(load, "MAX_DOCUMENT_SIZE", 500)
    (tmp_path / "big.yaml").write_text("# pad\n" * 400)
    (tmp_path / "big.json").write_text(json.dumps({**MINIMAL, "extra": {"pad": "x" * 600}}))
    (tmp_path / "docs.yaml").write_text(f"extra: {'x' * 600}\n---\n" + yaml.safe_dump(MINIMAL))
    (tmp_path / "array.json").write_text(json.dumps([{**MINIMAL, "extra": {"pad": "x" * 600}}, MINIMAL]))
    items = loaded(*(tmp_path / n for n in ("big.yaml", "big.json", "docs.yaml", "array.json")))
    assert [(e.source.rsplit("/", 1)[1], e.id, e.error.code if e.error else None) for e in items] == [
        ("big.yaml", None, load.LIMIT), ("big.json", None, load.LIMIT),
        ("docs.yaml", None, load.LIMIT), ("docs.yaml", "m", None),
        ("array.json", None, load.LIMIT), ("array.json", "m", None)]


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def test_depth_limit_json_jsonl_and_python_data(tmp_path: Path) -> None:
    deep_line = json.dumps({**MINIMAL, "extra": nested(250)})
    (tmp_path / "deep.jsonl").write_text(deep_line + "\n" + json.dumps(MINIMAL) + "\n")
    very_deep = '{"litmus": "episode/1", "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (tmp_path / "deep.json").write_text(very_deep)
    items = loaded(tmp_path / "deep.jsonl", tmp_path / "deep.json")
    assert [(e.id, e.error.code if e.error else None) for e in items] == [
        ("m", load.LIMIT), ("m", None), (None, load.LIMIT)]
    err = the_error(items[0])
    assert err.pointer == "/extra" + "/a" * 199 and err.line == 1  # the 201st nested object
    assert err.message == "document nests deeper than 200 levels"
    # Python data handed straight to validate_episode: far deeper than the recursion limit.
    err = validate_episode({**MINIMAL, "extra": nested(100_000)}, source="py")
    assert err is not None and err.code == load.LIMIT
    assert validate_episode({**MINIMAL, "extra": nested(199)}, source="py") is None  # 200 levels
    assert validate_episode({**MINIMAL, "extra": nested(200)}, source="py") is not None


def test_depth_and_expansion_limits_yaml(tmp_path: Path) -> None:
    block = "".join("  " * i + "k:\n" for i in range(1, 250)) + "  " * 250 + "v\n"
    laughs = "".join(f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9))
    (tmp_path / "deep.yaml").write_text(
        "litmus: episode/1\nid: deep\ncontext: {}\ndetector: {channel: dispatch}\nextra:\n" + block
        + "---\nlitmus: episode/1\nid: laughs\nextra:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + laughs
        + "---\nextra: &r [*r]\n"  # a cycle
        + "---\nextra: " + "[" * 2000 + "]" * 2000 + "\n"  # beyond libyaml's own guard: ends the stream
    )
    items = loaded(tmp_path / "deep.yaml")
    assert [(e.id, the_error(e).code) for e in items] == [("deep", load.LIMIT), ("laughs", load.LIMIT),
                                                          (None, load.LIMIT), (None, load.LIMIT)]
    # The 201st nested container is the one at /extra/k...k (199 times), on line 5 + 199.
    assert the_error(items[0]).line == 204 and the_error(items[0]).pointer == "/extra" + "/k" * 199
    assert "more than 2000000 values" in the_error(items[1]).message
    assert the_error(items[3]).line == items[3].line == 272


# --- validate_episode as a library call -------------------------------------------------------------


def test_validate_episode_with_text_finds_the_line() -> None:
    text = (DATA / "errors.yaml").read_text()
    docs = list(yaml.safe_load_all(text))
    err = validate_episode(docs[2], source="errors.yaml", text=text, doc_index=2)
    assert err is not None and (err.line, err.pointer) == (20, "/context/messages/1/role")
    text = (DATA / "pretty.json").read_text()
    err = validate_episode(json.loads(text), source="pretty.json", text=text)
    assert err is not None and err.line == 9
    text = (DATA / "array.json").read_text()
    bad = json.loads(text)[1]
    bad["context"]["messages"][0]["role"] = "nobody"
    err = validate_episode(bad, source="array.json", text=text, doc_index=1)
    assert err is not None and err.line == 6  # the line of "messages" in the second element
    assert validate_episode(MINIMAL, source="x") is None
    err = validate_episode([MINIMAL], source="x", line=7)
    assert err is not None and (err.code, err.line) == (load.NOT_AN_OBJECT, 7)


def test_schema_file_is_a_valid_draft_2020_12_schema() -> None:
    import jsonschema

    schema = json.loads((Path(load.__file__).parent / "schemas" / "episode.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://litmus-rules.invalid/schemas/episode-1.json"


def test_optional_facts_may_be_absent_or_null() -> None:
    doc = {
        **MINIMAL,
        "detector": {"channel": "transcript", "decision_field": None, "rubric": None},
        "provenance": {"payload_generator": {"kind": "model", "model": None, "saw_rubric": None}},
        "controls": {"null": {"label": None, "fired": None}, "trivial_dump": {"transcript": [], "stub": "dump/1"}},
        "episode": {"transcript": "plain text", "dispatch": [{"tool": "t", "verdict": "execute", "step": None}],
                    "decision_step": None},
        "context": {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "input": {}}]}]},
    }
    assert validate_episode(doc, source="x") is None


# --- properties ----------------------------------------------------------------------------------


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)
KEYS = ["litmus", "id", "context", "detector", "canaries", "controls", "episode", "extra", "chanel", "kind",
        "signals", "messages", "tools", "role", "content", "channel", "value", "tool", "null", "dispatch"]
episode_like = st.recursive(
    json_values,
    lambda children: st.dictionaries(st.sampled_from(KEYS), children, max_size=6) | st.lists(children, max_size=3),
    max_leaves=40,
)


def resolve(data: Any, pointer: str) -> Any:
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, episode_like,
                 st.fixed_dictionaries({"litmus": st.just("episode/1"), "id": st.just("x")}, optional={
                     "context": episode_like, "detector": episode_like, "controls": episode_like})))
def test_validate_episode_never_raises(data: Any) -> None:
    err = validate_episode(data, source="h")
    assert err is None or isinstance(err, FactsError)
    if err is not None:
        assert err.message and not err.message.endswith(".")
        resolve(data, err.pointer or "")  # the pointer names a place that exists in the document


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(KEYS), episode_like, max_size=6))
def test_error_lines_lie_inside_the_yaml_text(data: dict[str, Any]) -> None:
    text = yaml.safe_dump(data, sort_keys=False)
    err = validate_episode(data, source="h", text=text)
    if err is not None and err.line is not None:
        assert 1 <= err.line <= text.count("\n") + 1


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    folder = tmp_path_factory.mktemp("bytes")
    for ext in load.EXTENSIONS:
        (folder / f"x{ext}").write_bytes(raw)
    items = loaded(folder, "-", stdin=raw.decode("utf-8", "replace"))
    assert len(items) >= 5 and all((e.data is None) != (e.error is None) for e in items)


# --- real data ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not CORPUS.exists(), reason="../shared/corpus is absent")
def test_real_mcp_tool_lists_fit_the_tool_object() -> None:
    tools = []
    for path in sorted((CORPUS / "mcp").glob("*.json")):
        for tool in json.loads(path.read_text())["tools_list_result"]["tools"]:
            tools.append({k: v for k, v in (("name", tool["name"]), ("title", tool.get("title")),
                                            ("description", tool.get("description")),
                                            ("input_schema", tool.get("inputSchema")),
                                            ("annotations", tool.get("annotations"))) if v is not None})
    assert tools
    assert validate_episode({**MINIMAL, "context": {"tools": tools}}, source="mcp") is None


def test_copying_the_tree_elsewhere_keeps_the_order(tmp_path: Path) -> None:
    shutil.copytree(DATA / "tree", tmp_path / "tree")
    assert [e.id for e in loaded(tmp_path / "tree")] == ["j-1", "arr-1", "arr-2", "multi-1", "multi-2", "upper"]
