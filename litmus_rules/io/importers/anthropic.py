"""Anthropic Messages logs as episodes (the shared walk is `_chat.py`).

Read: request bodies (`system` as text or text blocks, `messages`, `tools` with `input_schema`),
responses (`type: message`), and messages whose `content` is text or blocks: `tool_use` blocks are
the agent's calls (`input` is the arguments object), `tool_result` blocks answer them by
`tool_use_id`; every block (text, image, document, thinking, ...) is kept as a content part.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.io.importers import _chat
from litmus_rules.io.importers._chat import Call, Exchange, Turn, request_model_and_tools
from litmus_rules.io.importers._common import tool as make_tool
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "anthropic"
VERSION = "1"
EXTENSIONS = (".json", ".jsonl")
OPTIONS: dict[str, str] = {}
DETECTOR_RECORDED = False

_OPENAI_TYPES = ("function_call", "function_call_output", "function")


def records(path: str, options: Options) -> Iterator[Imported | Problem]:
    return _chat.records(path, options, _Dialect(), VERSION)


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    return [b for b in content if isinstance(b, Mapping)] if isinstance(content, list) else []


class _Dialect:
    NAME = NAME

    def owns(self, value: Mapping[str, Any]) -> bool | None:
        if "choices" in value or "tool_calls" in value or value.get("type") in _OPENAI_TYPES:
            return False
        if value.get("object") in ("chat.completion", "response"):
            return False
        if "stop_reason" in value or any(b.get("type") in ("tool_use", "tool_result") for b in _blocks(value.get("content"))):
            return True
        return None

    def is_tool(self, value: Any) -> bool:
        return (isinstance(value, Mapping) and isinstance(value.get("name"), str) and "role" not in value
                and ("input_schema" in value or str(value.get("type", "")).startswith(("web_search", "bash", "text_editor",
                                                                                        "computer", "code_execution"))))

    def tool(self, value: Mapping[str, Any]) -> dict[str, Any]:
        return make_tool(value["name"], value.get("description"), value.get("input_schema"))

    def collect(self, value: Mapping[str, Any], into: Exchange) -> bool:
        if value.get("type") == "message" and value.get("role") == "assistant":  # a response
            if isinstance(value.get("model"), str):
                into.model = value["model"]
            if isinstance(value.get("id"), str):
                into.response_id = value["id"]
            return self._message(value, into, response=True)
        if isinstance(value.get("messages"), list):
            return self._request(value, into)
        if value.get("role") in ("user", "assistant") and "content" in value and value.get("type") in (None, "message"):
            return self._message(value, into)
        return False

    def _request(self, body: Mapping[str, Any], into: Exchange) -> bool:
        request_model_and_tools(self, body, into)
        system = body.get("system")
        if isinstance(system, str):
            into.system.append(system)
        elif isinstance(system, list):
            into.system += [b["text"] for b in _blocks(system) if isinstance(b.get("text"), str)]
        for m in body["messages"]:
            if isinstance(m, Mapping):
                self._message(m, into)
        into.found = True
        return True

    def _message(self, m: Mapping[str, Any], into: Exchange, response: bool = False) -> bool:
        role = m.get("role")
        if role not in ("user", "assistant"):
            return False
        content = m.get("content")
        message: dict[str, Any] = {"role": role}
        if content is not None:
            message["content"] = content
        calls = [Call(b.get("id") if isinstance(b.get("id"), str) else None, b["name"], b.get("input", {}))
                 for b in _blocks(content) if b.get("type") == "tool_use" and isinstance(b.get("name"), str)]
        answers = [b["tool_use_id"] for b in _blocks(content)
                   if b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str)]
        into.add(Turn(message, calls, answers, response))
        return True
