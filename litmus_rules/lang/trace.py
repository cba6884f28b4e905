"""Explanation traces as data: which rule and clause decided, and every sub-expression's value.

A trace is built after the fact from the rule's AST and the values the recording evaluator stored,
so the fast path pays nothing for it. Renderers (text, JSON) live in `render.py`.
"""

from __future__ import annotations

from typing import Any, Mapping

import attrs

from litmus_rules.lang import ast
from litmus_rules.source import Span
from litmus_rules.lang.values import UNKNOWN, to_json


@attrs.frozen
class TraceNode:
    kind: str  # the AST node type, lower case: `quantifier`, `compare`, `call`, `field`, ...
    text: str  # the expression as written
    span: Span = attrs.field(repr=False, eq=False)
    evaluated: bool
    value: Any  # the runtime value (UNKNOWN for missing evidence); meaningless when not evaluated
    error: str | None = None
    reads: str | None = None  # the concrete fact path this node read, e.g. `detector.signals[0].value`
    missing: str | None = None  # the fact path found missing here
    binding: Mapping[str, str] | None = None  # quantifier witness: variable -> concrete path
    let: str | None = None  # this node names a let; its definition is a child at its first mention
    children: tuple[TraceNode, ...] = ()
    # The let's definition at every mention (shown once, but an unknown let is explained by it).
    let_definition: TraceNode | None = attrs.field(default=None, repr=False, eq=False)

    @property
    def location(self) -> str:
        return self.span.short_location()

    def _unknown_nodes(self) -> list[TraceNode]:
        """The nodes whose unknown value made this node unknown, outermost first: only unknown
        values are followed down (a fact that `default()` or a decided `and`/`or` absorbed is not
        blamed), through let definitions too."""
        out: list[TraceNode] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if not node.evaluated or node.value is not UNKNOWN:
                continue
            out.append(node)
            stack.extend(reversed(node.children))
            if node.let_definition is not None and node.let_definition not in node.children:
                stack.append(node.let_definition)
        return out

    def missing_paths(self) -> list[str]:
        """The absent facts that made this node unknown."""
        return list(dict.fromkeys(n.missing for n in self._unknown_nodes() if n.missing))

    def unknown_lets(self) -> list[str]:
        """The lets, outermost first, whose unknown value made this node unknown: what an
        insufficient-evidence message names when no fact is missing (a let that reads a fact
        present but unusable, such as a control run that carries an error)."""
        return list(dict.fromkeys(n.let for n in self._unknown_nodes() if n.let))

    def errors(self) -> list[str]:
        out: list[str] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if node.error and node.error not in out:
                out.append(node.error)
            stack.extend(reversed(node.children))
        return out

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "expr": self.text,
            "location": f"{self.span.source.name}:{self.span.line}:{self.span.column}",
            "evaluated": self.evaluated,
        }
        if self.evaluated:
            d["value"] = to_json(self.value)
        for key in ("error", "reads", "missing", "let"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        if self.binding:
            d["binding"] = dict(self.binding)
        if self.children:
            d["children"] = [c.to_json() for c in self.children]
        return d


class RuleTrace:
    """The trace of one decision: a reject rule, or a classification cell.

    The recorded values are captured when the decision is made; the TraceNode tree over them is
    built on first access, so a caller that only counts verdicts never pays for it.
    """

    __slots__ = ("rule", "clause", "outcome", "span", "_condition", "_rec", "_lets", "_root")

    def __init__(
        self,
        rule: str,  # rule name, or the cell's label
        clause: str,  # `reject when`, `reject unless`, `"executed" when`, `otherwise`
        outcome: str,  # `violated`, `insufficient evidence`, `error`, `passed`, `matched`, `not matched`, `undecided`
        span: Span,
        condition: ast.Expr | None = None,
        rec: Mapping[Any, Any] | None = None,
        lets: Mapping[str, ast.Let] | None = None,
    ) -> None:
        self.rule, self.clause, self.outcome, self.span = rule, clause, outcome, span
        self._condition, self._rec, self._lets = condition, rec, lets
        self._root: TraceNode | None = None

    @property
    def root(self) -> TraceNode | None:
        if self._root is None and self._condition is not None:
            self._root = TraceBuilder(self._rec or {}, self._lets or {}).build(self._condition)
        return self._root

    def __repr__(self) -> str:
        return f"RuleTrace({self.rule!r}, {self.clause!r}, {self.outcome!r})"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "clause": self.clause,
            "outcome": self.outcome,
            "location": f"{self.span.source.name}:{self.span.line}",
            "condition": self.root.to_json() if self.root is not None else None,
        }


