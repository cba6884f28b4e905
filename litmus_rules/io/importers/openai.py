"""OpenAI Chat Completions and Responses logs as episodes (the shared walk is `_chat.py`).

Read: request bodies (`messages`, or Responses `input` and `instructions`; `tools`, both tool
shapes), chat completions (`choices[0].message`), Responses `response` objects (`output` items),
chat messages (`content` a string, parts or null; `tool_calls` with `function.arguments` a JSON
text; legacy `function_call`; role `tool`/`function`), and Responses items (`message`,
`function_call`, `function_call_output`). Reasoning and built-in tool items carry no call of a
declared tool and are not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.io.importers import _chat
from litmus_rules.io.importers._chat import Call, Exchange, Turn, request_model_and_tools
from litmus_rules.io.importers._common import tool as make_tool
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "openai"
VERSION = "1"
EXTENSIONS = (".json", ".jsonl")
OPTIONS: dict[str, str] = {}
DETECTOR_RECORDED = False

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_ITEM_TYPES = ("message", "function_call", "function_call_output")
_SKIPPED_ITEMS = ("reasoning", "web_search_call", "file_search_call", "computer_call", "image_generation_call",
                  "code_interpreter_call", "mcp_list_tools", "mcp_call", "local_shell_call")


def records(path: str, options: Options) -> Iterator[Imported | Problem]:
    return _chat.records(path, options, _Dialect(), VERSION)


class _Dialect:
    NAME = NAME

    def owns(self, value: Mapping[str, Any]) -> bool | None:
        if "stop_reason" in value or (value.get("type") == "message" and "stop_sequence" in value):
            return False  # an Anthropic message
        content = value.get("content")
        if isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result")
                                             for b in content):
            return False
        if "input_schema" in value and "type" not in value:
            return False  # an Anthropic tool
        if "choices" in value or "tool_calls" in value or value.get("type") in _ITEM_TYPES[1:]:
            return True
        return None

    def is_tool(self, value: Any) -> bool:
        return (isinstance(value, Mapping) and value.get("type") == "function"
                and (isinstance(value.get("function"), Mapping) or isinstance(value.get("name"), str)))

    def tool(self, value: Mapping[str, Any]) -> dict[str, Any]:
        spec = value.get("function") if isinstance(value.get("function"), Mapping) else value
        return make_tool(str(spec.get("name")), spec.get("description"), spec.get("parameters"))

    def collect(self, value: Mapping[str, Any], into: Exchange) -> bool:
        if isinstance(value.get("choices"), list):  # a chat completion
            choices = [c for c in value["choices"] if isinstance(c, Mapping)]
            if not choices or not isinstance(choices[0].get("message"), Mapping):
                return False
            self._response_meta(value, into)
            return self._message(choices[0]["message"], into, response=True)
        if value.get("object") == "response" or (isinstance(value.get("output"), list) and "id" in value):
            self._response_meta(value, into)
            for item in value.get("output") or []:
                if isinstance(item, Mapping):
                    self._item(item, into, response=True)
            into.found = True
            return True
        if isinstance(value.get("messages"), list) or "input" in value and ("model" in value or "instructions" in value):
            return self._request(value, into)
        if value.get("type") in _ITEM_TYPES and "role" not in value or value.get("type") in _ITEM_TYPES[1:]:
            return self._item(value, into)
        if value.get("role") in _ROLES and value.get("type") in (None, "message"):
            return self._message(value, into)
        return False

    def _response_meta(self, value: Mapping[str, Any], into: Exchange) -> None:
        if isinstance(value.get("model"), str):
            into.model = value["model"]
        if isinstance(value.get("id"), str):
            into.response_id = value["id"]

    def _request(self, body: Mapping[str, Any], into: Exchange) -> bool:
        request_model_and_tools(self, body, into)
        if isinstance(body.get("instructions"), str):
            into.system.append(body["instructions"])
        messages = body.get("messages") if isinstance(body.get("messages"), list) else body.get("input")
        if isinstance(messages, str):
            into.add(Turn({"role": "user", "content": messages}))
        for m in messages if isinstance(messages, list) else []:
            if isinstance(m, Mapping):
                if not (self._item(m, into) if "type" in m and m.get("type") != "message" else self._message(m, into)):
                    self._item(m, into)
        into.found = True
        return True

    def _message(self, m: Mapping[str, Any], into: Exchange, response: bool = False) -> bool:
        role = m.get("role")
        if role not in _ROLES:
            return False
        message: dict[str, Any] = {"role": "tool" if role == "function" else role}
        if m.get("content") is not None:
            message["content"] = m["content"]
        for key in ("name", "tool_call_id"):
            if isinstance(m.get(key), str):
                message[key] = m[key]
        calls = []
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") if isinstance(tc, Mapping) else None
            if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
                calls.append(Call(tc.get("id") if isinstance(tc.get("id"), str) else None, fn["name"], fn.get("arguments", {})))
        if isinstance(m.get("tool_calls"), list):
            message["tool_calls"] = m["tool_calls"]
        legacy = m.get("function_call")
        if isinstance(legacy, Mapping) and isinstance(legacy.get("name"), str):
            calls.append(Call(None, legacy["name"], legacy.get("arguments", {})))
            message.setdefault("content", [{"type": "function_call", **legacy}])
        answers = [m["tool_call_id"]] if role == "tool" and isinstance(m.get("tool_call_id"), str) else []
        into.add(Turn(message, calls, answers, response))
        return True

    def _item(self, item: Mapping[str, Any], into: Exchange, response: bool = False) -> bool:
        kind = item.get("type")
        if kind == "message" or (kind is None and item.get("role") in _ROLES):
            content = item.get("content")
            message = {"role": item.get("role") if item.get("role") in _ROLES else "assistant"}
            if content is not None:
                message["content"] = content
            into.add(Turn(message, response=response))
            return True
        if kind == "function_call" and isinstance(item.get("name"), str):
            call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
            part = {k: item[k] for k in ("type", "name", "arguments", "call_id") if k in item}
            call = Call(call_id, item["name"], item.get("arguments", {}))
            last = into.turns[-1] if into.turns else None
            if last is not None and last.response == response and last.message.get("role") == "assistant" \
                    and last.calls and isinstance(last.message.get("content"), list) \
                    and all(isinstance(p, Mapping) and p.get("type") == "function_call" for p in last.message["content"]):
                last.message["content"].append(part)  # parallel calls: one assistant turn
                last.calls.append(call)
                if call_id is not None:
                    into.names[call_id] = call.name
            else:
                into.add(Turn({"role": "assistant", "content": [part]}, [call], response=response))
            return True
        if kind == "function_call_output" and isinstance(item.get("call_id"), str):
            output = item.get("output")
            message = {"role": "tool", "tool_call_id": item["call_id"]}
            if output is not None:
                message["content"] = output if isinstance(output, (str, list)) else str(output)
            into.add(Turn(message, answers=[item["call_id"]], response=response))
            return True
        return kind in _SKIPPED_ITEMS
