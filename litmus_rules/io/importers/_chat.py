"""Provider chat logs (OpenAI Chat Completions and Responses, Anthropic Messages) as episodes: the
part both providers share. `openai.py` and `anthropic.py` each give a `Dialect` that knows its
provider's shapes; this module walks a document, collects tools and the conversation, finds the
decision and writes the episode.

A document is one exchange: a request body (`messages`/`input`, `tools`, `system`/`instructions`),
its response, and any later turns (tool results), held in one JSON object in any arrangement
(`{request, response}`, a request body alone, or named wire objects side by side); or a JSON object
whose values are such exchanges (one episode each, positioned by key; an exchange of the other
provider is skipped). JSONL: one exchange per line.

The decision is the response when the document has one (a chat completion, a Responses `response`,
an Anthropic `message`), else the last assistant turn that calls tools, else the last assistant
turn. `context.messages` is what came before it; the agent's calls are dispatch records, each with
`decision: execute` when a later tool result answers its call id (the call was actually dispatched:
`decision_source: derived`) and no decision when none does (whether it ran is not recorded).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import attrs

from litmus_rules.io.importers._common import json_documents, pointer, unknown
from litmus_rules.io.importers._contract import Imported, Options, Problem

NOT_RECORDED_NOTES = {
    "/canaries": "a chat log records no planted tokens: list the sentinel values the harness planted "
                 "(or `canaries: []` when there are none)",
    "/provenance/payload_generator": "a chat log does not say who wrote the injected text",
    "/controls": "a chat log holds one run; the control runs come from `litmus-rules preflight` or the harness",
}


@attrs.define
class Call:
    id: str | None
    name: str
    arguments: Any  # a dict, or the provider's JSON text (normalised on load)
    step: int = 0


@attrs.define
class Turn:
    message: dict[str, Any]  # the episode message
    calls: list[Call] = attrs.field(factory=list)
    answers: list[str] = attrs.field(factory=list)  # call ids whose results this turn carries
    response: bool = False  # part of the document's explicit response


@attrs.define
class Exchange:
    tools: list[dict[str, Any]] = attrs.field(factory=list)
    system: list[str] = attrs.field(factory=list)
    turns: list[Turn] = attrs.field(factory=list)
    model: str | None = None
    response_id: str | None = None
    found: bool = False  # any wire object of this provider
    names: dict[str, str] = attrs.field(factory=dict)  # call id -> tool name, to name tool results

    def add(self, turn: Turn) -> None:
        self.found = True
        for call in turn.calls:
            if call.id is not None:
                self.names[call.id] = call.name
        if turn.message.get("role") == "tool" and "name" not in turn.message and turn.answers:
            name = self.names.get(turn.answers[0])
            if name is not None:
                turn.message["name"] = name
        self.turns.append(turn)


class Dialect(Protocol):
    NAME: str

    def owns(self, value: Mapping[str, Any]) -> bool | None:
        """True: this provider's object; False: the other provider's; None: cannot tell."""

    def is_tool(self, value: Any) -> bool: ...

    def tool(self, value: Mapping[str, Any]) -> dict[str, Any]: ...

    def collect(self, value: Mapping[str, Any], into: Exchange) -> bool:
        """Add a request body, response, message or item to `into`; False if it is none of them."""


def request_model_and_tools(dialect: Dialect, body: Mapping[str, Any], into: Exchange) -> None:
    """What every provider's request body says the same way: the model, and the tools offered."""
    if isinstance(body.get("model"), str) and into.model is None:
        into.model = body["model"]
    for t in body.get("tools") or []:
        if dialect.is_tool(t):
            into.tools.append(dialect.tool(t))


def records(path: str, options: Options, dialect: Dialect, version: str) -> Iterator[Imported | Problem]:
    stem = os.path.basename(path)
    found = 0
    for doc in json_documents(path):
        if isinstance(doc, Problem):
            yield doc
            continue
        position, value = doc
        for where, exchange in _exchanges(value, position, dialect):
            if isinstance(exchange, Problem):
                yield exchange
                continue
            found += 1
            yield _episode(exchange, stem, where, dialect, version)
    if not found:
        yield Problem("", f"no {dialect.NAME} exchange found (expected a request body, a response, or messages)")


