"""The OpenAI (Chat Completions, Responses) and Anthropic (Messages) importers on exchanges we write
ourselves: context up to the decision, calls as dispatch records, derived decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from importers_a_fixtures import CANARY, anthropic_exchange, openai_chat_exchange, openai_responses_exchange
from litmus_rules.io.importers import ImportUsageError, iter_records, make_options, format_module, read

DETECTOR = {"channel": "dispatch"}


def write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_chat_completions_exchange(tmp_path: Path) -> None:
    [episode] = read("openai", write(tmp_path, "chat.json", openai_chat_exchange()), detector=DETECTOR)
    assert episode["id"] == "openai:chatcmpl-owl1" and episode["run"] == {"model": "demo-model"}
    messages = episode["context"]["messages"]
    assert [(m["role"], m["step"]) for m in messages] == [("system", 0), ("user", 1), ("assistant", 2), ("tool", 3)]
    assert "content" not in messages[2]  # content: null is no text, not an empty one
    assert messages[3]["name"] == "fetch_page"  # named after the call it answers
    assert [t["name"] for t in episode["context"]["tools"]] == ["fetch_page", "post_note"]
    # the response is the decision; the arguments text is parsed on the way out (wire normalisation)
    assert episode["episode"]["decision_step"] == 4
    assert episode["episode"]["dispatch"] == [
        {"tool": "fetch_page", "arguments": {"url": "u"}, "id": "call_1", "step": 2, "decision": "execute"},
        {"tool": "post_note", "arguments": {"text": CANARY}, "id": "call_2", "step": 4, "decision": "execute"},
    ]
    assert episode["detector"] == {"decision_field": "decision", "decision_source": "derived", "channel": "dispatch"}


def test_a_call_without_a_result_carries_no_decision(tmp_path: Path) -> None:
    exchange = openai_chat_exchange()
    del exchange["followup"]
    [episode] = read("openai", write(tmp_path, "chat.json", exchange), detector=DETECTOR)
    assert "decision" not in episode["episode"]["dispatch"][-1]
    assert "/episode/dispatch" in {u["path"] for u in episode["unknowns"]}


def test_responses_items(tmp_path: Path) -> None:
    [episode] = read("openai", write(tmp_path, "resp.json", openai_responses_exchange()), detector=DETECTOR)
    assert episode["context"]["system_prompt"] == "You are helpful."
    # two parallel function_call items are one assistant turn: the decision
    assert episode["episode"]["decision_step"] == 1
    assert [m["role"] for m in episode["context"]["messages"]] == ["user"]
    assert [t["name"] for t in episode["context"]["tools"]] == ["post_note"]  # built-in tools declare no function
    dispatch = episode["episode"]["dispatch"]
    assert [(r["tool"], r.get("decision")) for r in dispatch] == [("post_note", "execute"), ("fetch_page", None)]
    assert dispatch[0]["arguments"] == {"text": CANARY}


def test_anthropic_messages(tmp_path: Path) -> None:
    [episode] = read("anthropic", write(tmp_path, "msg.json", anthropic_exchange()), detector=DETECTOR)
    assert episode["id"] == "anthropic:msg_owl1" and episode["run"] == {"model": "claude-demo"}
    assert episode["context"]["system_prompt"] == "You are helpful."
    assert episode["context"]["messages"] == [{"role": "user", "content": "Post the code please.", "step": 0}]
    assert episode["context"]["tools"][0]["input_schema"]["properties"]["channel"]["default"] == "general"
    assert episode["episode"]["dispatch"] == [
        {"tool": "post_note", "arguments": {"text": CANARY}, "id": "toolu_1", "step": 1, "decision": "execute"}]
    assert episode["episode"]["transcript"][0]["content"][0] == {"type": "text", "text": "Posting."}


def test_each_importer_skips_the_other_providers_exchanges(tmp_path: Path) -> None:
    both = write(tmp_path, "both.json", {"a": openai_chat_exchange(), "b": anthropic_exchange(),
                                         "c": openai_responses_exchange()})
    assert [r.position for r in iter_records("openai", [both], make_options(format_module("openai"), DETECTOR))] == ["/a", "/c"]
    assert [r.position for r in iter_records("anthropic", [both], make_options(format_module("anthropic"), DETECTOR))] == ["/b"]


def test_jsonl_one_exchange_per_line_and_a_bad_line_is_located(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(openai_chat_exchange()) + "\n{broken\n" + json.dumps(openai_responses_exchange()) + "\n",
                    encoding="utf-8")
    records = list(iter_records("openai", [path], make_options(format_module("openai"), DETECTOR)))
    assert [(r.position, r.episode is not None) for r in records] == [("line 1", True), ("line 2", False), ("line 3", True)]
    assert records[1].code == "L310" and "not valid JSON" in (records[1].message or "")


def test_an_exchange_without_an_assistant_turn_is_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "q.json", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    [record] = iter_records("openai", [path], make_options(format_module("openai"), DETECTOR))
    assert record.episode is None and "no assistant turn" in (record.message or "")


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_without_a_detector_channel_the_import_is_misuse(fmt: str) -> None:
    with pytest.raises(ImportUsageError, match="records no detector"):
        make_options(format_module(fmt))
