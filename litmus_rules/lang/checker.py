"""Load-time checker: every name, fact path and call in a ruleset, checked against the environment
(its root fact types and built-ins, lang/environment.py). It keeps the type of every node it typed
(`Checker.types`) for the passes after it.

Collects every diagnostic (it never stops at the first), sorted by location and capped. Codes are
stable; tests assert codes, not wording. Messages follow one house style: lowercase, no final
period, user input in backticks, help separate.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from litmus_rules.errors import Diagnostic
from litmus_rules.lang import ast
from litmus_rules.lang import types as t
from litmus_rules.lang.builtins import Builtin, bind_arguments, signature
from litmus_rules.lang.environment import Environment
from litmus_rules import diagnostics
from litmus_rules.diagnostics import code_for
from litmus_rules.source import Span

MAX_DIAGNOSTICS = 100
# Evaluation recurses once per level of an expression, and a `let` mentioned inside an expression
# adds its own levels: 500 chained lets ran out of Python's stack. Bounded here, at load time.
MAX_EVAL_DEPTH = 200

# code -> (severity, short name) of the checker's codes, from the one catalogue (`diagnostics`).
CODES: dict[str, tuple[str, str]] = diagnostics.table(diagnostics.by_stage("checker"))

PARAM_TYPES = {"string": t.STR, "number": t.NUM, "int": t.NUM, "bool": t.BOOL, "list": t.list_of(t.ANY)}


def _suggest(word: str, candidates: Iterable[str]) -> str | None:
    import difflib  # here: only a misspelt name needs it

    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return match[0] if match else None


class _Scope:
    __slots__ = ("vars", "parent")  # a plain class: attrs would generate code for it on every start

    def __init__(self, vars: dict[str, t.T], parent: _Scope | None = None) -> None:
        self.vars = vars
        self.parent = parent

    def lookup(self, name: str) -> t.T | None:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None

    def names(self) -> set[str]:
        out: set[str] = set()
        scope: _Scope | None = self
        while scope is not None:
            out |= set(scope.vars)
            scope = scope.parent
        return out


class Checker:
    def __init__(self, ruleset: ast.RuleSet, environment: Environment) -> None:
        self.rs = ruleset
        self.environment = environment
        self.facts = environment.roots
        self.builtins = environment.builtins
        self.diags: list[Diagnostic] = []
        self.lets = {let.name: let for let in ruleset.lets}
        self.params = {p.name: p for p in ruleset.params}
        self.let_types: dict[str, t.T] = {}
        self._in_progress: list[str] = []
        self.used: set[str] = set()
        # id(node) -> the type inferred for it: kept for the passes after the checker (lints, coverage)
        self.types: dict[int, t.T] = {}
        self.local_types: dict[int, t.T] = {}  # id(`where` binding) -> its value's type, for messages

    def report(self, code: str, message: str, span: Span | None, help: str | None = None) -> None:
        self.diags.append(Diagnostic(code, CODES[code][0], message, span, help))

    # ---- entry point --------------------------------------------------------------------------------

    def run(self) -> list[Diagnostic]:
        self._check_duplicates()
        if self._check_depth():  # everything after this recurses through the let chains
            return sorted(self.diags, key=Diagnostic.sort_key)[:MAX_DIAGNOSTICS]
        for p in self.rs.params:
            self._check_param(p)
        for let in self.rs.lets:
            self._let_type(let.name)
        for rule in self.rs.rules:
            scope = _Scope({})
            self._condition(rule.condition, scope, "a rule's condition")
            if rule.message is not None:
                self._message(rule.message, rule.condition)
        for cls in self.rs.classifiers:
            labels: set[str] = set()
            for cell in cls.cells:
                if cell.label in labels:
                    self.report("L214", f"label `{cell.label}` appears twice in `{cls.name}`", cell.span)
                labels.add(cell.label)
                if cell.condition is not None:
                    self._condition(cell.condition, _Scope({}), "a classification cell")
        for name, p in self.params.items():
            if name not in self.used:
                self.report("L220", f"param `{name}` is never used", p.span)
        for name, let in self.lets.items():
            if name not in self.used:
                self.report("L221", f"let `{name}` is never used", let.span)
        diags = sorted(self.diags, key=Diagnostic.sort_key)
        return diags[:MAX_DIAGNOSTICS]

    def _check_depth(self) -> bool:
        """L216 where the evaluation depth (counting through lets) first passes MAX_EVAL_DEPTH.
        Iterative: the point is that rule text cannot exhaust the stack. True if any was reported."""
        local = {name: _local_depth(let.expr, self.lets) for name, let in self.lets.items()}
        depth: dict[str, int] = {}
        for start in self.lets:
            stack, on_path = [(start, False)], set()
            while stack:
                name, done = stack.pop()
                own, refs = local[name]
                if done:
                    on_path.discard(name)
                    depth[name] = max([own] + [d + depth.get(r, 0) for d, r in refs])  # a cycle is L211
                    continue
                if name in depth or name in on_path:
                    continue
                on_path.add(name)
                stack.append((name, True))
                stack.extend((r, False) for _, r in refs if r not in depth and r not in on_path)
        found = False
        help = "split the chain or the expression: compute the value in fewer, flatter steps"
        for name, let in self.lets.items():
            _, refs = local[name]
            if depth[name] > MAX_EVAL_DEPTH and all(depth.get(r, 0) <= MAX_EVAL_DEPTH for _, r in refs):
                self.report(
                    "L216",
                    f"let `{name}` is {depth[name]} levels deep, counting the lets it uses; the limit is {MAX_EVAL_DEPTH}",
                    let.span,
                    help,
                )
                found = True
        conditions: list[tuple[str, ast.Expr, Span]] = [(f"rule `{r.name}`", r.condition, r.span) for r in self.rs.rules]
        conditions += [
            (f"cell `{c.label}`", c.condition, c.span) for k in self.rs.classifiers for c in k.cells if c.condition is not None
        ]
        for what, condition, span in conditions:
            own, refs = _local_depth(condition, self.lets)
            if any(depth.get(r, 0) > MAX_EVAL_DEPTH for _, r in refs):
                continue  # reported at the let
            total = max([own] + [d + depth.get(r, 0) for d, r in refs])
            if total > MAX_EVAL_DEPTH:
                self.report(
                    "L216",
                    f"the condition of {what} is {total} levels deep, counting the lets it uses; "
                    f"the limit is {MAX_EVAL_DEPTH}",
                    condition.span,
                    help,
                )
                found = True
        return found

    def _check_duplicates(self) -> None:
        seen: dict[str, ast.Decl] = {}
        for item in self.rs.items:
            if item.name in seen:
                first = seen[item.name].span
                self.report(
                    "L210",
                    f"`{item.name}` is declared twice",
                    item.span,
                    f"first declared at {first.location()}" if first else None,
                )
            else:
                seen[item.name] = item
        for item in self.rs.items:
            if isinstance(item, (ast.Param, ast.Let)) and self.facts.root_type(item.name) is not None:
                self.report("L213", f"`{item.name}` shadows the fact of the same name", item.span)

    def _check_param(self, p: ast.Param) -> None:
        if not _is_constant(p.default):
            self.report("L212", f"the default of param `{p.name}` must be a literal", p.default.span)
            return
        if p.type_name is not None:
            declared = PARAM_TYPES.get(p.type_name)
            if declared is None:
                self.report(
                    "L212",
                    f"unknown param type `{p.type_name}`",
                    p.span,
                    "types: " + ", ".join(PARAM_TYPES),
                )
            elif not _compatible(self._infer(p.default, _Scope({})), declared):
                self.report("L212", f"the default of param `{p.name}` is not a {p.type_name}", p.default.span)

    def _let_type(self, name: str) -> t.T:
        if name in self.let_types:
            return self.let_types[name]
        let = self.lets[name]
        if name in self._in_progress:
            cycle = " -> ".join(self._in_progress[self._in_progress.index(name) :] + [name])
            self.report("L211", f"let `{name}` depends on itself ({cycle})", let.span)
            return t.ANY
        self._in_progress.append(name)
        typ = self._infer(let.expr, _Scope({}))
        self._in_progress.pop()
        self.let_types[name] = typ
        return typ

    # ---- expressions --------------------------------------------------------------------------------

    def _condition(self, expr: ast.Expr, scope: _Scope, what: str) -> None:
        typ = self._infer(expr, scope)
        if not typ.may_be("boolean"):
            self.report("L207", f"{what} must be true or false, but this is a {typ.describe()}", expr.span)

    def annotate(self, expr: ast.Expr) -> t.T:
        """Type an expression outside the ruleset as a condition of it; its diagnostics are dropped."""
        before = len(self.diags)
        typ = self._infer(expr, _Scope({}))
        del self.diags[before:]
        return typ

    def _infer(self, e: ast.Expr, scope: _Scope) -> t.T:
        typ = self._type(e, scope)
        self.types[id(e)] = typ
        return typ

    def _type(self, e: ast.Expr, scope: _Scope) -> t.T:  # noqa: C901 - one branch per node type
        if isinstance(e, ast.Literal):
            return literal_type(e.value)
        if isinstance(e, ast.ListExpr):
            item: t.T | None = None
            for x in e.items:
                xt = self._infer(x, scope)
                item = xt if item is None else t.union(item, xt)
            return t.list_of(item or t.ANY)
        if isinstance(e, ast.Name):
            return self._name(e, scope)
        if isinstance(e, ast.Field):
            base = self._infer(e.obj, scope)
            if base.is_any:
                return t.ANY
            if not base.may_be("object"):
                self.report("L208", f"`{e.obj.span.text}` is a {base.describe()}, it has no field `{e.name}`", e.span)
                return t.ANY
            ft = t.field_type(base, e.name)
            if ft is None:
                names = t.field_names(base) or []
                guess = _suggest(e.name, names)
                self.report(
                    "L202",
                    f"unknown fact path `{e.obj.span.text}.{e.name}`",
                    e.span,
                    f"did you mean `{e.obj.span.text}.{guess}`?" if guess else f"fields: {', '.join(names)}",
                )
                return t.ANY
            return ft
        if isinstance(e, ast.Index):
            base = self._infer(e.obj, scope)
            it = self._infer(e.index, scope)
            if base.is_any:
                return t.ANY
            if base.may_be("array"):
                if not it.may_be("number"):
                    self.report("L208", "a list index must be a number", e.index.span)
                return t.item_type(base)
            if base.may_be("object"):
                return t.ANY
            if base.may_be("string"):
                return t.STR
            self.report("L208", f"`{e.obj.span.text}` is a {base.describe()} and cannot be indexed", e.span)
            return t.ANY
        if isinstance(e, ast.Call):
            return self._call(e, scope)
        if isinstance(e, ast.Not):
            self._condition(e.operand, scope, "the operand of `not`")
            return t.BOOL
        if isinstance(e, ast.BoolOp):
            for x in e.operands:
                self._condition(x, scope, f"an operand of `{e.op}`")
            return t.BOOL
        if isinstance(e, ast.Compare):
            lt, rt = self._infer(e.left, scope), self._infer(e.right, scope)
            self._compare(e, lt, rt)
            return t.BOOL
        if isinstance(e, ast.Arith):
            lt, rt = self._infer(e.left, scope), self._infer(e.right, scope)
            for side, st in ((e.left, lt), (e.right, rt)):
                if not (st.may_be("number") or (e.op == "+" and (st.may_be("string") or st.may_be("array")))):
                    self.report("L209", f"`{e.op}` needs numbers, but `{side.span.text}` is a {st.describe()}", side.span)
            return lt if not lt.is_any else rt
        if isinstance(e, ast.Neg):
            ot = self._infer(e.operand, scope)
            if not ot.may_be("number"):
                self.report("L209", f"`-` needs a number, but this is a {ot.describe()}", e.operand.span)
            return t.NUM
        if isinstance(e, ast.Quantifier):
            inner = self._bind(e.bindings, scope)
            if e.kind == "count":
                self._condition(e.body, inner, "the body of `count`")
                return t.NUM
            self._condition(e.body, inner, f"the body of `{e.kind}`")
            return t.BOOL
        if isinstance(e, ast.Comprehension):
            inner = self._bind([ast.Binding(e.name, e.collection, span=e.span)], scope)
            if e.condition is not None:
                self._condition(e.condition, inner, "a comprehension's `if`")
            return t.list_of(self._infer(e.element, inner))
        raise AssertionError(f"unhandled node {type(e).__name__}")  # pragma: no cover

    def _bind(self, bindings: Sequence[ast.Binding], scope: _Scope) -> _Scope:
        inner = _Scope({}, scope)
        for b in bindings:
            if b.local:  # `where name = value`: the value's own type, seen by what follows it
                if b.name in inner.vars:
                    self.report("L210", f"`{b.name}` is declared twice", b.span)
                inner.vars[b.name] = self._infer(b.value, inner)
                self.local_types[id(b)] = inner.vars[b.name]
                continue
            ct = self._infer(b.collection, inner)
            if not ct.is_any and not ct.may_be("array"):
                self.report("L208", f"`{b.collection.span.text}` is a {ct.describe()}, not a list", b.collection.span)
            inner.vars[b.name] = t.item_type(ct) if ct.may_be("array") else t.ANY
        return inner

    def _name(self, e: ast.Name, scope: _Scope) -> t.T:
        var = scope.lookup(e.name)
        if var is not None:
            return var
        if e.name in self.lets:
            self.used.add(e.name)
            return self._let_type(e.name)
        if e.name in self.params:
            self.used.add(e.name)
            p = self.params[e.name]
            return PARAM_TYPES.get(p.type_name or "", _literal_type_of(p.default))
        root = self.facts.root_type(e.name)
        if root is not None:
            return root
        candidates = scope.names() | set(self.lets) | set(self.params) | set(self.facts.root_names())
        guess = _suggest(e.name, candidates)
        self.report(
            "L201",
            f"unknown name `{e.name}`",
            e.span,
            f"did you mean `{guess}`?" if guess else "names are quantifier variables, lets, params or facts",
        )
        return t.ANY

    def _call(self, e: ast.Call, scope: _Scope) -> t.T:
        arg_types = [self._infer(a, scope) for a in e.args]
        kw_types = {k: self._infer(v, scope) for k, v in e.kwargs}
        fn: Builtin | None = self.builtins.get(e.func)
        if fn is None:
            guess = _suggest(e.func, self.builtins)
            self.report(
                "L203",
                f"unknown function `{e.func}`",
                e.span,
                f"did you mean `{guess}`?" if guess else "functions: " + ", ".join(sorted(self.builtins)),
            )
            return t.ANY
        bound = bind_arguments(fn, arg_types, kw_types)
        if isinstance(bound, str):
            self.report("L204", bound, e.span, signature(fn))
            return fn.returns
        nodes = bind_arguments(fn, list(e.args), dict(e.kwargs))
        assert not isinstance(nodes, str)
        for param, typ, node in zip(fn.params, bound, nodes):
            if isinstance(typ, t.T) and not _compatible(typ, param.type):
                where = node.span if isinstance(node, (ast.Literal, ast.Name, ast.Field, ast.Index, ast.Call, ast.ListExpr)) else e.span
                self.report(
                    "L205",
                    f"argument `{param.name}` of `{fn.name}` must be a {param.type.describe()}, not a {typ.describe()}",
                    where,
                    signature(fn),
                )
        return fn.returns

    def _compare(self, e: ast.Compare, lt: t.T, rt: t.T) -> None:
        if e.op in ("in", "not in"):
            if not rt.is_any and not (rt.may_be("array") or rt.may_be("string") or rt.may_be("object")):
                self.report("L209", f"`{e.op}` needs a list, string or object on its right, not a {rt.describe()}", e.right.span)
            return
        if lt.is_any or rt.is_any:
            return
        if e.op in ("<", "<=", ">", ">="):
            ok = (lt.may_be("number") and rt.may_be("number")) or (lt.may_be("string") and rt.may_be("string"))
        else:
            ok = bool(lt.kinds & rt.kinds)
        if not ok:
            self.report(
                "L209",
                f"comparing a {lt.describe()} with a {rt.describe()} with `{e.op}` is never true",
                e.span,
            )

    def _message(self, message: ast.Message, condition: ast.Expr) -> None:
        bound = {b.name: self.local_types.get(id(b), t.ANY) for b in _all_bindings(condition)}
        scope = _Scope(bound)
        for part in message.parts:
            if isinstance(part, ast.Placeholder):
                before = len(self.diags)
                self._infer(part.expr, scope)
                for i in range(before, len(self.diags)):
                    d = self.diags[i]
                    if d.code == code_for("unknown-name") and d.span is not None:
                        self.diags[i] = Diagnostic.of(code_for("unbound-placeholder"), d.span, name=d.span.text)


def _local_depth(expr: ast.Expr, lets: dict[str, ast.Let]) -> tuple[int, list[tuple[int, str]]]:
    """An expression's own depth, and each let it mentions with the depth of the mention."""
    own, refs = 0, []
    stack = [(expr, 1)]
    while stack:
        node, d = stack.pop()
        own = max(own, d)
        if isinstance(node, ast.Name) and node.name in lets:
            refs.append((d, node.name))
        stack.extend((c, d + 1) for c in ast.children(node))
    return own, refs


