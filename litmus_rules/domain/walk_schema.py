"""The JSON Schema part of the surface walk (walk.py): how a tool's input and output schemas are
read. Property names reached from the input schema's root through `properties` (or combinators)
are the tool's argument names, and every value below one carries that argument (`fillable_call`
reads it); local `$ref`s are followed where they point, once per argument, cycles cut; `$defs`
not reached through a `$ref` are read last, without an argument. Any other keyword, and a value of
the wrong shape, is read as data, as the rest of the walk reads it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from litmus_rules.domain.walk_text import is_ident, key_origin, key_text
from litmus_rules.domain.walk_vocab import (
    ARGSUB,
    DEFS,
    EACH,
    FORMAT_KEYS,
    FORMAT_WORDS,
    INJECTED,
    PROPS,
    REF,
    SCHEMA_KEYS,
    SUB,
    SUBLIST,
    TEXT,
    TYPE,
    WHOLE,
    is_word,
)

if TYPE_CHECKING:
    from litmus_rules.domain.walk import Record


@functools.lru_cache(maxsize=1024)
def pointer_tokens(ref: str) -> tuple[str, ...] | None:
    """JSON pointer tokens of a local reference ("#/$defs/X"), else None (remote refs: not followed)."""
    if not ref.startswith("#"):
        return None
    fragment = ref[1:]
    if fragment == "":
        return ()
    if not fragment.startswith("/"):
        return None  # "#anchor" ($anchor) refs are not followed (the anchor's node is walked anyway)
    return tuple(unquote(t).replace("~1", "/").replace("~0", "~") for t in fragment[1:].split("/"))


class SchemaCtx:
    """One tool's schema: its root (for `$ref`), and which refs were expanded where."""

    __slots__ = ("root", "root_origin", "tool", "visited", "reached", "stack", "targets")

    def __init__(self, root: Mapping[str, Any], root_origin: str, tool: str | None) -> None:
        self.root = root
        self.root_origin = root_origin
        self.tool = tool
        self.visited: set[tuple[str, str | None, bool]] = set()
        self.reached: set[str] = set()  # targets listed at least once
        self.stack: set[str] = {root_origin}  # targets being expanded on the current path
        self.targets: dict[str, tuple[Any, str] | None] = {}  # ref -> (node, origin), None: unresolved


