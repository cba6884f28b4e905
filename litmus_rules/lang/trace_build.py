"""How a trace is made from a rule's AST and the values the recording evaluator stored: the
TraceNode tree (`TraceBuilder`), the facts and lets an unknown result comes from
(`_BlameBuilder`), and the trace JSON, built in one pass (`JSONTraceBuilder`, values copied by
`JSONValues`). `trace.RuleTrace` holds a decision's records and asks these for what is shown.
"""

from __future__ import annotations

import functools

from typing import Any, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang.records import field, record
from litmus_rules.lang.trace_memo import TraceMemo
from litmus_rules.source import Span
from litmus_rules.lang.values import TRACE_DEPTH, TRACE_ITEMS, TRACE_STRING, UNKNOWN



@record
class TraceNode:
    kind: str  # the AST node type, lower case: `quantifier`, `compare`, `call`, `field`, ...
    text: str  # the expression as written
    span: Span = field(repr=False, eq=False)
    evaluated: bool
    value: Any  # the runtime value (UNKNOWN for missing evidence); meaningless when not evaluated
    error: str | None = None
    reads: str | None = None  # the concrete fact path this node read, e.g. `detector.signals[0].value`
    missing: str | None = None  # the fact path found missing here
    binding: Mapping[str, str] | None = None  # quantifier witness: variable -> concrete path
    let: str | None = None  # this node names a let; its definition is a child at its first mention
    children: tuple[TraceNode, ...] = ()
    # This node reads a `where` name whose value is computed (no fact path): `name = definition`.
    # (A `where` name bound to a fact path reads as that path: `reads`.)
    where: str | None = None
    # The let's definition at every mention (shown once, but an unknown let is explained by it).
    let_definition: TraceNode | None = field(default=None, repr=False, eq=False)

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
        """This node as JSON (what `RuleTrace.to_json` writes when the tree was already built)."""
        return _node_json(JSONValues(), False, None, (None, self.kind, self.text, self.span.location()),
                          self.evaluated, self.value, self.error, self.reads, self.missing, self.binding, self.let,
                          [c.to_json() for c in self.children], None, self.where)


class _Computed(str):
    """What a trace's path map holds for a `where` name whose value is computed (a call, an
    operator): not a fact path (it has spaces, so no path is made through it), and the name's
    definition, `name = expression`, which a node reading the name shows instead."""

    __slots__ = ("definition",)

    def __new__(cls, name: str, expression: str) -> _Computed:
        self = super().__new__(cls, f"where {name}")
        self.definition = f"{name} = {' '.join(expression.split())}"
        return self