def _all_bindings(e: ast.Expr) -> list[ast.Binding]:
    return [b for node in ast.walk(e) if isinstance(node, ast.Quantifier) for b in node.bindings]


def _is_constant(e: ast.Expr) -> bool:
    if isinstance(e, ast.Literal):
        return True
    if isinstance(e, ast.Neg):
        return isinstance(e.operand, ast.Literal)
    if isinstance(e, ast.ListExpr):
        return all(_is_constant(x) for x in e.items)
    return False


def literal_type(value: object) -> t.T:
    """The static type of a literal value."""
    if value is None:
        return t.NULL
    if isinstance(value, bool):
        return t.BOOL
    if isinstance(value, (int, float)):
        return t.NUM
    return t.STR


def _literal_type_of(e: ast.Expr) -> t.T:
    if isinstance(e, ast.Literal):
        return literal_type(e.value)
    if isinstance(e, ast.Neg):
        return t.NUM
    if isinstance(e, ast.ListExpr):
        return t.list_of(t.ANY)
    return t.ANY


def _compatible(actual: t.T, expected: t.T) -> bool:
    if actual.is_any or expected.is_any:
        return True
    return bool(actual.kinds & expected.kinds)


def check(ruleset: ast.RuleSet, environment: Environment) -> list[Diagnostic]:
    """Every diagnostic for the ruleset in the environment, sorted by location."""
    return Checker(ruleset, environment).run()
