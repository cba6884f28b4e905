"""The episode format's own vocabulary, shared by the layers that read episodes (`io`: schemas,
wire shapes, importers) and those that give them meaning (`domain`): the version tags, what makes a
`tool_call` argument a predicate, and JSON Pointers into a document. Below both, so that neither
has to repeat it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

VERSION_1 = "episode/1"
VERSION_1_1 = "episode/1.1"

# The keys that make a one-key object a predicate in a tool_call signal's `arguments` (the 1.1
# schema's `$defs/argument` lists the same; tests/test_format11_schema.py holds them equal).
PREDICATES = ("equals", "contains", "regex", "any_of", "unordered")


def as_predicate(value: Any) -> tuple[str, Any] | None:
    """(name, operand) when a tool_call signal's argument value is a predicate, else None (the
    value is compared for equality). A predicate is an object with exactly one key, that key one
    of `PREDICATES`; `{equals: {contains: x}}` is how a literal object of that shape is written.
    Only the first level of `arguments` holds predicates: inside a literal object, all is literal.
    Whether a document's arguments hold predicates at all is its version's business (1.1 only)."""
    if isinstance(value, Mapping) and len(value) == 1:
        name = next(iter(value))
        if name in PREDICATES:
            return name, value[name]
    return None


def json_pointer(path: Iterable[Any]) -> str:
    """JSON Pointer (RFC 6901) of a path of keys and indices."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)
