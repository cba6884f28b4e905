"""The AST as JSON and back, for the parsed-ruleset cache (lang/syntax/_ast_cache.py).

Generic over `lang/ast.py`: every attrs class defined there is a node; a node is a JSON object with
its class name under `"@"`, its span as `[start, end]` under `"span"` and its other fields by name;
tuples are lists. Spans point into the one source the tree was parsed from, which is not stored:
the reader supplies it (its text is what the cache is keyed by).

Decoding trusts nothing: the class name must be one of the AST's, the keys exactly its fields, every
field value of its declared type (from the annotations of ast.py: a node class, a scalar, a union
of those, a tuple of them) and every span inside the text. Anything else raises `ValueError`, which
the cache treats as a miss; JSON parsing builds only dicts, lists and scalars, never code.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Callable

import attrs

from litmus_rules.lang import ast
from litmus_rules.source import Source, Span

_TAG = "@"

# Every node class of the AST, by name.
CLASSES: dict[str, type] = {
    name: cls for name, cls in vars(ast).items()
    if isinstance(cls, type) and attrs.has(cls) and cls.__module__ == ast.__name__
}

Check = Callable[[Any], Any]  # returns the value as the AST holds it (lists -> tuples), or raises


class Unencodable(ValueError):
    """A tree this codec cannot store faithfully (a span into another source, a foreign value)."""


# ---- encoding --------------------------------------------------------------------------------------


def dumps(tree: ast.RuleSet) -> str:
    """The tree as compact JSON; raises Unencodable when it would not come back equal."""
    source = tree.span.source
    return json.dumps(_encode(tree, source), separators=(",", ":"))


def _encode(value: Any, source: Source) -> Any:
    cls = type(value)
    if cls in (str, int, float, bool) or value is None:
        return value
    if cls is tuple:
        return [_encode(v, source) for v in value]
    if CLASSES.get(cls.__name__) is not cls:
        raise Unencodable(f"cannot store a {cls.__name__} in the AST cache")
    out: dict[str, Any] = {_TAG: cls.__name__}
    for f in attrs.fields(cls):
        v = getattr(value, f.name)
        if f.name == "span":
            if not isinstance(v, Span) or v.source is not source:
                raise Unencodable("a span outside the tree's source")
            out["span"] = [v.start, v.end]
        else:
            out[f.name] = _encode(v, source)
    return out


# ---- decoding --------------------------------------------------------------------------------------


def loads(text: str | bytes, source: Source) -> ast.RuleSet:
    """The tree stored by `dumps`, its spans into `source`; raises ValueError for anything else."""
    size = len(source.text)

    def node(obj: dict[str, Any]) -> Any:
        name = obj.get(_TAG)
        spec = _SPECS.get(name) if isinstance(name, str) else None
        if spec is None or len(obj) != len(spec) + 2:
            raise ValueError("not an AST node")
        span = obj.get("span")
        if not (type(span) is list and len(span) == 2 and type(span[0]) is int and type(span[1]) is int
                and 0 <= span[0] <= span[1] <= size):
            raise ValueError("a bad span")
        kwargs = {"span": Span(source, span[0], span[1])}
        for field, check in spec:
            if field not in obj:
                raise ValueError(f"{name} without {field}")
            kwargs[field] = check(obj[field])
        return CLASSES[name](**kwargs)

    try:
        tree = json.loads(text, object_hook=node)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if type(tree) is not ast.RuleSet:
        raise ValueError("not a ruleset")
    return tree


def _checker(annotation: str) -> Check:
    """The check of one field's declared type, read from its annotation as ast.py writes it: a
    class (exact: `bool` is no `int` here), a union of classes (`A | B`, or an alias such as
    `Expr`), or a tuple (`tuple[X, ...]` or `tuple[A, B]`) of checked types. Read as text, not with
    `typing.get_type_hints`, which costs more than decoding a ruleset."""
    annotation = annotation.strip()
    if annotation.startswith("tuple[") and annotation.endswith("]"):
        args = _split(annotation[len("tuple["):-1], ",")
        if len(args) == 2 and args[1] == "...":
            item = _checker(args[0])
            return lambda v: tuple([item(x) for x in v]) if type(v) is list else _bad(v)
        items = [_checker(a) for a in args]
        return lambda v: (tuple([c(x) for c, x in zip(items, v)])
                          if type(v) is list and len(v) == len(items) else _bad(v))
    allowed = frozenset(cls for arm in _split(annotation, "|") for cls in _classes(arm))
    return lambda v: v if type(v) in allowed else _bad(v)


_SCALARS = {"str": str, "int": int, "float": float, "bool": bool, "None": type(None)}


def _classes(name: str) -> tuple[type, ...]:
    if name in _SCALARS:
        return (_SCALARS[name],)
    found = vars(ast).get(name)
    if isinstance(found, type) and CLASSES.get(name) is found:
        return (found,)
    arms = typing.get_args(found)  # an alias of node classes: `Expr`, `Decl`
    if arms and all(CLASSES.get(getattr(a, "__name__", "")) is a for a in arms):
        return tuple(arms)
    raise TypeError(f"unsupported field type {name!r} in lang/ast.py")


def _split(text: str, sep: str) -> list[str]:
    """`text` split at `sep` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _bad(value: Any) -> Any:
    raise ValueError(f"a field of the wrong type ({type(value).__name__})")


def _specs() -> dict[str, tuple[tuple[str, Check], ...]]:
    out = {}
    for name, cls in CLASSES.items():
        fields = attrs.fields(cls)
        if "span" not in attrs.fields_dict(cls):
            raise TypeError(f"ast.{name} has no span")
        out[name] = tuple((f.name, _checker(f.type if isinstance(f.type, str) else f.type.__name__))
                          for f in fields if f.name != "span")
    return out


_SPECS = _specs()

__all__ = ["CLASSES", "Unencodable", "dumps", "loads"]
