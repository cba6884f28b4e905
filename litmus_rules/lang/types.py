"""Static types for the checker: what a fact path, a literal or a built-in's result can be.

A type is a set of JSON kinds (empty = anything) plus, for objects and lists, where to find their
fields and items: either a JSON Schema node (episode facts) or explicit field types (built-ins).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

KINDS = ("string", "number", "boolean", "null", "array", "object")


class T:
    """A plain slotted class, not an attrs one (every start builds the classes it imports): a value
    compared and hashed by its kinds, item and closedness (not by the schema it came from, nor its
    fields), and immutable."""

    __slots__ = ("kinds", "schema", "root", "item", "fields", "closed")

    kinds: frozenset[str]  # empty: unknown statically, anything goes
    schema: Mapping[str, Any] | None
    root: Mapping[str, Any] | None  # for $ref
    item: T | None
    fields: Mapping[str, T] | None
    closed: bool

    def __init__(self, kinds: frozenset[str] = frozenset(), schema: Mapping[str, Any] | None = None,
                 root: Mapping[str, Any] | None = None, item: T | None = None,
                 fields: Mapping[str, T] | None = None, closed: bool = False) -> None:
        set_ = object.__setattr__
        set_(self, "kinds", kinds)
        set_(self, "schema", schema)
        set_(self, "root", root)
        set_(self, "item", item)
        set_(self, "fields", fields)
        set_(self, "closed", closed)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError("T is immutable")

    __delattr__ = __setattr__

    def __repr__(self) -> str:
        return f"T(kinds={self.kinds!r}, item={self.item!r}, fields={self.fields!r}, closed={self.closed!r})"

    def __eq__(self, other: Any) -> bool:
        if other.__class__ is not T:
            return NotImplemented
        return self.kinds == other.kinds and self.item == other.item and self.closed == other.closed

    def __hash__(self) -> int:
        return hash((T, self.kinds, self.item, self.closed))

    def __reduce__(self) -> tuple[Any, ...]:
        return T, (self.kinds, self.schema, self.root, self.item, self.fields, self.closed)

    @property
    def is_any(self) -> bool:
        return not self.kinds

    def may_be(self, kind: str) -> bool:
        return self.is_any or kind in self.kinds

    def describe(self) -> str:
        if self.is_any:
            return "any"
        names = {"string": "string", "number": "number", "boolean": "bool", "null": "null"}
        out = []
        for k in KINDS:
            if k in self.kinds:
                if k == "array":
                    out.append(f"list of {self.item.describe()}" if self.item else "list")
                elif k == "object":
                    out.append("object")
                else:
                    out.append(names[k])
        return " or ".join(out)


ANY = T()
STR = T(frozenset({"string"}))
NUM = T(frozenset({"number"}))
BOOL = T(frozenset({"boolean"}))
NULL = T(frozenset({"null"}))


def list_of(item: T) -> T:
    return T(frozenset({"array"}), item=item)


def obj(fields: Mapping[str, T], closed: bool = True) -> T:
    return T(frozenset({"object"}), fields=dict(fields), closed=closed)


def union(a: T, b: T) -> T:
    if a.is_any or b.is_any:
        return ANY
    item = a.item or b.item
    fields = a.fields if a.fields is not None else b.fields
    schema = a.schema if a.schema is not None else b.schema
    root = a.root if a.root is not None else b.root
    return T(a.kinds | b.kinds, schema=schema, root=root, item=item, fields=fields, closed=a.closed and b.closed)


# ---- JSON Schema -> T ------------------------------------------------------------------------------

_MAX_REF_DEPTH = 32


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    for _ in range(_MAX_REF_DEPTH):
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _branches(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The schema and every sub-schema that can add properties to the same instance."""
    out = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, ()):
            if isinstance(sub, Mapping):
                out.extend(_branches(_resolve(sub, root), root))
    for key in ("then", "else"):
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            out.extend(_branches(_resolve(sub, root), root))
    return out


def from_schema(schema: Mapping[str, Any], root: Mapping[str, Any]) -> T:
    schema = _resolve(schema, root)
    kinds: set[str] = set()
    open_kind = False
    for branch in _branches(schema, root):
        declared = branch.get("type")
        if isinstance(declared, str):
            declared = [declared]
        if declared:
            kinds.update("number" if k == "integer" else k for k in declared)
        elif "const" in branch or "enum" in branch:
            values = [branch["const"]] if "const" in branch else list(branch["enum"])
            kinds.update(_kind_of(v) for v in values)
        elif "properties" in branch:
            kinds.add("object")
        elif branch is schema and not any(k in schema for k in ("allOf", "anyOf", "oneOf")):
            open_kind = True
    if open_kind or not kinds:
        return T(frozenset(), schema=schema, root=root)
    return T(frozenset(kinds), schema=schema, root=root)


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def field_names(t: T) -> list[str] | None:
    """Known field names of an object type; None when the object is open (any field may exist)."""
    if t.fields is not None:
        return sorted(t.fields) if t.closed else None
    if t.schema is None or t.root is None:
        return None
    names: set[str] = set()
    closed = True
    for branch in _branches(t.schema, t.root):
        names.update(branch.get("properties", {}))
        if branch.get("additionalProperties", True) is not False and (
            "properties" in branch or branch.get("type") == "object"
        ):
            closed = False
    return sorted(names) if closed else None


def field_type(t: T, name: str) -> T | None:
    """Type of `t.name`; None when the field cannot exist."""
    if t.fields is not None:
        if name in t.fields:
            return t.fields[name]
        return None if t.closed else ANY
    if t.schema is None or t.root is None:
        return ANY
    found: T | None = None
    for branch in _branches(t.schema, t.root):
        sub = branch.get("properties", {}).get(name)
        if isinstance(sub, Mapping):
            st = from_schema(sub, t.root)
            found = st if found is None else union(found, st)
    if found is not None:
        return found
    return None if field_names(t) is not None else ANY


def item_type(t: T) -> T:
    if t.item is not None:
        return t.item
    if t.schema is not None and t.root is not None:
        for branch in _branches(t.schema, t.root):
            items = branch.get("items")
            if isinstance(items, Mapping):
                return from_schema(items, t.root)
    return ANY
