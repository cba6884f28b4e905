"""The rule language's abstract syntax: frozen nodes, each with a span into its source.

Spans are excluded from equality so that a pretty-printed and re-parsed ruleset compares equal to the
original. The AST imports nothing but `source`; lark stays inside `syntax/`.

Every node is `@_node`: a slotted, immutable class whose `__init__`, equality, hash and repr come
from its annotated fields, as attrs' frozen classes' did (`Name(name='x')`, spans left out of the
repr and of equality). Not attrs: building ~20 attrs classes, and importing attrs, was most of this
module's import time, paid on every start. `fields(cls)` and `replace(node, **changes)` stand in
for `attrs.fields` and `attrs.evolve`.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, Iterator, Union

from litmus_rules.source import Span

_NO_DEFAULT: Any = object()


class NodeField:
    """One field of a node class: what `attrs.fields` told of it (type: the annotation's text)."""

    __slots__ = ("name", "type", "eq", "repr", "default")

    def __init__(self, name: str, type: str, eq: bool = True, repr: bool = True, default: Any = _NO_DEFAULT) -> None:
        self.name, self.type, self.eq, self.repr, self.default = name, type, eq, repr, default

    def __repr__(self) -> str:
        return f"NodeField(name={self.name!r}, type={self.type!r})"


class _Spec:
    """A field's options, as the class body's default: `span: Span = _span`."""

    def __init__(self, eq: bool, repr: bool, default: Any = _NO_DEFAULT) -> None:
        self.eq, self.repr, self.default = eq, repr, default


def _field(*, eq: bool = True, repr: bool = True, default: Any = _NO_DEFAULT) -> Any:
    return _Spec(eq, repr, default)


_span = _field(eq=False, repr=False)


class FrozenNodeError(AttributeError):
    """A node's field was assigned: nodes are values, shared by every tree built from one parse."""


class _Node:
    __slots__ = ()
    __fields__: tuple[NodeField, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenNodeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise FrozenNodeError(f"{type(self).__name__} is immutable")

    def __repr__(self) -> str:
        shown = ", ".join(f"{a.name}={getattr(self, a.name)!r}" for a in self.__fields__ if a.repr)
        return f"{type(self).__qualname__}({shown})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, f.name) for f in self.__fields__)


def _node(cls: type) -> Any:
    """The node class of `cls`'s annotated fields (in order; those with a default last)."""
    body = dict(cls.__dict__)
    fields = []
    for name, annotation in body.pop("__annotations__", {}).items():
        spec = body.pop(name, _NO_DEFAULT)
        if isinstance(spec, _Spec):
            fields.append(NodeField(name, annotation, spec.eq, spec.repr, spec.default))
        else:
            fields.append(NodeField(name, annotation, default=spec))
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    names = tuple(f.name for f in fields)
    body["__slots__"] = names
    body["__fields__"] = tuple(fields)
    body["__match_args__"] = names
    body["__init__"] = _init(names, {f.name: f.default for f in fields if f.default is not _NO_DEFAULT})
    key = attrgetter(*[f.name for f in fields if f.eq])

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return key(self) == key(other)

    def __hash__(self: Any) -> int:
        return hash((names, key(self)))

    body["__eq__"], body["__hash__"] = __eq__, __hash__
    return type(cls.__name__, cls.__bases__, body)


def _init(names: tuple[str, ...], defaults: dict[str, Any]) -> Callable[..., None]:
    setter = object.__setattr__
    count = len(names)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs or len(args) != count:
            args = _bind(type(self).__name__, names, defaults, args, kwargs)
        for name, value in zip(names, args):
            setter(self, name, value)

    return __init__


def _bind(cls: str, names: tuple[str, ...], defaults: dict[str, Any], args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> tuple[Any, ...]:
    if len(args) > len(names):
        raise TypeError(f"{cls}() takes {len(names)} arguments, {len(args)} given")
    values = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{cls}() got an unexpected keyword argument {name!r}")
        if name in values:
            raise TypeError(f"{cls}() got multiple values for argument {name!r}")
        values[name] = value
    missing = [n for n in names if n not in values and n not in defaults]
    if missing:
        raise TypeError(f"{cls}() missing required argument(s): {', '.join(missing)}")
    return tuple(values[n] if n in values else defaults[n] for n in names)


def fields(cls: type) -> tuple[NodeField, ...]:
    """A node class's fields, in order (`attrs.fields` of the attrs classes this AST used)."""
    if not is_node_class(cls):
        raise TypeError(f"{cls!r} is not an AST node class")
    return cls.__fields__  # type: ignore[attr-defined, no-any-return]


def is_node_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, _Node) and cls is not _Node


def replace(node: Any, **changes: Any) -> Any:
    """A copy of `node` with some fields changed (`attrs.evolve`)."""
    cls = type(node)
    return cls(**{f.name: changes.pop(f.name) if f.name in changes else getattr(node, f.name)
                  for f in fields(cls)}, **changes)


# ---- expressions -----------------------------------------------------------------------------------


@_node
class Literal(_Node):
    value: str | int | float | bool | None
    span: Span = _span


@_node
class ListExpr(_Node):
    items: tuple[Expr, ...]
    span: Span = _span


@_node
class Name(_Node):
    """A bare name: a quantifier variable, a let, a param or a fact root, resolved by the checker."""

    name: str
    span: Span = _span


@_node
class Field(_Node):
    obj: Expr
    name: str
    span: Span = _span


@_node
class Index(_Node):
    obj: Expr
    index: Expr
    span: Span = _span


@_node
class Call(_Node):
    func: str
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...]
    span: Span = _span


@_node
class Not(_Node):
    operand: Expr
    span: Span = _span


@_node
class BoolOp(_Node):
    op: str  # "and" | "or"
    operands: tuple[Expr, ...]
    span: Span = _span


@_node
class Compare(_Node):
    op: str  # == != < <= > >= in "not in"
    left: Expr
    right: Expr
    span: Span = _span


@_node
class Arith(_Node):
    op: str  # + -
    left: Expr
    right: Expr
    span: Span = _span


@_node
class Neg(_Node):
    operand: Expr
    span: Span = _span


@_node
class Binding(_Node):
    """`name in collection`: a loop variable; or, with `local`, `where name = collection`: one value,
    computed once per element after the loop variables (`collection` holds that value's expression).

    A `where` name is kept among the quantifier's bindings because it is part of the witness, like a
    loop variable: messages, traces and evidence, which list a quantifier's bindings, see it too.
    """

    name: str
    collection: Expr
    span: Span = _span
    local: bool = False

    @property
    def value(self) -> Expr:
        return self.collection


@_node
class Quantifier(_Node):
    kind: str  # "any" | "all" | "count"
    bindings: tuple[Binding, ...]  # the loop variables, then the `where` names (`local`), in order
    body: Expr
    span: Span = _span

    @property
    def loops(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if not b.local)

    @property
    def locals(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if b.local)


@_node
class Comprehension(_Node):
    element: Expr
    name: str
    collection: Expr
    condition: Expr | None
    span: Span = _span


Expr = Union[
    Literal, ListExpr, Name, Field, Index, Call, Not, BoolOp, Compare, Arith, Neg, Quantifier, Comprehension
]


# ---- messages --------------------------------------------------------------------------------------


@_node
class Placeholder(_Node):
    """`{s.value!r}` inside a message: a path expression and whether to render it as a repr."""

    expr: Expr
    repr: bool
    span: Span = _span


@_node
class Message(_Node):
    parts: tuple[str | Placeholder, ...]
    span: Span = _span


# ---- declarations ----------------------------------------------------------------------------------


@_node
class Param(_Node):
    name: str
    type_name: str | None
    default: Expr
    span: Span = _span


@_node
class Let(_Node):
    name: str
    expr: Expr
    span: Span = _span


@_node
class Rule(_Node):
    name: str
    doc: str | None
    cite: str | None
    tags: tuple[str, ...]
    mode: str  # "when" | "unless"
    condition: Expr
    message: Message | None
    span: Span = _span


@_node
class Cell(_Node):
    label: str
    condition: Expr | None  # None for the closing `otherwise` cell
    span: Span = _span


@_node
class Classify(_Node):
    name: str
    doc: str | None
    cells: tuple[Cell, ...]  # the last one is `otherwise`
    span: Span = _span


Decl = Union[Param, Let, Rule, Classify]


@_node
class Comment(_Node):
    text: str
    span: Span = _span


@_node
class RuleSet(_Node):
    name: str
    version: str
    items: tuple[Decl, ...]  # in source order
    span: Span = _span
    comments: tuple[Comment, ...] = _field(default=(), eq=False, repr=False)

    @property
    def params(self) -> tuple[Param, ...]:
        return tuple(i for i in self.items if isinstance(i, Param))

    @property
    def lets(self) -> tuple[Let, ...]:
        return tuple(i for i in self.items if isinstance(i, Let))

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(i for i in self.items if isinstance(i, Rule))

    @property
    def classifiers(self) -> tuple[Classify, ...]:
        return tuple(i for i in self.items if isinstance(i, Classify))


def children(expr: Expr) -> tuple[Expr, ...]:
    """Direct sub-expressions, in source order (for walkers: checker, tracer, printer)."""
    sub = _CHILDREN.get(type(expr))  # by exact class: a lookup, not a chain of isinstance (every load walks each rule)
    return sub(expr) if sub is not None else ()


_CHILDREN: dict[type, Callable[[Any], tuple[Expr, ...]]] = {
    ListExpr: lambda e: e.items,
    Field: lambda e: (e.obj,),
    Index: lambda e: (e.obj, e.index),
    Call: lambda e: e.args + tuple(v for _, v in e.kwargs),
    Not: lambda e: (e.operand,),
    Neg: lambda e: (e.operand,),
    BoolOp: lambda e: e.operands,
    Compare: lambda e: (e.left, e.right),
    Arith: lambda e: (e.left, e.right),
    Quantifier: lambda e: (*(b.collection for b in e.bindings), e.body),
    Comprehension: lambda e: (e.collection, e.element) if e.condition is None else (e.collection, e.element, e.condition),
}  # Literal and Name have none


def walk(expr: Expr) -> Iterator[Expr]:
    """The expression and every sub-expression (iteratively: rule text is untrusted)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def names(expr: Expr) -> set[str]:
    """Every bare name an expression mentions (a superset of its free variables)."""
    return {node.name for node in walk(expr) if isinstance(node, Name)}
