"""L410: a fact the episode schema allows to be null, used where null fails, without a null guard.

`detector.rubric in context.system_prompt` checks clean, yet on an episode with `rubric: null` the
`in` fails and the rule rejects (an evaluation error). Where null can go is the checker's business
(its types come from the episode's JSON Schema: `"type": ["string", "null"]` is a type with the
`null` kind), so this pass reads the checked types and names no fact by hand.

The uses where null fails: the right side of `in` / `not in`, the left side when the right may be
a string (substring test), either side of `<`, `<=`, `>`, `>=`, and an argument of a built-in whose
parameter type has no `null`. `==` and `!=` are fine with null. A guard is a condition that the
value is not null, ahead of the use in an `and` (`x != null and ...`, `x == "a" and ...`), or its
negation ahead of it in an `or` (`x == null or ...`); `default(x, null) != null` guards `x` too.
A comprehension's `if` guards its element the same way.
"""

from __future__ import annotations

from typing import Iterator

from litmus_rules.diagnostics import code_for
from litmus_rules.engine import stages
from litmus_rules.errors import Diagnostic
from litmus_rules.lang import ast
from litmus_rules.lang import types as t
from litmus_rules.lang.builtins import bind_arguments
from litmus_rules.lang.printer import format_expr

__all__ = ["unguarded_nulls"]

CODE = code_for("unguarded-null")
_ORDER = ("<", "<=", ">", ">=")


def unguarded_nulls(checked: stages.Checked) -> list[Diagnostic]:
    """Every use of a may-be-null path where null fails, with no guard ahead of it: rule
    conditions, classification cells and lets (a message that fails shows `unknown`, it rejects
    nothing)."""
    tree = checked.tree
    exprs = [r.condition for r in tree.rules]
    exprs += [c.condition for k in tree.classifiers for c in k.cells if c.condition is not None]
    exprs += [let.expr for let in tree.lets]
    finder = _Finder(checked)
    out: list[Diagnostic] = []
    seen: set[int] = set()
    for e in exprs:
        for node, use in finder.visit(e, frozenset()):
            if id(node) not in seen:
                seen.add(id(node))
                text = node.span.text
                help = f"guard it: `{text} != null and ...` ahead of the use, or decide what null means there"
                out.append(Diagnostic.of(CODE, node.span, help, expr=text, use=use))
    return out


def _key(e: ast.Expr) -> str | None:
    """A path's text, the identity a guard and a use share; None for anything but a path."""
    node = e
    while isinstance(node, ast.Field):
        node = node.obj
    return format_expr(e) if isinstance(node, ast.Name) else None


def _is_null(e: ast.Expr) -> bool:
    return isinstance(e, ast.Literal) and e.value is None


def _guarded_by(e: ast.Expr) -> set[str]:
    """The paths a guard names: `x`, and `x` inside `default(x, ...)`."""
    out = set()
    key = _key(e)
    if key is not None:
        out.add(key)
    if isinstance(e, ast.Call) and e.func == "default" and e.args:
        inner = _key(e.args[0])
        if inner is not None:
            out.add(inner)
    return out


def _when_true(e: ast.Expr) -> set[str]:
    """The paths that are not null when `e` is true."""
    if isinstance(e, ast.Compare) and e.op in ("!=", "=="):
        if e.op == "!=" and _is_null(e.right):
            return _guarded_by(e.left)
        if e.op == "!=" and _is_null(e.left):
            return _guarded_by(e.right)
        if e.op == "==" and isinstance(e.right, ast.Literal) and not _is_null(e.right):
            return _guarded_by(e.left)
        if e.op == "==" and isinstance(e.left, ast.Literal) and not _is_null(e.left):
            return _guarded_by(e.right)
        return set()
    if isinstance(e, ast.BoolOp) and e.op == "and":
        return set().union(*(_when_true(x) for x in e.operands))
    if isinstance(e, ast.Not):
        return _when_false(e.operand)
    return set()


def _when_false(e: ast.Expr) -> set[str]:
    """The paths that are not null when `e` is false."""
    if isinstance(e, ast.Compare) and e.op == "==":
        if _is_null(e.right):
            return _guarded_by(e.left)
        if _is_null(e.left):
            return _guarded_by(e.right)
    if isinstance(e, ast.BoolOp) and e.op == "or":
        return set().union(*(_when_false(x) for x in e.operands))
    if isinstance(e, ast.Not):
        return _when_true(e.operand)
    return set()


class _Finder:
    def __init__(self, checked: stages.Checked) -> None:
        self.checked = checked
        self.builtins = checked.environment.builtins

    def _nullable(self, e: ast.Expr, guarded: frozenset[str]) -> bool:
        key = _key(e)
        if key is None or key in guarded:
            return False
        typ = self.checked.type_of(e)
        return typ is not None and not typ.is_any and "null" in typ.kinds

    def visit(self, e: ast.Expr, guarded: frozenset[str]) -> Iterator[tuple[ast.Expr, str]]:
        # iterative over and/or chains would not help much: nesting is bounded by the checker (L216)
        if isinstance(e, ast.BoolOp):
            g = guarded
            for operand in e.operands:
                yield from self.visit(operand, g)
                g = g | (_when_true(operand) if e.op == "and" else _when_false(operand))
            return
        if isinstance(e, ast.Comprehension):
            yield from self.visit(e.collection, guarded)
            inner = guarded
            if e.condition is not None:
                yield from self.visit(e.condition, guarded)
                inner = guarded | _when_true(e.condition)
            yield from self.visit(e.element, inner)
            return
        if isinstance(e, ast.Compare):
            yield from self._compare(e, guarded)
        elif isinstance(e, ast.Call):
            yield from self._call(e, guarded)
        for child in ast.children(e):
            yield from self.visit(child, guarded)

    def _compare(self, e: ast.Compare, guarded: frozenset[str]) -> Iterator[tuple[ast.Expr, str]]:
        if e.op in _ORDER:
            for side in (e.left, e.right):
                if self._nullable(side, guarded):
                    yield side, f"`{e.op}`"
        elif e.op in ("in", "not in"):
            if self._nullable(e.right, guarded):
                yield e.right, f"`{e.op}`"
            right = self.checked.type_of(e.right) or t.ANY
            if not right.is_any and "string" in right.kinds and self._nullable(e.left, guarded):
                yield e.left, f"`{e.op}` on a string"

    def _call(self, e: ast.Call, guarded: frozenset[str]) -> Iterator[tuple[ast.Expr, str]]:
        fn = self.builtins.get(e.func)
        if fn is None:
            return
        nodes = bind_arguments(fn, list(e.args), dict(e.kwargs))
        if isinstance(nodes, str):
            return
        for param, node in zip(fn.params, nodes):
            if param.type.is_any or "null" in param.type.kinds:
                continue
            if isinstance(node, (ast.Name, ast.Field)) and self._nullable(node, guarded):
                yield node, f"`{fn.name}` (its `{param.name}` must be a {param.type.describe()})"
