"""The rule language's abstract syntax: frozen nodes, each with a span into its source.

Spans are excluded from equality so that a pretty-printed and re-parsed ruleset compares equal to the
original. The AST imports nothing but `source` and `records`; lark stays inside `syntax/`.

Every node is `@_node`: a frozen `records.record` (a slotted class whose `__init__`, equality, hash
and repr come from its annotated fields, as attrs' frozen classes' did: `Name(name='x')`, spans left
out of the repr and of equality). Not attrs: building these ~20 classes with it was most of this
module's import time, paid on every start. `fields(cls)` and `replace(node, **changes)` stand in
for `attrs.fields` and `attrs.evolve`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Union

from litmus_rules.lang.records import Field as NodeField  # noqa: F401 - what `fields` returns
from litmus_rules.lang.records import field, record, replace  # noqa: F401 - `replace`: attrs.evolve of a node
from litmus_rules.lang.records import fields as _fields
from litmus_rules.source import Span

_span = field(eq=False, repr=False)


class _Node:
    __slots__ = ()


_node = record


def is_node_class(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, _Node) and cls is not _Node


def fields(cls: type) -> tuple[NodeField, ...]:
    """A node class's fields, in order (`attrs.fields` of the attrs classes this AST used)."""
    if not is_node_class(cls):
        raise TypeError(f"{cls!r} is not an AST node class")
    return _fields(cls)


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
    comments: tuple[Comment, ...] = field(default=(), eq=False, repr=False)

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
