"""MCP server captures as episodes: one episode per input file (one server's manifest).

Read, from a JSON document (one object, an array, or JSONL of JSON-RPC messages): `tools/list`
results (every page, in order), the `initialize` result, and `tools/call` results. A JSON-RPC
response is classified by the method of the request with the same id when the capture has it,
else by its shape (`tools`; `protocolVersion` and `serverInfo`; `content`); bare results and
objects holding them side by side (`{"initialize_result": ..., "tools_list_result": ...}`) are read
the same way. Anything else in the document is not MCP wire data and is not read.

Mapped: each tool with its `title`, `description`, `inputSchema` (written as `input_schema`),
`outputSchema`, `annotations`, `execution`, `icons` and `_meta`; `initialize.instructions` as the
system prompt; each `tools/call` result as a tool message (its `content` parts, plus a
`structuredContent` part), named after the called tool when the request is in the capture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.io.importers._common import json_documents, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NAME = "mcp"
VERSION = "1"
EXTENSIONS = (".json", ".jsonl")
DETECTOR_RECORDED = False
OPTIONS = {"injected": "comma-separated tool names to mark `injected: true` (the tools the attacker controls)"}

_TOOL_KEYS = ("title", "description", "outputSchema", "annotations", "execution", "icons", "_meta")
NOTES = {
    "/canaries": "an MCP capture records no planted tokens: list the sentinel values the harness planted "
                 "(or `canaries: []` when there are none)",
    "/provenance/payload_generator": "an MCP capture does not say who wrote the tool descriptions",
    "/controls": "an MCP capture holds no agent run; the control runs come from `litmus-rules preflight`",
    "/episode": "an MCP capture is the server's side: it holds no run of the agent under test",
    "/detector/signals": "an MCP server does not score anything: supply the harness's signals with --detector",
}


class _Capture:
    def __init__(self) -> None:
        self.tools: list[dict[str, Any]] = []
        self.init: Mapping[str, Any] | None = None
        self.results: list[tuple[Mapping[str, Any], str | None, Any]] = []  # (result, tool name, request id)
        self.requests: dict[Any, Mapping[str, Any]] = {}  # JSON-RPC id -> request

    def read(self, value: Any, depth: int = 0) -> None:
        if isinstance(value, list):
            for item in value:
                self.read(item, depth)
            return
        if not isinstance(value, Mapping) or depth > 3:
            return
        if isinstance(value.get("method"), str) and "id" in value:
            self.requests[_key(value["id"])] = value
            return
        if "result" in value and "id" in value:
            request = self.requests.get(_key(value["id"]))
            self.result(value["result"], request, value["id"])
            return
        if self.result(value, None, None):
            return
        if isinstance(value.get("name"), str) and "inputSchema" in value:
            self.tools.append(value)  # a single tool object
            return
        for item in value.values():
            self.read(item, depth + 1)

    def result(self, result: Any, request: Mapping[str, Any] | None, ident: Any) -> bool:
        if not isinstance(result, Mapping):
            return False
        method = request.get("method") if request is not None else None
        if method == "tools/list" or (method is None and isinstance(result.get("tools"), list)):
            self.tools += [t for t in result.get("tools") or [] if isinstance(t, Mapping) and isinstance(t.get("name"), str)]
            return True
        if method == "initialize" or (method is None and "protocolVersion" in result and "serverInfo" in result):
            self.init = result
            return True
        if method == "tools/call" or (method is None and isinstance(result.get("content"), list)):
            params = request.get("params") if request is not None else None
            name = params.get("name") if isinstance(params, Mapping) else None
            self.results.append((result, name if isinstance(name, str) else None, ident))
            return True
        return False


def _key(ident: Any) -> str:
    return repr(ident)  # JSON-RPC ids are strings or numbers: 1 and "1" are different requests


def _tool(raw: Mapping[str, Any], injected: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"name": raw["name"]}
    out.update({k: raw[k] for k in _TOOL_KEYS if k in raw})
    if isinstance(raw.get("inputSchema"), Mapping):
        out["input_schema"] = raw["inputSchema"]
    if raw["name"] in injected:
        out["injected"] = True
    return out


def _message(result: Mapping[str, Any], name: str | None, ident: Any, step: int) -> dict[str, Any]:
    parts: list[Any] = [p for p in result.get("content") or [] if isinstance(p, (Mapping, str))]
    if "structuredContent" in result:
        parts.append({"type": "structuredContent", "structuredContent": result["structuredContent"]})
    message: dict[str, Any] = {"role": "tool", "content": parts}
    if name is not None:
        message["name"] = name
    if ident is not None:
        message["tool_call_id"] = str(ident)
    message["step"] = step
    return message


def records(path: str, options: Options) -> Iterator[Imported | Problem]:
    capture = _Capture()
    for doc in json_documents(path):
        if isinstance(doc, Problem):
            yield doc
            continue
        capture.read(doc[1])
    if not capture.tools and capture.init is None and not capture.results:
        yield Problem("", "no MCP result found (expected a `tools/list`, `initialize` or `tools/call` result)")
        return
    injected = {n.strip() for n in options.extra.get("injected", "").split(",") if n.strip()}
    missing = sorted(injected - {t["name"] for t in capture.tools})
    if missing:
        yield Problem("", f"--option injected names `{missing[0]}`, which is not a tool of this server")
        return
    info = capture.init.get("serverInfo") if capture.init is not None else None
    info = info if isinstance(info, Mapping) else {}
    server = info.get("name") if isinstance(info.get("name"), str) else os.path.basename(path)
    context: dict[str, Any] = {}
    instructions = capture.init.get("instructions") if capture.init is not None else None
    if isinstance(instructions, str):
        context["system_prompt"] = instructions
    if capture.results:
        context["messages"] = [_message(r, n, i, step) for step, (r, n, i) in enumerate(capture.results)]
    context["tools"] = [_tool(t, injected) for t in capture.tools]
    run: dict[str, Any] = {"server": server}
    if isinstance(info.get("version"), str):
        run["server_version"] = info["version"]
    if capture.init is not None and isinstance(capture.init.get("protocolVersion"), str):
        run["protocol"] = capture.init["protocolVersion"]
    episode = {
        "litmus": "episode/1.1",
        "id": f"mcp:{server}",
        "run": run,
        "context": context,
        "detector": {},
        "unknowns": [unknown(p, n) for p, n in NOTES.items()],
    }
    yield Imported(episode, "")