class TraceBuilder:
    """AST + recorded values -> TraceNode tree, with concrete fact paths for quantifier variables.

    `_node` decides what each node shows; `_make` turns that into a node (a TraceNode here, a JSON
    object in `JSONTraceBuilder`), so both renderings follow one definition."""

    expand_lets = True  # show each let's definition under its first mention
    unknown_only = False  # build only the nodes whose value is unknown (`_BlameBuilder`)

    def __init__(self, rec: Mapping[Any, Any], lets: Mapping[str, ast.Let], scope_vars: frozenset[str] = frozenset()):
        self.rec = rec
        self.lets = lets
        self._expanded: dict[str, Any] = {}
        self.scope_vars = scope_vars

    def build(self, e: ast.Expr, paths: Mapping[str, str] | None = None) -> Any:
        return self._node(e, dict(paths or {}))

    def _concrete(self, e: ast.Expr, paths: Mapping[str, str]) -> str | None:
        chain = _static(e)[5]
        if chain is None:
            return None
        name, suffix = chain
        root = paths.get(name, name)
        if " " in root:  # an element of a computed list: no fact path to show
            return None
        return root + suffix

    def _node(self, e: ast.Expr, paths: dict[str, str]) -> Any:
        key = id(e)
        rec = self.rec
        static = _STATIC.get(key)  # (inlined `_static`: this runs for every node of every trace)
        if static is None or static[0] is not e:
            static = _static(e)
        shape = static[4]
        if shape is _LITERAL:
            return self._literal(e, static)
        value = rec.get(key, _ABSENT)
        evaluated = value is not _ABSENT
        if not evaluated:
            value = UNKNOWN
            if self.unknown_only:
                return None
        elif self.unknown_only and value is not UNKNOWN:
            return None
        error = rec.get(static[7])  # ("error", key), made once per AST node
        children: list[Any] = []
        binding: dict[str, str] | None = None
        reads = missing = let = where = None
        let_definition: Any = None

        if shape is _PATH:  # a name, or fields of a name: a fact path
            name, suffix = static[5]
            root = paths.get(name, name)
            reads = None if " " in root else root + suffix  # (`_concrete`, inlined)
            gap = rec.get(static[8])  # ("missing", key)
            if isinstance(root, _Computed):
                where = root.definition
            if name in self.lets and name not in paths:
                let = name
                if self.expand_lets:
                    if name not in self._expanded:  # show each let's definition once per trace
                        self._expanded[name] = self._node(self.lets[name].expr, {})
                        children.append(self._expanded[name])
                    let_definition = self._expanded[name]
            if gap is not None and name not in self.lets:
                missing = reads  # the whole path the rule needed, not just its first absent key
            elif isinstance(e, ast.Name) and evaluated and value is UNKNOWN and e.name not in self.lets and where is None:
                missing = paths.get(e.name, e.name)
        elif shape is _GENERIC:
            node = self._node
            for c in static[6]:  # (a loop, not a comprehension: no frame of its own per node)
                children.append(node(c, paths))
        elif shape is _QUANTIFIER:
            assert isinstance(e, ast.Quantifier)
            binding = {}
            inner = dict(paths)
            for b in e.bindings:
                children.append(self._node(b.collection, inner))
                coll = self._concrete(b.collection, inner)
                if b.local:
                    # `where n = expr`: one value, not an element. A fact path names its value
                    # (`context.tools[3].description`); a computed one is shown by its definition.
                    inner[b.name] = coll if coll is not None else _Computed(b.name, b.value.span.text)
                    continue
                i = rec.get(("bind", id(b)))
                index = "?" if i is None else str(i)
                # a computed list has no fact path: name the element by its position
                inner[b.name] = f"{coll}[{index}]" if coll else f"item {index} of the list"
                if i is not None:
                    binding[b.name] = inner[b.name]
                    element = _element(rec.get(id(b.collection)), i)
                    if isinstance(element, dict) and isinstance(element.get("origin"), str):
                        binding[b.name] += f" ({element['origin']})"  # a surface: say where it is
            children.append(self._node(e.body, inner))
        else:
            assert isinstance(e, ast.Comprehension)
            children.append(self._node(e.collection, paths))
            coll = self._concrete(e.collection, paths)
            inner = {**paths, e.name: f"{coll}[*]" if coll else "each item of the list"}
            children.append(self._node(e.element, inner))
            if e.condition is not None:
                children.append(self._node(e.condition, inner))
        return self._make(e, static, evaluated, value, error, reads, missing, binding or None, let, children,
                          let_definition, where)

    def _literal(self, e: ast.Expr, static: tuple[Any, ...]) -> Any:
        """A literal's node: never evaluated in a trace (the recording run does not record a value
        the source already shows), nor failing."""
        return self._make(e, static, False, UNKNOWN, None, None, None, None, None, [], None)

    def _make(
        self, e: ast.Expr, static: tuple[Any, ...], evaluated: bool, value: Any, error: str | None, reads: str | None, missing: str | None,
        binding: dict[str, str] | None, let: str | None, children: list[Any], let_definition: Any,
        where: str | None = None,
    ) -> Any:
        # every field, in the class's order: positional arguments take __init__'s fast path
        return TraceNode(static[1], static[2], e.span, evaluated, value, error, reads, missing, binding, let,
                         tuple(children), where, let_definition)


class _BlameBuilder(TraceBuilder):
    """What `TraceNode.missing_paths` and `unknown_lets` find, without the tree: an insufficient-
    evidence message needs them for every such reject, and a JSON verdict never needs the tree.

    Blame follows unknown values only, so a node whose value is known (or that was not evaluated)
    is not built at all; the rest is `TraceBuilder`'s, so both find the same paths and lets."""

    unknown_only = True

    def _literal(self, e: ast.Expr, static: tuple[Any, ...]) -> Any:
        return None  # never evaluated in a trace, so never to blame

    def _make(
        self, e: ast.Expr, static: tuple[Any, ...], evaluated: bool, value: Any, error: str | None,
        reads: str | None, missing: str | None, binding: dict[str, str] | None, let: str | None,
        children: list[Any], let_definition: Any, where: str | None = None,
    ) -> Any:
        return missing, let, [c for c in children if c is not None], let_definition

    def blame(self, condition: ast.Expr) -> tuple[list[str], list[str]]:
        """(missing fact paths, unknown lets), outermost first, as `TraceNode._unknown_nodes` walks."""
        missing: dict[str, None] = {}
        lets: dict[str, None] = {}
        stack = [self.build(condition)]
        while stack:
            node = stack.pop()
            if node is None:
                continue
            path, let, children, definition = node
            if path:
                missing[path] = None
            if let:
                lets[let] = None
            stack.extend(reversed(children))
            if definition is not None and not any(c is definition for c in children):
                stack.append(definition)
        return list(missing), list(lets)


