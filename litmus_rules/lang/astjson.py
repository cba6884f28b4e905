"""The AST as JSON and back, for the parsed-ruleset cache (lang/syntax/_ast_cache.py).

Generic over `lang/ast.py`: every node class defined there (`ast.fields`) is one; a node is a JSON object with
its class name under `"@"`, its span as `[start, end]` under `"span"` and its other fields by name;
tuples are lists. Spans point into the one source the tree was parsed from, which is not stored:
the reader supplies it (its text is what the cache is keyed by).

Decoding trusts nothing: the class name must be one of the AST's, the keys exactly its fields, every
field value of its declared type (from the annotations of ast.py: a node class, a scalar, a union
of those, a tuple of them), every span inside the text, and every name, literal and operator what
the text says at its span (`_AGREES`). Anything else raises `ValueError`, which the cache treats
as a miss; JSON parsing builds only dicts, lists and scalars, never code.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Callable

from litmus_rules.lang import ast
from litmus_rules.source import Source, Span

_TAG = "@"

# Every node class of the AST, by name.
CLASSES: dict[str, type] = {
    name: cls for name, cls in vars(ast).items()
    if ast.is_node_class(cls) and cls.__module__ == ast.__name__
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
    for f in ast.fields(cls):
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
    src, size = source.text, len(source.text)

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
        agrees = _AGREES.get(name)
        if agrees is not None and not agrees(kwargs, src[span[0]:span[1]], span[0]):
            raise ValueError(f"a {name} that its text does not say")
        if name == "Rule" and not _mode_agrees(kwargs, src, span[1]):
            raise ValueError("a rule whose mode its text does not say")
        return CLASSES[name](*[kwargs[f] for f in _ORDER[name]])  # positional: __init__'s fast path

    try:
        tree = json.loads(text, object_hook=node)
    except RecursionError:
        raise ValueError("nested too deeply") from None
    if type(tree) is not ast.RuleSet:
        raise ValueError("not a ruleset")
    return tree


def _literal(token: str) -> Any:
    """A literal's value from its text, as the parser reads it (syntax/_to_ast.py)."""
    if token.startswith('"'):
        return json.loads(token)
    if token in _CONSTANTS:
        return _CONSTANTS[token]
    return float(token) if any(c in token for c in ".eE") else int(token)


def _literal_agrees(kw: dict[str, Any], token: str) -> bool:
    try:
        value = _literal(token)
    except ValueError:
        return False
    return type(value) is type(kw["value"]) and value == kw["value"]


_CONSTANTS = {"true": True, "false": False, "null": None}

def _between(token: str, start: int, left: Any, right: Any) -> str:
    """The text between two child nodes, inside their parent's `token` (which starts at `start`)."""
    return token[left.span.end - start:right.span.start - start]


def _words(text: str) -> list[str]:
    return text.replace("(", " ").replace(")", " ").split()


def _ops_agree(kw: dict[str, Any], token: str, start: int) -> bool:
    operands = kw["operands"]
    return kw["op"] in ("and", "or") and len(operands) >= 2 and all(
        kw["op"] in _words(_between(token, start, a, b)) for a, b in zip(operands, operands[1:]))


def _compare_agrees(kw: dict[str, Any], token: str, start: int) -> bool:
    op, between = kw["op"], _between(token, start, kw["left"], kw["right"])
    if op in ("in", "not in"):
        return _words(between)[-2:] == op.split()[-2:] if op == "not in" else "in" in _words(between)
    return op in ("==", "!=", "<", "<=", ">", ">=") and op in between


def _mode_agrees(kw: dict[str, Any], text: str, end: int) -> bool:
    """`reject when` / `reject unless`: the last `reject` before the condition (docs, cites, tags
    and comments come before it) is followed by the rule's mode."""
    before = text[end:kw["condition"].span.start]
    found = before.rfind("reject")
    return found >= 0 and before[found + 6:].split()[:1] == [kw["mode"]]


# What the text at a node's span must say: its names, literals, keywords and operators. A stored
# tree that says otherwise is refused (a miss), whatever its digest. Each takes the node's fields,
# the text of its span and where that starts.
_AGREES: dict[str, Callable[[dict[str, Any], str, int], bool]] = {
    "Name": lambda kw, token, _: token == kw["name"],
    "Field": lambda kw, token, _: token.endswith(kw["name"]) and kw["name"].isidentifier(),
    "Call": lambda kw, token, _: token.startswith(kw["func"]) and kw["func"].isidentifier(),
    "Literal": lambda kw, token, _: _literal_agrees(kw, token),
    "Not": lambda kw, token, _: token.startswith("not"),
    "Neg": lambda kw, token, _: token.startswith("-"),
    "BoolOp": _ops_agree,
    "Compare": _compare_agrees,
    "Arith": lambda kw, token, start: kw["op"] in ("+", "-")
    and kw["op"] in _between(token, start, kw["left"], kw["right"]),
    "Quantifier": lambda kw, token, _: kw["kind"] in ("any", "all", "count") and token.startswith(kw["kind"]),
    "Binding": lambda kw, token, _: token.startswith(kw["name"]),
    "Param": lambda kw, token, _: token == kw["name"],
    "Let": lambda kw, token, _: token == kw["name"],
    "Rule": lambda kw, token, _: token == kw["name"],
    "Classify": lambda kw, token, _: token == kw["name"],
}


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
        fields = ast.fields(cls)
        if "span" not in {f.name for f in fields}:
            raise TypeError(f"ast.{name} has no span")
        out[name] = tuple((f.name, _checker(f.type if isinstance(f.type, str) else f.type.__name__))
                          for f in fields if f.name != "span")
    return out


_SPECS = _specs()
_ORDER = {name: tuple(f.name for f in ast.fields(cls)) for name, cls in CLASSES.items()}  # every field, in order

__all__ = ["CLASSES", "Unencodable", "dumps", "loads"]
