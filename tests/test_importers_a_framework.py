"""The importer framework: formats, options, `--detector` and `--run` merging, provenance, the
schema check of every episode, located problems, round trips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from importers_a_fixtures import (
    anthropic_exchange, mcp_session, openai_chat_exchange, openai_responses_exchange, write_eval_log, write_json_log,
    write_skill,
)
from litmus_rules.io import importers as framework
from litmus_rules.io.importers import (
    FORMATS, ImportProblemError, ImportUsageError, Imported, Options, Problem, format_module, iter_records,
    load_detector_file, make_options, merge_detector, read,
)
from litmus_rules.io.load import iter_episodes

DETECTOR = {"channel": "dispatch"}


def test_formats_are_listed_and_an_unknown_one_names_them() -> None:
    assert {"inspect", "agentdojo", "injecagent", "garak", "mcp", "skills", "openai", "anthropic"} <= set(FORMATS)
    with pytest.raises(ImportUsageError, match="unknown import format `nope`; the formats are: inspect, "):
        list(read("nope", "x"))
    for name in ("inspect", "mcp", "skills", "openai", "anthropic"):
        module = FORMATS[name]
        assert module.NAME == name and isinstance(module.VERSION, str) and callable(module.records)


def test_an_unknown_option_is_misuse_listing_the_options(tmp_path: Path) -> None:
    with pytest.raises(ImportUsageError, match=r"no option `colour`; its options: scorer \("):
        list(read("inspect", write_json_log(tmp_path / "a.json"), colour="red"))


def test_merge_detector_objects_merge_and_everything_else_replaces() -> None:
    base = {"channel": "transcript", "scorer": {"name": "x", "options": {"a": 1, "b": 2}}, "signals": [{"id": "1"}]}
    overlay = {"channel": "dispatch", "scorer": {"options": {"b": 3}}, "signals": [{"id": "2"}]}
    assert merge_detector(base, overlay) == {
        "channel": "dispatch", "scorer": {"name": "x", "options": {"a": 1, "b": 3}}, "signals": [{"id": "2"}]}
    assert base["scorer"]["options"] == {"a": 1, "b": 2}  # inputs are not modified


def test_detector_file_yaml_json_and_unwrapped(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text("detector:\n  channel: dispatch\n  positive_labels: [C]\n", encoding="utf-8")
    (tmp_path / "d.json").write_text('{"channel": "transcript"}', encoding="utf-8")
    assert load_detector_file(str(tmp_path / "d.yaml")) == {"channel": "dispatch", "positive_labels": ["C"]}
    assert load_detector_file(str(tmp_path / "d.json")) == {"channel": "transcript"}


@pytest.mark.parametrize(("text", "match"), [
    ("- a\n- b\n", "expected an episode object"),
    ("a: !!python/object:os.system x\n", "unsupported YAML tag|could not determine a constructor"),
    ("a: 1\n---\nb: 2\n", "several documents"),
    ("a: [1\n", "invalid YAML"),
])
def test_a_bad_detector_file_is_misuse(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ImportUsageError, match=match):
        load_detector_file(str(path))
    with pytest.raises(ImportUsageError, match="cannot read"):
        load_detector_file(str(tmp_path / "missing.yaml"))


def test_detector_and_run_merge_into_every_episode_and_clear_their_unknowns(tmp_path: Path) -> None:
    path = write_json_log(tmp_path / "a.json")
    supplied = {"channel": "dispatch", "positive_labels": ["C"],
                "signals": [{"id": "s", "kind": "tool_call", "tool": "post_note"}]}
    episodes = list(read("inspect", path, scorer="posted_canary", detector=supplied, run={"attack": "owl", "seed": "7"}))
    for episode in episodes:
        assert episode["detector"]["signals"] == supplied["signals"]
        assert episode["detector"]["scorer"]["name"] == "posted_canary"  # the importer's keys stay
        assert episode["run"]["attack"] == "owl" and episode["run"]["seed"] == "7" and episode["run"]["task"] == "owl_task"
        paths = {u["path"] for u in episode["unknowns"]}
        assert not paths & {"/detector/channel", "/detector/signals", "/detector/positive_labels"}
        assert "/canaries" in paths


def test_fired_is_derived_only_once_positive_labels_are_known(tmp_path: Path) -> None:
    path = write_json_log(tmp_path / "a.json")
    linked = {"null_control": "kind=control", "link": "group"}
    without = next(read("inspect", path, scorer="includes", **linked))
    assert "fired" not in without["controls"]["null"]
    with_labels = next(read("inspect", path, scorer="includes", detector={"positive_labels": ["I"]}, **linked))
    assert with_labels["controls"]["null"]["fired"] is True  # its label I is, here, positive
    invalid = next(read("inspect", path, scorer="includes", detector={"positive_labels": ["C"], "invalid_labels": ["I"]},
                        **linked))
    assert "fired" not in invalid["controls"]["null"]


class _Fake:
    """A format module whose records the test chooses."""

    NAME, VERSION = "fake", "9"

    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def records(self, path: str, options: Options) -> Iterator[Any]:
        for item in self.items:
            if isinstance(item, Exception):
                raise item
            yield item


def good(ident: str) -> dict[str, Any]:
    return {"litmus": "episode/1.1", "id": ident, "context": {}, "detector": {"channel": "dispatch"}}


def fake_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, items: list[Any], **opts: Any) -> list[Any]:
    module = _Fake(items)
    monkeypatch.setattr(framework, "format_module", lambda name: module)
    (tmp_path / "in").write_text("", encoding="utf-8")
    return list(iter_records("fake", [tmp_path / "in"], Options(**opts)))


def test_an_invalid_episode_is_a_located_error_and_the_rest_go_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = {**good("b"), "context": {"messages": [{"role": "robot", "content": "x"}]}}
    contradictory = {**good("c"), "detector": {"channel": "dispatch", "positive_labels": ["x"], "invalid_labels": ["x"]}}
    records = fake_records(monkeypatch, tmp_path, [Imported(good("a"), "line 1"), Imported(bad, "line 2"),
                                                   Problem("line 3", "no such field"),
                                                   Imported(contradictory, "line 4"), Imported(good("e"), "line 5")])
    assert [(r.position, r.code) for r in records] == [
        ("line 1", None), ("line 2", "L311"), ("line 3", "L310"), ("line 4", "L311"), ("line 5", None)]
    assert "/context/messages/0/role" in records[1].message
    assert records[1].render().startswith(f"{tmp_path / 'in'}:line 2: error[L311]: the imported episode is invalid: ")
    assert records[0].episode["extra"] == {"import": {"format": "fake", "source": str(tmp_path / "in"),
                                                      "position": "line 1", "version": "9"}}


def test_a_run_value_that_does_not_fit_is_located(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = fake_records(monkeypatch, tmp_path, [Imported(good("a"), "p")], run={"": "x"})
    assert records[0].code == "L311" and "/run" in records[0].message


def test_an_importer_fault_ends_that_input_located(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = fake_records(monkeypatch, tmp_path, [Imported(good("a"), "p"), KeyError("samples")])
    assert records[0].episode is not None and records[1].code == "L310"
    assert "could not read the rest of this input" in records[1].message


def test_read_raises_at_the_first_problem_and_a_missing_path_is_located(tmp_path: Path) -> None:
    with pytest.raises(ImportProblemError) as info:
        list(read("openai", tmp_path / "missing.json", detector=DETECTOR))
    assert info.value.code == "L305" and "missing.json" in str(info.value)


# ---- every format: round trip, schema, the real loader --------------------------------------------

def inputs(tmp_path: Path) -> list[tuple[str, Path, dict[str, Any]]]:
    (tmp_path / "chat.json").write_text(json.dumps(openai_chat_exchange()), encoding="utf-8")
    (tmp_path / "resp.json").write_text(json.dumps(openai_responses_exchange()), encoding="utf-8")
    (tmp_path / "msg.json").write_text(json.dumps(anthropic_exchange()), encoding="utf-8")
    (tmp_path / "mcp.jsonl").write_text("".join(json.dumps(m) + "\n" for m in mcp_session()), encoding="utf-8")
    linked = {"null_control": "kind=control", "link": "group", "injected_key": "surface"}
    return [
        ("inspect", write_json_log(tmp_path / "log.json"), {**linked, "detector": DETECTOR}),
        ("inspect", write_eval_log(tmp_path / "log.eval"), {**linked, "detector": DETECTOR}),
        ("openai", tmp_path / "chat.json", {"detector": DETECTOR}),
        ("openai", tmp_path / "resp.json", {"detector": DETECTOR}),
        ("anthropic", tmp_path / "msg.json", {"detector": DETECTOR}),
        ("mcp", tmp_path / "mcp.jsonl", {"detector": DETECTOR}),
        ("skills", write_skill(tmp_path / "skill", references={"r.md": "ref"}), {"detector": DETECTOR}),
    ]


def test_importing_twice_gives_identical_episodes_that_the_loader_reads(tmp_path: Path) -> None:
    for fmt, path, opts in inputs(tmp_path):
        first, second = list(read(fmt, path, **opts)), list(read(fmt, path, **opts))
        assert first and first == second, fmt
        out = tmp_path / f"{fmt}-{path.name}.jsonl"
        out.write_text("".join(json.dumps(e) + "\n" for e in first), encoding="utf-8")
        loaded = list(iter_episodes([str(out)]))
        assert [l.error for l in loaded] == [None] * len(first), (fmt, [str(l.error) for l in loaded if l.error])
        assert [l.data for l in loaded] == first  # already canonical: the loader changes nothing


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=8), max_size=4))
def test_any_run_keys_give_a_valid_episode_or_misuse(run: dict[str, str]) -> None:
    module = format_module("mcp")
    options = make_options(module, DETECTOR, run)
    episode = {"litmus": "episode/1.1", "id": "x", "context": {}, "detector": {}, "run": {"server": "s"}}
    record = framework.finish(module, Imported(episode, ""), "src", options)
    assert record.episode is not None and record.episode["run"] == {"server": "s", **run}


def test_a_shared_subtree_is_validated_once_and_an_invalid_one_every_time(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    real = framework.validate_episode

    def counting(doc: dict[str, Any], **kw: Any) -> Any:
        seen.append(doc)
        return real(doc, **kw)

    monkeypatch.setattr(framework, "validate_episode", counting)
    messages = [{"role": "user", "content": "hi"}]
    bad_messages = [{"role": "robot", "content": "x"}]
    episodes = [{**good(f"e{i}"), "context": {"messages": m}} for i, m in enumerate([messages, messages, bad_messages,
                                                                                     bad_messages])]
    records = fake_records(monkeypatch, tmp_path, [Imported(e, f"p{i}") for i, e in enumerate(episodes)])
    assert [r.code for r in records] == [None, None, "L311", "L311"]
    assert [d["context"]["messages"] for d in seen] == [messages, [], bad_messages, bad_messages]
    assert records[1].episode["context"]["messages"] == messages  # only the validation skipped it