class SchemaWalk:
    """The schema methods of the walker (`walk._Walker` derives from this class), kept in a mixin
    so that the inner loops call the walker's own methods directly, at no extra cost."""

    __slots__ = ()

    if TYPE_CHECKING:  # provided by walk._Walker
        out: list[Record]
        nodes: int

        def enter(self, origin: str, depth: int) -> None: ...

        def emit(self, origin: str, kind: str, text: str, injected: bool, tool: str | None,
                 argument: str | None = None) -> None: ...

        def render(self, value: Any, origin: str) -> str: ...

        def value(self, value: Any, origin: str, kind: str, inj: bool, tool: str | None, depth: int,
                  arg: str | None = None) -> None: ...

    def schema(self, node: Any, origin: str, ctx: SchemaCtx, depth: int, arg: str | None,
               on_args: bool, inj: bool) -> None:
        """Walk one schema node (at `depth`). `arg` is the argument path so far; `on_args` is
        whether the node is reached from the input_schema root through `properties` (or
        combinators) only, i.e. whether property names below it are argument names."""
        if node.__class__ is not dict and not isinstance(node, Mapping):
            if node is not True and node is not False:  # boolean schemas carry no text
                self.value(node, origin, "other", inj, ctx.tool, depth - 1, arg)
            return
        # walk.enter, inline (a schema node is the walk's most frequent container): the limits
        # are read from walk's module at each node, as enter reads them
        if depth > limits.MAX_DEPTH or self.nodes >= limits.MAX_NODES or len(self.out) > limits.MAX_SURFACES:
            self.enter(origin, depth)  # at a limit: raises WalkLimit
        else:
            self.nodes += 1
        if node.get(INJECTED) is True:
            inj = True
        tool = ctx.tool
        deferred = None
        append = self.out.append
        # The keywords in the order of how often schemas use them: `type` (skipped when it is a
        # format word, before its origin is written), texts, properties, whole values, lists.
        for key, item in node.items():
            if key.__class__ is not str:
                key = key_text(key)
            how = SCHEMA_KEYS.get(key)
            if how is None:
                if key == INJECTED and (item is True or item is False):
                    continue
                sub = f"{origin}.{key}" if is_ident(key) else key_origin(origin, key)
                if key not in FORMAT_KEYS:
                    append((sub, "key", key, inj, tool, arg))
                # vendor `x-` keys and any keyword not followed as a schema: read as data
                if item.__class__ is str:
                    append((sub, "other", item, inj, tool, arg))
                else:
                    self.value(item, sub, "other", inj, tool, depth, arg)
                continue
            mode, kind = how
            if mode == TYPE and item.__class__ is str and item in FORMAT_WORDS:
                continue
            sub = f"{origin}.{key}"  # every keyword is identifier-like (asserted below)
            if mode == TEXT:
                if item.__class__ is str:
                    append((sub, kind, item, inj, tool, arg))
                else:
                    self.value(item, sub, kind, inj, tool, depth, arg)
            elif mode == PROPS:
                if item.__class__ is not dict and not isinstance(item, Mapping):
                    self.value(item, sub, "other", inj, tool, depth, arg)
                    continue
                self.enter(sub, depth + 1)
                args = on_args
                for name, child in item.items():
                    if name.__class__ is not str:
                        name = key_text(name)
                    child_origin = f"{sub}.{name}" if is_ident(name) else key_origin(sub, name)
                    child_arg = (f"{arg}.{name}" if arg else name) if args else None
                    append((child_origin, kind, name, inj, tool, child_arg))
                    self.schema(child, child_origin, ctx, depth + 2, child_arg, args, inj)
            elif mode == WHOLE:
                append((sub, kind, item if item.__class__ is str else self.render(item, sub), inj, tool, arg))
            elif mode == EACH:
                if item.__class__ is list:
                    self.enter(sub, depth + 1)
                    for i, v in enumerate(item):
                        append((f"{sub}[{i}]", kind, v if v.__class__ is str else self.render(v, sub), inj, tool, arg))
                elif kind == "schema_example" and item is not None:
                    self.emit(sub, kind, self.render(item, sub), inj, tool, arg)
                else:  # an `enum` that is not a list is no enum: read it as data
                    self.value(item, sub, "other", inj, tool, depth, arg)
            elif mode == TYPE:
                if item.__class__ is str:  # not a format word (above)
                    append((sub, kind, item, inj, tool, arg))
                elif item.__class__ is list:
                    self.enter(sub, depth + 1)
                    for i, v in enumerate(item):
                        if not is_word(v):
                            self.value(v, f"{sub}[{i}]", kind, inj, tool, depth + 1, arg)
                elif not is_word(item):
                    self.value(item, sub, kind, inj, tool, depth, arg)
            elif mode == REF:
                # A local pointer that resolves is read where it points: its tokens are keys of
                # this schema (read there) and the rest is pointer syntax. Any other is read here.
                if item.__class__ is not str or not self.ref(item, ctx, depth + 1, arg, on_args, inj):
                    self.value(item, sub, kind, inj, tool, depth, arg)
            elif mode == SUB:
                # Below these, property names are not the tool's argument names.
                self.schema(item, sub, ctx, depth + 1, arg, False, inj)
            elif mode == ARGSUB:
                if item.__class__ is list:
                    self.enter(sub, depth + 1)
                    for i, v in enumerate(item):
                        self.schema(v, f"{sub}[{i}]", ctx, depth + 2, arg, on_args, inj)
                else:
                    self.schema(item, sub, ctx, depth + 1, arg, on_args, inj)
            elif mode == SUBLIST:
                if item.__class__ is list:
                    self.enter(sub, depth + 1)
                    for i, v in enumerate(item):
                        self.schema(v, f"{sub}[{i}]", ctx, depth + 2, arg, on_args, inj)
                else:
                    self.schema(item, sub, ctx, depth + 1, arg, False, inj)
            elif item.__class__ is not dict and not isinstance(item, Mapping):  # PATTERNS, NAMED, DEFS need an object
                self.value(item, sub, "other", inj, tool, depth, arg)
            elif mode == DEFS:
                # Definitions last: those already reached through a $ref (with their argument
                # name) are not listed a second time without one.
                deferred = (deferred or []) + [(sub, item)]
            else:  # PATTERNS, NAMED: property names that are not the tool's argument names
                self.enter(sub, depth + 1)
                for name, child in item.items():
                    if name.__class__ is not str:
                        name = key_text(name)
                    child_origin = f"{sub}.{name}" if is_ident(name) else key_origin(sub, name)
                    append((child_origin, kind, name, inj, tool, None))
                    self.schema(child, child_origin, ctx, depth + 2, None, False, inj)
        for sub, defs in deferred or ():
            self.enter(sub, depth + 1)
            for name, child in defs.items():
                name = key_text(name)
                child_origin = key_origin(sub, name)
                self.emit(child_origin, "key", name, inj, tool)
                if child_origin in ctx.reached:
                    continue
                ctx.reached.add(child_origin)
                ctx.visited.add((child_origin, None, False))
                ctx.stack.add(child_origin)
                self.schema(child, child_origin, ctx, depth + 2, None, False, inj)
                ctx.stack.discard(child_origin)

    def ref(self, ref: str, ctx: SchemaCtx, depth: int, arg: str | None, on_args: bool, inj: bool) -> bool:
        """Follow a local `$ref`; False when it does not resolve (remote, anchor or dangling)."""
        target = ctx.targets.get(ref, _NOT_YET)
        if target is _NOT_YET:  # resolved once per schema: a shared definition is referred to often
            target = ctx.targets[ref] = _target(ctx, ref)
        if target is None:
            return False
        node, origin = target
        # A target already being expanded on the current path is a cycle (a recursive "tree"
        # schema): its text is listed where it was first reached. Otherwise each target is
        # walked once per argument context, so a definition shared by several arguments is
        # listed under each of their names but never twice under the same one.
        key = (origin, arg, on_args)
        if origin in ctx.stack or key in ctx.visited:
            return True
        ctx.visited.add(key)
        ctx.reached.add(origin)
        ctx.stack.add(origin)
        try:
            self.schema(node, origin, ctx, depth, arg, on_args, inj)
        finally:
            ctx.stack.discard(origin)
        return True


_NOT_YET: Any = object()  # a ref not resolved yet (None: resolved to nothing)


def _target(ctx: SchemaCtx, ref: str) -> tuple[Any, str] | None:
    """(node, origin) that a local `$ref` points at; None when it does not resolve."""
    tokens = pointer_tokens(ref)
    if tokens is None:
        return None
    node: Any = ctx.root
    origin = ctx.root_origin
    for token in tokens:
        if (node.__class__ is dict or isinstance(node, Mapping)) and token in node:
            node = node[token]
            origin = key_origin(origin, token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
            origin = f"{origin}[{int(token)}]"
        else:
            return None  # dangling
    return node, origin


assert all(is_ident(key) for key in SCHEMA_KEYS)  # `schema` writes their origins `.key` directly


# walk's module, for its limits: read at each schema node, as `walk._Walker.enter` reads them.
# Imported last: walk imports this module.
from litmus_rules.domain import walk as limits  # noqa: E402
