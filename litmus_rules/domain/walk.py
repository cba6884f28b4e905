"""The surface walk: every string value and every object key under an episode's `context`.

One walker, used by every consumer (the `surfaces` fact, `transcript_text`, the stub agents), so
that no rule inherits a blind spot from a list of keys someone thought of. Known places keep their
meaning (a kind, and for JSON Schemas the argument a value belongs to, which `fillable_call`
reads); every other key and value is read as well, with kind `key` (an object key) or `other`.

What is not emitted, and why nothing can hide there:
- `injected: true|false` (a boolean): the harness's flag, not text. Any other value is read.
- a message's `step` when it is an integer or null (episode/1.1): the harness's clock, not text;
  steps.py reads it to leave out the messages that arrived after the decision. Any other value is
  read.
- booleans and null: fixed words (`true`, `false`, `null`) of JSON, never a per-instance token.
- key names in `FORMAT_KEYS` and `type`/`role` values in `FORMAT_WORDS` (walk_vocab.py): words of the episode
  format, of JSON Schema and of the providers' message shapes, the same in every instance. A
  canary or a payload is per-instance text, so it is never one of these fixed words; reading them
  would only add thousands of identical surfaces (and partial overlaps on "description") to every
  episode. Any key or `type`/`role` value outside these sets is read.
Numbers are read (as JSON text): a harness may plant a numeric canary, and the agent reads `4417`
as text like any other.

A message's `content` may be a list of parts of any provider shape; each part is read as data
(every key and string in it, nested parts too), and a `tool_result` / `function_call_output` part
is read as a tool's result. A message's `tool_calls` (episode/1.1) are read with kind `tool_call`,
an `arguments` JSON text as written and decoded (see `tool_calls`).

An item's `injected: true` covers everything inside it, at any depth (a content part, a tool, a
schema node may carry it). A nested `injected: false` does not clear it: the flag is inside the
payload, which must not be able to un-mark itself (fail closed).

The walk is bounded (`MAX_DEPTH`, `MAX_NODES`, `MAX_SURFACES`, `MAX_TEXT`); past a bound it raises
`WalkLimit` (an `EvaluationError`) naming the limit and the origin where it stopped, which the
`surfaces` fact turns into *unknown* (fail closed: text that was not read is never clean).

How a JSON Schema is read (arguments, `$ref`) is walk_schema.py; how a value, a key and a place
are written as text is walk_text.py; the formats' fixed words and known keys are walk_vocab.py.
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from litmus_rules.errors import EvaluationError
from litmus_rules.domain.walk_schema import SchemaCtx, SchemaWalk
from litmus_rules.domain.walk_text import is_ident, key_origin, key_text, render_value
from litmus_rules.domain.walk_vocab import (
    FORMAT_KEYS,
    FORMAT_WORDS,
    INJECTED,
    OUTPUT_SCHEMAS,
    RESULT_PARTS,
    SKILL_KINDS,
    TOOL_KINDS,
    TOOL_SCHEMAS,
    WORD_KEYS,
    is_word,
)

# Nesting below `context`, counted in containers (objects and lists; a `$ref` hop counts one). The
# loader refuses documents nested deeper than its own limit (200, counted from the document root),
# so a document it accepts is never cut by depth: only `$ref` chains can reach this one.
MAX_DEPTH = 200
MAX_NODES = 2_000_000  # containers visited; the loader's value limit; `$ref` expansion can multiply work
MAX_SURFACES = 100_000  # surfaces per context (each costs ~0.5 KB as a fact)
MAX_TEXT = 32 * 2**20  # characters over all surfaces: twice the loader's document size (refs repeat text)

_TEXT_OF = operator.itemgetter(2)


class Surface(NamedTuple):
    """One piece of text the agent receives (immutable; a named tuple: ~3x cheaper to make than
    a frozen attrs class, and a 400-tool manifest has 10,000+ of them)."""

    origin: str
    kind: str
    text: str
    injected: bool
    tool: str | None = None
    argument: str | None = None

    def to_fact(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "kind": self.kind,
            "text": self.text,
            "injected": self.injected,
            "tool": self.tool,
            "argument": self.argument,
        }


class WalkLimit(EvaluationError):
    """The walk stopped at a limit: the text past `origin` was not read."""

    def __init__(self, limit: str, origin: str, what: str) -> None:
        self.limit = limit
        self.origin = origin
        super().__init__(f"{what} (surface walk limit {limit}); the walk stopped at {origin}, "
                         "so the text past it was not read")


# --- the walker ----------------------------------------------------------------------------------------


Record = tuple  # (origin, kind, text, injected, tool, argument): a Surface's fields, made cheaply


class _Walker(SchemaWalk):
    """Surfaces are appended as plain tuples (a named tuple's constructor is a Python call). The
    surface count is checked on entering each object or list and at the end, the characters of
    texts the walk renders itself (JSON of schema values: `$ref` expansion repeats them) as they
    are made, and all characters at the end: strings of the document are shared, not copied.
    The schema methods (`schema`, `ref`) are walk_schema.SchemaWalk's."""

    __slots__ = ("out", "nodes", "rendered")

    def __init__(self) -> None:
        self.out: list[Record] = []
        self.nodes = 0
        self.rendered = 0

    def emit(self, origin: str, kind: str, text: str, injected: bool, tool: str | None,
             argument: str | None = None) -> None:
        self.out.append((origin, kind, text, injected, tool, argument))

    def render(self, value: Any, origin: str) -> str:
        text = render_value(value)
        self.rendered += len(text)
        if self.rendered > MAX_TEXT:
            raise WalkLimit("MAX_TEXT", origin, f"more than {MAX_TEXT} characters of surface text in the context")
        return text

    def enter(self, origin: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise WalkLimit("MAX_DEPTH", origin, f"the context is nested deeper than {MAX_DEPTH} levels")
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise WalkLimit("MAX_NODES", origin, f"more than {MAX_NODES} objects and lists visited")
        if len(self.out) > MAX_SURFACES:
            self.finish()

    def finish(self) -> list[Record]:
        out = self.out
        if len(out) > MAX_SURFACES:
            raise WalkLimit("MAX_SURFACES", out[MAX_SURFACES][0], f"more than {MAX_SURFACES} surfaces in the context")
        if sum(map(len, map(_TEXT_OF, out))) > MAX_TEXT:
            at = next(i for i, n in enumerate(itertools.accumulate(map(len, map(_TEXT_OF, out)))) if n > MAX_TEXT)
            raise WalkLimit("MAX_TEXT", out[at][0], f"more than {MAX_TEXT} characters of surface text in the context")
        return out

    # -- any value -------------------------------------------------------------------------------------

    def value(self, value: Any, origin: str, kind: str, inj: bool, tool: str | None, depth: int,
              arg: str | None = None) -> None:
        """Every string, number and key in `value`; `depth` is the depth of its container."""
        cls = value.__class__
        if cls is str:
            self.out.append((origin, kind, value, inj, tool, arg))
        elif cls is int or cls is float:  # before the Mapping test below, an ABC's (slow) one
            self.out.append((origin, kind, self.render(value, origin), inj, tool, arg))
        elif cls is dict or (cls is not list and isinstance(value, Mapping)):
            self.mapping(value, origin, kind, inj, tool, depth + 1, arg)
        elif cls is list or cls is tuple:
            self.enter(origin, depth + 1)
            append = self.out.append
            for i, item in enumerate(value):
                if item.__class__ is str:
                    append((f"{origin}[{i}]", kind, item, inj, tool, arg))
                else:
                    self.value(item, f"{origin}[{i}]", kind, inj, tool, depth + 1, arg)
        elif value is None or cls is bool:
            return
        elif isinstance(value, str):
            self.emit(origin, kind, str(value), inj, tool, arg)
        elif isinstance(value, (list, tuple)):
            self.value(list(value), origin, kind, inj, tool, depth, arg)
        else:  # numbers, and what YAML makes of dates
            self.emit(origin, kind, self.render(value, origin), inj, tool, arg)

    def mapping(self, node: Mapping[Any, Any], origin: str, kind: str, inj: bool, tool: str | None,
                depth: int, arg: str | None = None) -> None:
        self.enter(origin, depth)
        if node.get(INJECTED) is True:
            inj = True
        if kind == "message" or kind == "other":
            part = node.get("type")
            if part.__class__ is str and part in RESULT_PARTS:
                kind = "tool_result"
        append = self.out.append
        for key, item in node.items():
            if key.__class__ is not str:
                key = key_text(key)
            if key == INJECTED and (item is True or item is False):
                continue
            sub = f"{origin}.{key}" if is_ident(key) else key_origin(origin, key)
            if key not in FORMAT_KEYS:
                append((sub, "key", key, inj, tool, arg))
            if item.__class__ is str:
                if key in WORD_KEYS and item in FORMAT_WORDS:
                    continue
                append((sub, kind, item, inj, tool, arg))
            elif item is not None and item is not True and item is not False:
                self.value(item, sub, kind, inj, tool, depth, arg)

    def _other(self, key: str, item: Any, origin: str, kind: str, inj: bool, tool: str | None,
               depth: int) -> None:
        """A key nobody planned for: its name (unless a format word) and everything in its value."""
        if key not in FORMAT_KEYS:
            self.emit(origin, "key", key, inj, tool)
        self.value(item, origin, kind, inj, tool, depth)

    # -- context items ----------------------------------------------------------------------------------

    def _open(self, item: Any, origin: str, kind: str, inj: bool, depth: int) -> bool | None:
        """Enter a context item: its `injected` flag (inherited or its own), or None when it is
        not an object, which is then read as data."""
        if item.__class__ is not dict and not isinstance(item, Mapping):
            self.value(item, origin, kind, inj, None, depth - 1)
            return None
        self.enter(origin, depth)
        return inj or item.get(INJECTED) is True

    def _field(self, origin: str, kind: str, item: Any, inj: bool, name: str | None, depth: int) -> None:
        """A known field of an item: a string is one surface; anything else is walked as data."""
        if item.__class__ is str:
            self.emit(origin, kind, item, inj, name)
        else:
            self.value(item, origin, kind, inj, name, depth)

    def message(self, msg: Any, origin: str, inj: bool, depth: int) -> None:
        opened = self._open(msg, origin, "message", inj, depth)
        if opened is None:
            return
        inj = opened
        is_tool = msg.get("role") == "tool"
        kind = "tool_result" if is_tool else "message"
        name = msg.get("name")
        tool = name if is_tool and name.__class__ is str else None
        for key, item in msg.items():
            if key.__class__ is not str:
                key = key_text(key)
            sub = key_origin(origin, key)
            if key == "content":
                self._field(sub, kind, item, inj, tool, depth)
            elif key == "name":
                self.value(item, sub, "message_name", inj, tool, depth)
            elif key == "role":
                if not is_word(item):
                    self.value(item, sub, kind, inj, tool, depth)
            elif key == INJECTED and (item is True or item is False):
                continue
            elif key == "step" and (item is None or item.__class__ is int):
                continue  # the harness's clock (steps.py reads it), not text: like `injected`
            elif key == "tool_calls":
                self.tool_calls(item, sub, inj, depth)
            else:
                self._other(key, item, sub, kind, inj, tool, depth)

    def tool_calls(self, calls: Any, origin: str, inj: bool, depth: int) -> None:
        """A message's `tool_calls` (OpenAI Chat; episode/1.1): the agent's own earlier calls, in
        its context, read as data with kind `tool_call` and the called tool's name. An `arguments`
        JSON text (`function.arguments`) is read as written, and when it is a JSON object or list
        its decoded keys and values are read too, below `...function.arguments`: the escapes of
        the text (`\\"`, `\\u00e9`) no longer hide a token in them. Text that is not JSON
        stays read as written only; JSON too deep to decode stops the walk (`WalkLimit`)."""
        if calls.__class__ is not list:
            self.value(calls, origin, "tool_call", inj, None, depth)
            return
        self.enter(origin, depth + 1)
        for i, call in enumerate(calls):
            sub = f"{origin}[{i}]"
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                self.value(call, sub, "tool_call", inj, None, depth + 1)
                continue
            name = function.get("name")
            name = name if name.__class__ is str else None
            self.value(call, sub, "tool_call", inj, name, depth + 1)
            text = function.get("arguments")
            if text.__class__ is not str or text[:64].lstrip()[:1] not in ("{", "["):
                continue
            try:
                decoded = json.loads(text)
            except ValueError:
                continue
            except RecursionError:  # deeper than Python's stack: not read, so not clean
                raise WalkLimit("MAX_DEPTH", f"{sub}.function.arguments",
                                "the JSON text of a tool call's arguments is nested too deeply to decode") from None
            if decoded.__class__ is dict or decoded.__class__ is list:
                # the call's and the function's own `injected: true` cover the decoded text too
                own = inj or call.get(INJECTED) is True or function.get(INJECTED) is True
                self.value(decoded, f"{sub}.function.arguments", "tool_call", own, name, depth + 3)

    def tool(self, tool: Any, origin: str, inj: bool, depth: int, name: str | None = None) -> None:
        opened = self._open(tool, origin, "other", inj, depth)
        if opened is None:
            return
        inj = opened
        own = tool.get("name")
        function = tool.get("function")  # OpenAI Chat: {type: function, function: {name, ...}}
        if own.__class__ is not str and isinstance(function, Mapping) and function.get("name").__class__ is str:
            own = function["name"]
        name = own if own.__class__ is str else name
        for key, item in tool.items():
            if key.__class__ is not str:
                key = key_text(key)
            sub = key_origin(origin, key)
            kind = TOOL_KINDS.get(key)
            if kind is not None:
                self._field(sub, kind, item, inj, name, depth)
            elif key in TOOL_SCHEMAS or key in OUTPUT_SCHEMAS:
                if isinstance(item, Mapping):
                    # arguments are the input schema's properties; an output schema has none
                    self.schema(item, sub, SchemaCtx(item, sub, name), depth + 1, None,
                                key not in OUTPUT_SCHEMAS, inj)
                else:
                    self.value(item, sub, "other", inj, name, depth)
            elif key == "function" and isinstance(item, Mapping):
                self.tool(item, sub, inj, depth + 1, name)
            elif key == INJECTED and (item is True or item is False):
                continue
            else:
                self._other(key, item, sub, "other", inj, name, depth)

    def skill(self, skill: Any, origin: str, inj: bool, depth: int) -> None:
        opened = self._open(skill, origin, "other", inj, depth)
        if opened is None:
            return
        inj = opened
        name = skill.get("name")
        name = name if name.__class__ is str else None
        for key, item in skill.items():
            if key.__class__ is not str:
                key = key_text(key)
            sub = key_origin(origin, key)
            kind = SKILL_KINDS.get(key)
            if kind is not None:
                self._field(sub, kind, item, inj, name, depth)
            elif key == INJECTED and (item is True or item is False):
                continue
            else:
                self._other(key, item, sub, "other", inj, name, depth)

    def items(self, value: Any, origin: str, inj: bool, walk: Any, kind: str,
              leave: Collection[int] = ()) -> None:
        """A list of context items (messages, tools, skills); anything else is read as data.
        The items at the indices in `leave` are not read (steps.py: they arrived after the decision)."""
        if value.__class__ is list:
            self.enter(origin, 1)
            for i, item in enumerate(value):
                if leave and i in leave:
                    continue
                walk(item, f"{origin}[{i}]", inj, 2)
        else:
            self.value(value, origin, kind, inj, None, 0)

    def context(self, context: Mapping[Any, Any], leave: Collection[int] = ()) -> None:
        inj = context.get(INJECTED) is True
        # The known sections first, in this order (the first surface a rule finds is the one its
        # message names), then anything else in document order.
        if "system_prompt" in context:
            self.value(context["system_prompt"], "context.system_prompt", "system_prompt", inj, None, 0)
        if "messages" in context:
            self.items(context["messages"], "context.messages", inj, self.message, "message", leave)
        if "tools" in context:
            self.items(context["tools"], "context.tools", inj, self.tool, "other")
        if "skills" in context:
            self.items(context["skills"], "context.skills", inj, self.skill, "other")
        for key, item in context.items():
            if key in ("system_prompt", "messages", "tools", "skills"):
                continue
            if key == INJECTED and (item is True or item is False):
                continue
            key = key_text(key)
            self._other(key, item, key_origin("context", key), "other", inj, None, 0)


_as_surface = functools.partial(tuple.__new__, Surface)


def context_records(context: Mapping[Any, Any], leave_out: Collection[int] = ()) -> list[Record]:
    """Every surface of a context as a plain tuple of a Surface's fields, in document order (system
    prompt, messages, tools, skills, then any other key). The messages at the indices in
    `leave_out` (of `context.messages`) are not read: steps.received_records decides which, for
    an episode. Raises WalkLimit past a bound."""
    w = _Walker()
    w.context(context, leave_out)
    return w.finish()


def walk_context(context: Mapping[Any, Any], leave_out: Collection[int] = ()) -> list[Surface]:
    """Every surface of a context, in document order (`leave_out`: as in context_records).
    Raises WalkLimit past a bound."""
    return list(map(_as_surface, context_records(context, leave_out)))


def walk_tool(tool: Any, index: int) -> list[Surface]:
    """The surfaces of one tool, with origins as if it were `context.tools[index]`."""
    w = _Walker()
    w.tool(tool, f"context.tools[{index}]", False, 2)
    return list(map(_as_surface, w.finish()))


def walk_value(value: Any, origin: str, kind: str, injected: bool = False) -> list[Surface]:
    """The surfaces of any value (a message, a transcript, a content part), read as the context's are."""
    w = _Walker()
    w.value(value, origin, kind, injected, None, 0)
    return list(map(_as_surface, w.finish()))