class TraceBuilder:
    """AST + recorded values -> TraceNode tree, with concrete fact paths for quantifier variables."""

    def __init__(self, rec: Mapping[Any, Any], lets: Mapping[str, ast.Let], scope_vars: frozenset[str] = frozenset()):
        self.rec = rec
        self.lets = lets
        self._expanded: dict[str, TraceNode] = {}
        self.scope_vars = scope_vars

    def build(self, e: ast.Expr, paths: Mapping[str, str] | None = None) -> TraceNode:
        return self._node(e, dict(paths or {}))

    def _concrete(self, e: ast.Expr, paths: Mapping[str, str]) -> str | None:
        keys: list[str] = []
        node = e
        while isinstance(node, (ast.Field, ast.Index)):
            if isinstance(node, ast.Field):
                keys.append("." + node.name)
            else:
                idx = node.index
                if not isinstance(idx, ast.Literal):
                    return None
                keys.append(f"[{idx.value!r}]" if isinstance(idx.value, str) else f"[{idx.value}]")
            node = node.obj
        if not isinstance(node, ast.Name):
            return None
        root = paths.get(node.name, node.name)
        if " " in root:  # an element of a computed list: no fact path to show
            return None
        return root + "".join(reversed(keys))

    def _node(self, e: ast.Expr, paths: dict[str, str]) -> TraceNode:
        key = id(e)
        evaluated = key in self.rec
        value = self.rec.get(key, UNKNOWN)
        error = self.rec.get(("error", key))
        children: list[TraceNode] = []
        binding: dict[str, str] | None = None
        reads = missing = let = None
        let_definition: TraceNode | None = None

        if isinstance(e, (ast.Name, ast.Field)) and _is_path(e):
            reads = self._concrete(e, paths)
            gap = self.rec.get(("missing", key))
            root: ast.Expr = e
            keys = []
            while isinstance(root, ast.Field):
                keys.append(root.name)
                root = root.obj
            keys.reverse()
            assert isinstance(root, ast.Name)
            if root.name in self.lets and root.name not in paths:
                let = root.name
                if root.name not in self._expanded:  # show each let's definition once per trace
                    self._expanded[root.name] = self._node(self.lets[root.name].expr, {})
                    children.append(self._expanded[root.name])
                let_definition = self._expanded[root.name]
            if gap is not None and root.name not in self.lets:
                missing = reads  # the whole path the rule needed, not just its first absent key
            elif isinstance(e, ast.Name) and evaluated and value is UNKNOWN and e.name not in self.lets:
                missing = paths.get(e.name, e.name)
        elif isinstance(e, ast.Quantifier):
            binding = {}
            inner = dict(paths)
            for b in e.bindings:
                children.append(self._node(b.collection, inner))
                coll = self._concrete(b.collection, inner)
                i = self.rec.get(("bind", id(b)))
                index = "?" if i is None else str(i)
                # a computed list has no fact path: name the element by its position
                inner[b.name] = f"{coll}[{index}]" if coll else f"item {index} of the list"
                if i is not None:
                    binding[b.name] = inner[b.name]
                    element = _element(self.rec.get(id(b.collection)), i)
                    if isinstance(element, dict) and isinstance(element.get("origin"), str):
                        binding[b.name] += f" ({element['origin']})"  # a surface: say where it is
            children.append(self._node(e.body, inner))
        elif isinstance(e, ast.Comprehension):
            children.append(self._node(e.collection, paths))
            coll = self._concrete(e.collection, paths)
            inner = {**paths, e.name: f"{coll}[*]" if coll else "each item of the list"}
            children.append(self._node(e.element, inner))
            if e.condition is not None:
                children.append(self._node(e.condition, inner))
        else:
            children.extend(self._node(c, paths) for c in ast.children(e))
        return TraceNode(
            kind=type(e).__name__.lower(),
            text=e.span.text,
            span=e.span,
            evaluated=evaluated,
            value=value,
            error=error,
            reads=reads,
            missing=missing,
            binding=binding or None,
            let=let,
            children=tuple(children),
            let_definition=let_definition,
        )


def _element(collection: Any, i: int) -> Any:
    return collection[i] if isinstance(collection, list) and 0 <= i < len(collection) else None


def _is_path(e: ast.Expr) -> bool:
    while isinstance(e, ast.Field):
        e = e.obj
    return isinstance(e, ast.Name)