def _exchanges(value: Any, position: str, dialect: Dialect) -> Iterator[tuple[str, Exchange | Problem]]:
    if isinstance(value, list):
        exchange = Exchange()
        if value and all(isinstance(v, Mapping) and dialect.collect(v, exchange) for v in value):
            yield position, exchange  # a bare list of messages or items
            return
        for i, item in enumerate(value):
            yield from _exchanges(item, f"{position}/{i}" if position else pointer(i), dialect)
        return
    if not isinstance(value, Mapping):
        yield position or "/", Problem(position or "/", f"expected a JSON object, found {type(value).__name__}")
        return
    if not _container(value, dialect):
        exchange = Exchange()
        if _fill(value, exchange, dialect) and exchange.found:
            yield position or "/", exchange
        return
    # a container of named exchanges: each value that is one of ours is an episode
    for key, item in value.items():
        if isinstance(item, Mapping):
            sub = Exchange()
            if _fill(item, sub, dialect) and sub.found:
                yield f"{position}{pointer(key)}", sub


def _direct(value: Any, dialect: Dialect) -> bool:
    """A wire object itself (a tool, a request body, a response, a message or item)."""
    return isinstance(value, Mapping) and (dialect.is_tool(value) or dialect.collect(value, Exchange()))


def _container(value: Mapping[str, Any], dialect: Dialect) -> bool:
    """An object whose values are exchanges (named), rather than one exchange's wire objects side
    by side: some value is no wire object itself but holds some."""
    if _direct(value, dialect):
        return False
    return any(isinstance(item, Mapping) and not _direct(item, dialect) and _fill(item, Exchange(), dialect)
               for item in value.values())


def _fill(value: Mapping[str, Any], exchange: Exchange, dialect: Dialect) -> bool:
    """Collect every wire object of `value` (itself, or its values side by side). False when it
    holds an object of the other provider or nothing recognisable at all."""
    if dialect.owns(value) is False:
        return False
    if dialect.collect(value, exchange):
        return True
    any_found = False
    for item in value.values():
        if isinstance(item, list) and item and all(dialect.is_tool(t) for t in item):
            exchange.tools += [dialect.tool(t) for t in item]
            any_found = True
        elif isinstance(item, list) and item and all(isinstance(m, Mapping) for m in item):
            probe = Exchange()
            if all(dialect.collect(m, probe) for m in item):
                for m in item:
                    dialect.collect(m, exchange)
                any_found = True
        elif isinstance(item, Mapping):
            if dialect.owns(item) is False:
                return False
            if dialect.is_tool(item):
                exchange.tools.append(dialect.tool(item))
                any_found = True
            elif dialect.collect(item, exchange):
                any_found = True
    return any_found


def _decision(turns: list[Turn]) -> int | None:
    for i, turn in enumerate(turns):
        if turn.response:
            return i
    assistant = [i for i, t in enumerate(turns) if t.message.get("role") == "assistant"]
    calling = [i for i in assistant if turns[i].calls]
    return (calling or assistant or [None])[-1]


def _episode(exchange: Exchange, stem: str, where: str, dialect: Dialect, version: str) -> Imported | Problem:
    turns = exchange.turns
    decision = _decision(turns)
    if decision is None:
        return Problem(where, "no assistant turn in this exchange: there is no decision to import")
    answered = {a for t in turns for a in t.answers}
    dispatch = []
    for step, turn in enumerate(turns):
        for call in turn.calls:
            record: dict[str, Any] = {"tool": call.name, "arguments": call.arguments}
            if call.id is not None:
                record["id"] = call.id
            record["step"] = step
            if call.id is not None and call.id in answered:
                record["decision"] = "execute"
            dispatch.append(record)
    context: dict[str, Any] = {}
    if exchange.system:
        context["system_prompt"] = "\n\n".join(exchange.system)
    context["messages"] = [{**t.message, "step": i} for i, t in enumerate(turns[:decision])]
    if exchange.tools:
        context["tools"] = exchange.tools
    unknowns = [unknown(p, n) for p, n in NOT_RECORDED_NOTES.items()]
    unknowns.append(unknown("/detector/signals", f"the {dialect.NAME} log does not say how the harness scores "
                                                 "the run: supply the signals with --detector"))
    if any("decision" not in r for r in dispatch):
        unknowns.append(unknown("/episode/dispatch", "a call without a later tool result: whether it was "
                                                     "dispatched is not recorded, so it carries no decision"))
    episode_run: dict[str, Any] = {
        "transcript": [{**t.message, "step": i} for i, t in enumerate(turns) if i >= decision
                       and t.message.get("role") == "assistant"],
        "dispatch": dispatch,
        "decision_step": decision,
    }
    ident = exchange.response_id or f"{stem}{where if where != '/' else ''}"
    episode: dict[str, Any] = {
        "litmus": "episode/1.1",
        "id": f"{dialect.NAME}:{ident}",
        "context": context,
        "detector": {"decision_field": "decision", "decision_source": "derived"},
        "episode": episode_run,
        "unknowns": unknowns,
    }
    if exchange.model:
        episode["run"] = {"model": exchange.model}
    return Imported(episode, where)
