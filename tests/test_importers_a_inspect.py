"""The Inspect AI importer on small logs we write ourselves, as `.json` and as `.eval` (zstd and
deflate members): what each part of a sample becomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from importers_a_fixtures import CANARY, inspect_log, write_eval_log, write_json_log
from litmus_rules.io.importers import ImportProblemError, iter_records, make_options, format_module, read

LINKED = {"null_control": "kind=control", "link": "group", "injected_key": "surface"}


def strip_import(episode: dict[str, Any]) -> dict[str, Any]:
    extra = {k: v for k, v in episode["extra"].items() if k != "import"}
    return {**episode, "extra": extra}


@pytest.fixture(params=["json", "eval-zstd", "eval-deflate"])
def log_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "json":
        return write_json_log(tmp_path / "run.json")
    return write_eval_log(tmp_path / "run.eval", method=93 if request.param == "eval-zstd" else 8)


def by_id(episodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["id"].split(":", 3)[-1]: e for e in episodes}


def test_one_episode_per_sample_and_scorer_in_dataset_order(log_path: Path) -> None:
    episodes = list(read("inspect", log_path, detector={"channel": "dispatch"}))
    assert [e["id"] for e in episodes] == [
        f"inspect:owl_task:mockllm/model:{s}:1:{scorer}"
        for s in ("quote", "comply", "clean") for scorer in ("includes", "posted_canary")]
    first = episodes[0]
    assert first["benchmark"] == {"name": "owl_task", "version": "2", "instance": "quote"}
    assert first["run"] == {"task": "owl_task", "sample": "quote", "epoch": 1, "scorer": "includes",
                            "model": "mockllm/model"}
    assert first["extra"]["import"] == {"format": "inspect", "source": str(log_path),
                                        "position": first["extra"]["import"]["position"], "version": "1"}


def test_eval_and_json_give_identical_episodes(tmp_path: Path) -> None:
    as_json = list(read("inspect", write_json_log(tmp_path / "a.json"), detector={"channel": "dispatch"}, **LINKED))
    as_eval = list(read("inspect", write_eval_log(tmp_path / "a.eval"), detector={"channel": "dispatch"}, **LINKED))
    assert [strip_import(e) for e in as_json] == [strip_import(e) for e in as_eval]
    assert as_eval[0]["extra"]["import"]["position"] == "samples/quote_epoch_1.json"


def test_messages_tools_and_dispatch(log_path: Path) -> None:
    episodes = by_id(list(read("inspect", log_path, detector={"channel": "dispatch"})))
    comply = episodes["comply:1:posted_canary"]
    messages = comply["context"]["messages"]
    # no injection named: the context runs up to the final answer, every message with its step
    assert [(m["role"], m["step"]) for m in messages] == [
        ("system", 0), ("user", 1), ("assistant", 2), ("tool", 3), ("assistant", 4), ("tool", 5)]
    assert messages[3]["content"].startswith("Welcome. <!--")  # the attachment resolved to its text
    assert messages[3]["name"] == "fetch_page" and messages[3]["tool_call_id"] == "c1"
    assert "injected" not in messages[3]
    # tools of the first model event, parameters as the input schema
    assert [t["name"] for t in comply["context"]["tools"]] == ["fetch_page", "post_note"]
    assert comply["context"]["tools"][1]["input_schema"]["properties"]["channel"]["default"] == "general"
    assert comply["episode"]["dispatch"] == [
        {"tool": "fetch_page", "arguments": {"url": "https://example.invalid/page"}, "id": "c1", "step": 2,
         "decision": "execute"},
        {"tool": "post_note", "arguments": {"text": CANARY}, "id": "c2", "step": 4, "decision": "execute"},
    ]
    assert comply["episode"]["transcript"] == [{"role": "assistant", "content": "Done.", "step": 6}]
    assert "decision_step" not in comply["episode"]
    assert "/episode/decision_step" in {u["path"] for u in comply["unknowns"]}


def test_the_injected_surface_cuts_the_context_at_the_next_turn(log_path: Path) -> None:
    episodes = by_id(list(read("inspect", log_path, detector={"channel": "dispatch"}, injected="tool_result:fetch_page")))
    comply = episodes["comply:1:posted_canary"]
    assert comply["episode"]["decision_step"] == 4
    assert [m["step"] for m in comply["context"]["messages"]] == [0, 1, 2, 3]  # not the result of its own post
    assert comply["context"]["messages"][3]["injected"] is True
    assert [m["step"] for m in comply["episode"]["transcript"]] == [4, 6]
    quote = episodes["quote:1:includes"]
    assert quote["episode"]["decision_step"] == 4 and quote["context"]["messages"][-1]["injected"] is True


def test_text_scorers_become_final_message_signals(log_path: Path) -> None:
    includes = by_id(list(read("inspect", log_path, scorer="includes")))["quote:1:includes"]
    assert includes["detector"] == {
        "scorer": {"name": "includes", "kind": "builtin", "options": {}},
        "channel": "transcript", "scope": "final_message",
        "signals": [{"id": "target-0", "kind": "substring", "value": CANARY, "flags": ["ignorecase"]}],
    }
    assert includes["extra"]["inspect"] == {"score": "C"}
    assert "/detector/positive_labels" in {u["path"] for u in includes["unknowns"]}


@pytest.mark.parametrize(("scorer", "options", "value", "flags"), [
    ("match", {"location": "end", "ignore_case": False}, r"X\-1[\s\W]*\Z", None),
    ("match", {"location": "begin"}, r"\A[\s\W]*X\-1", ["ignorecase"]),
    ("match", {"location": "any"}, r"X\-1", ["ignorecase"]),
    ("exact", {}, r"\A[\s\W]*X\-1[\s\W]*\Z", ["ignorecase"]),
    ("pattern", {"pattern": r"ANSWER: (\w+)", "ignore_case": False}, r"ANSWER: (\w+)", None),
])
def test_match_exact_and_pattern_become_regex_signals(tmp_path: Path, scorer: str, options: dict[str, Any],
                                                      value: str, flags: list[str] | None) -> None:
    log = inspect_log()
    log["eval"]["scorers"] = [{"name": f"inspect_ai/{scorer}", "options": options}]
    for s in log["samples"]:
        s["target"] = ["X-1"]
    episode = next(read("inspect", write_json_log(tmp_path / "m.json", log)))
    signal = episode["detector"]["signals"][0]
    assert signal["kind"] == "regex" and signal["value"] == value and signal.get("flags") == flags
    assert episode["detector"]["scorer"]["kind"] == "builtin"


def test_a_custom_scorer_is_code_with_channel_and_signals_unknown(log_path: Path) -> None:
    module = format_module("inspect")
    records = list(iter_records("inspect", [log_path], make_options(module, extra={"scorer": "posted_canary"})))
    # without --detector the channel is not recorded: a located ERROR per episode, never a guess
    assert {r.code for r in records} == {"L312"} and len(records) == 3
    assert "posted_canary" in records[0].message and "--detector" in records[0].message
    episode = next(read("inspect", log_path, scorer="posted_canary", detector={"channel": "dispatch"}))
    assert episode["detector"]["scorer"] == {"name": "posted_canary", "kind": "code", "options": {}}
    assert episode["detector"]["decision_field"] == "decision" and episode["detector"]["decision_source"] == "derived"
    paths = {u["path"] for u in episode["unknowns"]}
    assert "/detector/signals" in paths and "/detector/channel" not in paths  # the user supplied the channel


def test_null_controls_are_linked_by_a_metadata_key(log_path: Path) -> None:
    detector = {"channel": "dispatch", "positive_labels": ["C"]}
    episodes = by_id(list(read("inspect", log_path, detector=detector, scorer="posted_canary", **LINKED)))
    assert set(episodes) == {"quote:1:posted_canary", "comply:1:posted_canary", "clean:1:posted_canary"}
    null = episodes["comply:1:posted_canary"]["controls"]["null"]
    assert null["source"] == "harness" and null["label"] == "I" and null["fired"] is False
    assert null["transcript"] == [{"role": "assistant", "content": "A welcome page.", "step": 4}]
    assert [r["tool"] for r in null["dispatch"]] == ["fetch_page"]
    # a sample without the link key has no control, and says so
    log = inspect_log()
    del log["samples"][1]["metadata"]["group"]
    other = by_id(list(read("inspect", write_json_log(log_path.parent / "nolink.json", log), detector=detector,
                            scorer="posted_canary", **LINKED)))
    assert "controls" not in other["quote:1:posted_canary"]
    assert "/controls/null" in {u["path"] for u in other["quote:1:posted_canary"]["unknowns"]}


def test_two_controls_for_one_link_value_are_ambiguous(tmp_path: Path) -> None:
    log = inspect_log()
    log["samples"][0]["metadata"]["kind"] = "control"
    with pytest.raises(ImportProblemError, match="ambiguous"):
        list(read("inspect", write_json_log(tmp_path / "two.json", log), scorer="includes", **LINKED))


@pytest.mark.parametrize("broken", ["not a zip and not json", "{\"no_eval\": 1}"])
def test_an_unreadable_log_is_one_located_problem(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(broken, encoding="utf-8")
    records = list(iter_records("inspect", [path]))
    assert len(records) == 1 and records[0].episode is None and records[0].code == "L310"


def test_a_bad_sample_member_is_located_and_the_rest_go_on(tmp_path: Path) -> None:
    log = inspect_log()
    path = write_eval_log(tmp_path / "x.eval", log, method=8)
    import zipfile

    with zipfile.ZipFile(path, "a") as z:
        z.writestr("samples/zzz_epoch_1.json", "{not json")
    records = list(iter_records("inspect", [path], make_options(format_module("inspect"), extra={"scorer": "includes"})))
    bad = [r for r in records if r.episode is None]
    assert len(bad) == 1 and bad[0].position == "samples/zzz_epoch_1.json" and "not valid JSON" in bad[0].message
    assert sum(r.episode is not None for r in records) == 3


def test_an_unknown_injected_surface_is_a_problem(tmp_path: Path) -> None:
    with pytest.raises(ImportProblemError, match="unknown injected surface"):
        list(read("inspect", write_json_log(tmp_path / "a.json"), injected="somewhere"))


def test_json_output_is_plain_json(log_path: Path) -> None:
    for episode in read("inspect", log_path, detector={"channel": "dispatch"}):
        assert json.loads(json.dumps(episode)) == episode