class JSONTraceBuilder(TraceBuilder):
    """AST + recorded values -> the trace's JSON objects directly (what `TraceNode.to_json` of the
    TraceBuilder's tree gives, without building that tree first); `compact` as `RuleTrace.to_json`."""

    def __init__(
        self, rec: Mapping[Any, Any], lets: Mapping[str, ast.Let], *, compact: bool = False,
        values: JSONValues | None = None,
    ):
        super().__init__(rec, lets)
        self.compact = compact
        self.expand_lets = not compact
        self.values = values if values is not None else JSONValues()
        # `_make` with this builder's settings bound (a partial: no Python frame of its own per node)
        self._make = functools.partial(_node_json, self.values, compact)  # type: ignore[method-assign]

    def _literal(self, e: ast.Expr, static: tuple[Any, ...]) -> Any:
        return static[9]  # made once (`_static`), shared by every trace that shows the literal


def _node_json(
    values: JSONValues, compact: bool, e: ast.Expr | None, static: tuple[Any, ...], evaluated: bool, value: Any,
    error: str | None, reads: str | None, missing: str | None, binding: Mapping[str, str] | None, let: str | None,
    children: list[Any], let_definition: Any = None, where: str | None = None,
) -> dict[str, Any]:
    """One trace node's JSON object (`JSONTraceBuilder._make`: `TraceBuilder._make`'s arguments after
    the builder's `values` and `compact`; `static[1:4]` are the node's kind, text and location); its
    keys in the order the verdict JSON has always had. `compact`: only the evaluated children."""
    if compact and children:
        children = [c for c in children if c["evaluated"]]
    d: dict[str, Any] = {"kind": static[1], "expr": static[2], "location": static[3], "evaluated": evaluated}
    if evaluated:
        cls = value.__class__  # the common scalars as `values.copy` gives them, without its call
        if cls is bool or value is None or cls is int or (cls is str and len(value) <= TRACE_STRING):
            d["value"] = value
        else:
            d["value"] = values.copy(value)
    if error:
        d["error"] = error
    if reads:
        d["reads"] = reads
    if missing:
        d["missing"] = missing
    if let:
        d["let"] = let
    if where:
        d["where"] = where
    if binding:
        d["binding"] = dict(binding)
    if children:
        d["children"] = children
    return d


