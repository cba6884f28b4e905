"""Surfaces: every piece of text the agent receives, with where it came from.

`extract_surfaces(context)` walks the episode's `context` (system prompt, messages, tools, skills)
and, recursively, each tool's JSON Schema. Input is untrusted: wrong types are skipped, never
trusted, and the walk is bounded (nesting depth, number of surfaces, nodes visited) so that a
hostile manifest cannot make it run away; past a bound it raises `EvaluationError`, which the
rules treat as "cannot be established" (fail closed).

Origins are dotted paths from the episode root: `context.tools[2].input_schema.properties.path.default`.
A key that is not identifier-like is written JSON-quoted in brackets: `properties["file name"]`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypeGuard
from urllib.parse import unquote

import attrs

from litmus_rules.errors import EvaluationError

MAX_DEPTH = 64
MAX_SURFACES = 100_000
MAX_NODES = 1_000_000  # schema nodes visited; $ref expansion can multiply work without text

SCHEMA_KINDS = {
    "description": "schema_description",
    "title": "schema_title",
    "default": "schema_default",
    "const": "schema_const",
}


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


def render_value(value: Any) -> str:
    """Strings as they are; anything else as compact JSON (what a model would read)."""
    if isinstance(value, str):
        return value
    if value.__class__ is int:  # what json.dumps writes, 20x faster
        return int.__repr__(value)
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, TypeError, RecursionError):
        # Circular containers (possible from YAML anchors) or odd keys: still give some text.
        return repr(value)


_IDENT = re.compile(r"[A-Za-z_$][\w$-]*\Z")
# The keys a schema node's text and nested schemas are read from (the walk skips the rest).
_TEXT_KEYS = frozenset(SCHEMA_KINDS) | {"enum", "examples", "example"}
_NESTED_KEYS = frozenset({
    "properties", "patternProperties", "additionalProperties", "unevaluatedProperties",
    "propertyNames", "contains", "not", "if", "then", "else", "items", "prefixItems", "anyOf",
    "oneOf", "allOf", "$ref", "$defs", "definitions",
})


def _is_mapping(value: Any) -> TypeGuard[Mapping[Any, Any]]:
    return value.__class__ is dict or (value is not None and isinstance(value, Mapping))


@functools.lru_cache(maxsize=4096)
def _ident(key: str) -> bool:
    return _IDENT.match(key) is not None


def _key(origin: str, key: str) -> str:
    if _ident(key):
        return f"{origin}.{key}"
    return f"{origin}[{json.dumps(key, ensure_ascii=False)}]"


@functools.lru_cache(maxsize=1024)
def _pointer_tokens(ref: str) -> tuple[str, ...] | None:
    """JSON pointer tokens of a local reference ("#/$defs/X"), else None (remote refs ignored)."""
    if not ref.startswith("#"):
        return None
    fragment = ref[1:]
    if fragment == "":
        return ()
    if not fragment.startswith("/"):
        return None  # "#anchor" ($anchor) refs are not supported
    return tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/"))


class _Walker:
    def __init__(self) -> None:
        self.out: list[Surface] = []
        self.nodes = 0

    def emit(self, origin: str, kind: str, text: str, injected: bool, tool: str | None,
             argument: str | None = None) -> None:
        if len(self.out) >= MAX_SURFACES:
            raise EvaluationError(
                f"more than {MAX_SURFACES} surfaces in the context (at {origin}); "
                "refusing to evaluate an unbounded manifest"
            )
        self.out.append(Surface(origin, kind, text, injected, tool, argument))

    # -- messages -----------------------------------------------------------------------------

    def content(self, value: Any, origin: str, kind: str, injected: bool, tool: str | None,
                depth: int) -> None:
        if depth > MAX_DEPTH:
            raise EvaluationError(f"message content nested deeper than {MAX_DEPTH} levels at {origin}")
        if value is None:
            return
        if isinstance(value, str):
            self.emit(origin, kind, value, injected, tool)
        elif isinstance(value, list):
            for j, part in enumerate(value):
                self.part(part, f"{origin}[{j}]", kind, injected, tool, depth + 1)
        elif isinstance(value, Mapping) and ("text" in value or "content" in value):
            self.part(value, origin, kind, injected, tool, depth + 1)
        else:
            self.emit(origin, kind, render_value(value), injected, tool)

    def part(self, part: Any, origin: str, kind: str, injected: bool, tool: str | None,
             depth: int) -> None:
        if isinstance(part, str):
            self.emit(origin, kind, part, injected, tool)
        elif isinstance(part, Mapping):
            # {type: text, text}; Anthropic tool_result parts (sent in a user message) nest
            # their own content, which is a tool result whatever the message's role.
            if isinstance(part.get("text"), str):
                self.emit(f"{origin}.text", kind, part["text"], injected, tool)
            if "content" in part:
                if part.get("type") == "tool_result":
                    kind = "tool_result"
                self.content(part["content"], f"{origin}.content", kind, injected, tool, depth + 1)
        # other parts (images, ...) carry no text the detector could match

    # -- JSON schema -----------------------------------------------------------------------------

    def schema(self, node: Any, origin: str, ctx: _SchemaCtx, depth: int, arg: str | None,
               on_args: bool) -> None:
        """Walk one schema node. `arg` is the argument path so far; `on_args` is whether the
        node is reached from the input_schema root through `properties` (or combinators)
        only, i.e. whether property names below it are argument names."""
        if depth > MAX_DEPTH:
            raise EvaluationError(f"JSON schema nested deeper than {MAX_DEPTH} levels at {origin}")
        if node.__class__ is not dict and not isinstance(node, Mapping):
            return  # boolean schemas and junk carry no text
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise EvaluationError(f"JSON schema walk exceeded {MAX_NODES} nodes (at {origin})")
        inj, tool = ctx.injected, ctx.tool
        if not _TEXT_KEYS.isdisjoint(node):  # (most nodes have a few keys: test those only)
            for key, kind in SCHEMA_KINDS.items():
                if key in node and (key in ("default", "const") or isinstance(node[key], str)):
                    self.emit(f"{origin}.{key}", kind, render_value(node[key]), inj, tool, arg)
            enum = node.get("enum")
            if isinstance(enum, list):
                for i, v in enumerate(enum):
                    self.emit(f"{origin}.enum[{i}]", "schema_enum", render_value(v), inj, tool, arg)
            examples = node.get("examples")
            if isinstance(examples, list):
                for i, v in enumerate(examples):
                    self.emit(f"{origin}.examples[{i}]", "schema_example", render_value(v), inj, tool, arg)
            elif examples is not None:
                self.emit(f"{origin}.examples", "schema_example", render_value(examples), inj, tool, arg)
            if "example" in node:  # OpenAPI's singular form
                self.emit(f"{origin}.example", "schema_example", render_value(node["example"]), inj, tool, arg)
        if _NESTED_KEYS.isdisjoint(node):
            return

        props = node.get("properties")
        if _is_mapping(props):
            base = f"{origin}.properties"
            for name, sub in props.items():
                name = str(name)
                sub_origin = _key(base, name)
                sub_arg = (f"{arg}.{name}" if arg else name) if on_args else None
                self.emit(sub_origin, "schema_property_name", name, inj, tool, sub_arg)
                self.schema(sub, sub_origin, ctx, depth + 1, sub_arg, on_args)
        pattern_props = node.get("patternProperties")
        if _is_mapping(pattern_props):
            base = f"{origin}.patternProperties"
            for pattern, sub in pattern_props.items():
                self.schema(sub, _key(base, str(pattern)), ctx, depth + 1, arg, False)
        for key in ("additionalProperties", "unevaluatedProperties", "propertyNames", "contains",
                    "not", "if", "then", "else"):
            if _is_mapping(node.get(key)):
                # Below these, property names are not the tool's argument names.
                self.schema(node[key], f"{origin}.{key}", ctx, depth + 1, arg, False)
        items = node.get("items")
        if _is_mapping(items):
            self.schema(items, f"{origin}.items", ctx, depth + 1, arg, on_args)
        elif isinstance(items, list):
            for i, sub in enumerate(items):
                self.schema(sub, f"{origin}.items[{i}]", ctx, depth + 1, arg, on_args)
        for key in ("prefixItems", "anyOf", "oneOf", "allOf"):
            subs = node.get(key)
            if isinstance(subs, list):
                for i, sub in enumerate(subs):
                    self.schema(sub, f"{origin}.{key}[{i}]", ctx, depth + 1, arg, on_args)
        ref = node.get("$ref")
        if isinstance(ref, str):
            self.ref(ref, ctx, depth + 1, arg, on_args)
        # Definitions last: those already reached through a $ref (with their argument name)
        # are not listed a second time without one.
        for key in ("$defs", "definitions"):
            defs = node.get(key)
            if _is_mapping(defs):
                for name, sub in defs.items():
                    sub_origin = _key(f"{origin}.{key}", str(name))
                    if sub_origin in ctx.reached:
                        continue
                    ctx.reached.add(sub_origin)
                    ctx.visited.add((sub_origin, None, False))
                    ctx.stack.add(sub_origin)
                    self.schema(sub, sub_origin, ctx, depth + 1, None, False)
                    ctx.stack.discard(sub_origin)

    def ref(self, ref: str, ctx: _SchemaCtx, depth: int, arg: str | None, on_args: bool) -> None:
        tokens = _pointer_tokens(ref)
        if tokens is None:
            return
        node: Any = ctx.root
        origin = ctx.root_origin
        for token in tokens:
            if isinstance(node, Mapping) and token in node:
                node = node[token]
                origin = _key(origin, token)
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
                origin = f"{origin}[{int(token)}]"
            else:
                return  # dangling ref: nothing to read
        # A target already being expanded on the current path is a cycle (a recursive "tree"
        # schema): its text is listed where it was first reached. Otherwise each target is
        # walked once per argument context, so a definition shared by several arguments is
        # listed under each of their names but never twice under the same one.
        key = (origin, arg, on_args)
        if origin in ctx.stack or key in ctx.visited:
            return
        ctx.visited.add(key)
        ctx.reached.add(origin)
        ctx.stack.add(origin)
        try:
            self.schema(node, origin, ctx, depth, arg, on_args)
        finally:
            ctx.stack.discard(origin)

    # -- tools, skills -------------------------------------------------------------------------------

    def tool(self, tool: Any, index: int) -> None:
        if not isinstance(tool, Mapping):
            return
        origin = f"context.tools[{index}]"
        name = tool.get("name") if isinstance(tool.get("name"), str) else None
        injected = tool.get("injected") is True
        if name is not None:
            self.emit(f"{origin}.name", "tool_name", name, injected, name)
        if isinstance(tool.get("description"), str):
            self.emit(f"{origin}.description", "tool_description", tool["description"], injected, name)
        for key in ("input_schema", "inputSchema", "parameters"):
            schema = tool.get(key)
            if isinstance(schema, Mapping):
                schema_origin = f"{origin}.{key}"
                ctx = _SchemaCtx(schema, schema_origin, injected, name)
                ctx.stack.add(schema_origin)
                self.schema(schema, schema_origin, ctx, 1, None, True)
                break

    def skill(self, skill: Any, index: int) -> None:
        if not isinstance(skill, Mapping):
            return
        origin = f"context.skills[{index}]"
        name = skill.get("name") if isinstance(skill.get("name"), str) else None
        injected = skill.get("injected") is True
        for key, kind in (("name", "skill_name"), ("description", "skill_description"), ("body", "skill_body")):
            value = skill.get(key)
            if value is not None:
                self.emit(f"{origin}.{key}", kind, render_value(value), injected, name)


@attrs.define
class _SchemaCtx:
    root: Mapping[str, Any]
    root_origin: str
    injected: bool
    tool: str | None
    visited: set[tuple[str, str | None, bool]] = attrs.Factory(set)
    reached: set[str] = attrs.Factory(set)  # targets listed at least once
    stack: set[str] = attrs.Factory(set)  # targets being expanded on the current path


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else ()


def extract_surfaces(context: Mapping[str, Any] | None) -> tuple[Surface, ...]:
    """All surfaces of an episode's `context`, in document order.

    Raises EvaluationError when the context exceeds the walk's bounds (MAX_DEPTH nesting,
    MAX_SURFACES surfaces, MAX_NODES schema nodes).
    """
    if not isinstance(context, Mapping):
        return ()
    w = _Walker()
    system_prompt = context.get("system_prompt")
    if system_prompt is not None:
        w.content(system_prompt, "context.system_prompt", "system_prompt", False, None, 0)
    for i, msg in enumerate(_list(context.get("messages"))):
        if not isinstance(msg, Mapping):
            continue
        is_tool = msg.get("role") == "tool"
        tool = msg.get("name") if is_tool and isinstance(msg.get("name"), str) else None
        w.content(msg.get("content"), f"context.messages[{i}].content",
                  "tool_result" if is_tool else "message", msg.get("injected") is True, tool, 0)
    for i, tool in enumerate(_list(context.get("tools"))):
        w.tool(tool, i)
    for i, skill in enumerate(_list(context.get("skills"))):
        w.skill(skill, i)
    return tuple(w.out)


def tool_surfaces(tool: Mapping[str, Any], index: int) -> tuple[Surface, ...]:
    """The surfaces of one tool, with origins as if it were `context.tools[index]`."""
    w = _Walker()
    w.tool(tool, index)
    return tuple(w.out)