class JSONValues:
    """Bounded JSON copies of runtime values, as `values.to_json` makes them (the same limits),
    with two differences for the writer: a non-finite float becomes its name ("NaN", "Infinity",
    "-Infinity", as render/json writes it), and a list or object is copied once however many nodes
    show it (a let's value, say, at each mention, in each trace of one verdict). An instance must not
    outlive the values it copied: the memo is keyed by their `id()` (the traces' recorded values hold
    them while a verdict's JSON is built). `shared`: the run's memo of whole traces, whose JSON is
    then shared with other verdicts (lang/trace_memo.py), for a reader that never changes it."""

    __slots__ = ("_memo", "shared")

    def __init__(self, shared: TraceMemo | None = None) -> None:
        self._memo: dict[tuple[int, int], Any] = {}
        self.shared = shared

    def copy(self, value: Any, depth: int = 0) -> Any:
        if value is UNKNOWN:
            return {"unknown": True}
        cls = value.__class__
        if cls is str:
            return value if len(value) <= TRACE_STRING else _cut(value)
        if value is None or cls is bool or cls is int:
            return value
        if cls is float:
            return value if value - value == 0 else finite_name(value)
        if isinstance(value, (dict, list, tuple)):
            key = (id(value), depth)
            out = self._memo.get(key)
            if out is None:  # every value copied is held by the trace's rec, so an id names one value
                out = self._memo[key] = self._container(value, depth)
            return out
        if isinstance(value, str):
            return value if len(value) <= TRACE_STRING else _cut(value)
        if isinstance(value, float):
            return float(value) if value - value == 0 else finite_name(value)
        if isinstance(value, (bool, int)):
            return value
        return repr(value)

    def _container(self, value: dict[Any, Any] | list[Any] | tuple[Any, ...], depth: int) -> Any:
        if depth >= TRACE_DEPTH and value:
            return f"... ({len(value)} {'keys' if isinstance(value, dict) else 'items'})"
        copy = self.copy
        below = depth + 1
        # (the common scalars as `copy` gives them, without its call: most of a value's leaves)
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for k, v in value.items() if len(value) <= TRACE_ITEMS else list(value.items())[:TRACE_ITEMS]:
                cls = v.__class__
                if cls is str:
                    out[k if k.__class__ is str else str(k)] = v if len(v) <= TRACE_STRING else _cut(v)
                elif cls is bool or cls is int or v is None:
                    out[k if k.__class__ is str else str(k)] = v
                else:
                    out[str(k)] = copy(v, below)
            if len(value) > TRACE_ITEMS:
                out["..."] = f"{len(value) - TRACE_ITEMS} more keys"
            return out
        items = []
        for v in value[:TRACE_ITEMS]:
            cls = v.__class__
            if cls is str:
                items.append(v if len(v) <= TRACE_STRING else _cut(v))
            elif cls is bool or cls is int or v is None:
                items.append(v)
            else:
                items.append(copy(v, below))
        if len(value) > TRACE_ITEMS:
            items.append(f"... ({len(value) - TRACE_ITEMS} more items)")
        return items


def finite_name(value: float) -> str:
    """How JSON output writes a non-finite float (JSON has no NaN): "NaN", "Infinity", "-Infinity"."""
    return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")


def _cut(text: str) -> str:
    return text[:TRACE_STRING] + f"... ({len(text) - TRACE_STRING} more characters)"


# What a trace shows of an AST node whatever was recorded, by id(node): (node, kind, text,
# `file:line:col`, its shape for the builder, (root name, path suffix) or None, its children, and
# its keys in the recorded values for an error and for a missing fact). The
# entry holds the node itself, so the id cannot name another node while it is cached; bounded by
# clearing.
_STATIC: dict[int, tuple[Any, ...]] = {}
_STATIC_LIMIT = 100_000
_PATH, _QUANTIFIER, _COMPREHENSION, _GENERIC = "path", "quantifier", "comprehension", "generic"
_LITERAL = "literal"
_ABSENT: Any = object()  # not recorded: the node was not evaluated


def _static(e: ast.Expr) -> tuple[Any, ...]:
    static = _STATIC.get(id(e))
    if static is None or static[0] is not e:
        if len(_STATIC) >= _STATIC_LIMIT:
            _STATIC.clear()
        if isinstance(e, (ast.Name, ast.Field)) and _is_path(e):
            shape = _PATH
        elif isinstance(e, ast.Quantifier):
            shape = _QUANTIFIER
        elif isinstance(e, ast.Comprehension):
            shape = _COMPREHENSION
        elif isinstance(e, ast.Literal):
            shape = _LITERAL
        else:
            shape = _GENERIC
        key = id(e)
        kind, text, location = type(e).__name__.lower(), e.span.text, e.span.location()
        # a literal's JSON node: never recorded (its value is in the source), so the same in every trace
        literal = _node_json(JSONValues(), False, e, (e, kind, text, location), False, UNKNOWN, None, None, None,
                             None, None, []) if shape is _LITERAL else None
        static = (e, kind, text, location, shape, _chain(e), ast.children(e), ("error", key), ("missing", key),
                  literal)
        _STATIC[id(e)] = static
    return static


def _chain(e: ast.Expr) -> tuple[str, str] | None:
    """A field/index chain over a name as (the name, the rest as written in a fact path), e.g.
    `d.args["x"]` -> ("d", `.args['x']`); None when the base is not a name or an index is computed."""
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
    return node.name, "".join(reversed(keys))


def _element(collection: Any, i: int) -> Any:
    return collection[i] if isinstance(collection, list) and 0 <= i < len(collection) else None


def _is_path(e: ast.Expr) -> bool:
    while isinstance(e, ast.Field):
        e = e.obj
    return isinstance(e, ast.Name)
