"""The reference evaluator: a plain, slow tree walk over the AST that states the semantics once.

The compiled evaluator (fast closures, fused loops, the recording replay) must agree with it on every
condition and every episode: the value (true, false, unknown), and when unknown, the kind (missing
evidence, or an evaluation error with its message) and the missing fact paths. The differential
tests and the compliance suite hold the compiled paths to it. It is not tuned, and it does not count
the cost budget. Use it to check the meaning of a rule by hand:

    reference_condition(ruleset_ast, params, condition, facts, environment=...)

The semantics, in one place:
- Evaluation is left to right. An evaluation error propagates at the point it is reached, unless a
  value already decided the result (`or` after true, `and` after false, `any` after a witness,
  `all` after a counter-example, a comprehension after an unknown element).
- Unknown (a missing fact) carries the fact paths that were missing. Kleene logic: `and` is false if
  any operand is false, else unknown if any is unknown; `or` dually; `not unknown` is unknown.
  Operators and calls (except `default` and `known`) are unknown when an operand is unknown, before
  any type check. A list literal with an unknown item is unknown.
- Quantifiers: `any`/`all` as Kleene `or`/`and` over the elements in order; with several bindings,
  nested quantifiers. Unknown names the first unknown element's missing paths. `count` is unknown if
  any element's body is unknown.
- A missing fact is named by its concrete path: a fact path (`controls.null.label`), or a path
  through a quantifier variable bound to an element of a path (`detector.signals[2].value`,
  `xs[*].k` inside a comprehension). A path read through a `let` names what made the let unknown.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import attrs

from litmus_rules.errors import LitmusError
from litmus_rules.lang import ast
from litmus_rules.lang.builtins import bind_arguments
from litmus_rules.lang.environment import Environment
from litmus_rules.lang.evaluate._runtime import _strict_eq
from litmus_rules.lang.values import INTERNAL_ERROR, UNKNOWN, EvalFailure, Found, type_name


@attrs.frozen
class Unknown:
    """A value that cannot be established, with the fact paths whose absence made it so."""

    missing: tuple[str, ...] = ()


class RefError(Exception):
    """An evaluation error: the message the compiled evaluator must give too."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@attrs.frozen
class Outcome:
    """What a condition evaluates to: `value` is True/False/UNKNOWN (or any value for expressions);
    `kind` is `true`, `false`, `insufficient_evidence` or `evaluation_error`."""

    value: Any
    kind: str
    missing: tuple[str, ...] = ()
    error: str | None = None


def _union(*unknowns: Any) -> Unknown:
    out: list[str] = []
    for u in unknowns:
        if isinstance(u, Unknown):
            out.extend(m for m in u.missing if m not in out)
    return Unknown(tuple(out))


class _Var:
    """A loop variable's element, or a `where` name's value (`compute`: at its first read, as the
    compiled evaluator does, so a name means what its expression would mean where it is read)."""

    __slots__ = ("_value", "path", "_compute")

    def __init__(self, value: Any, path: str | None, compute: Callable[[], Any] | None = None) -> None:
        self._value, self.path, self._compute = value, path, compute

    @property
    def value(self) -> Any:
        if self._compute is not None:
            self._value, self._compute = self._compute(), None
        return self._value


class Reference:
    """One episode's evaluation context: facts, params and lets; variables are passed down."""

    def __init__(
        self,
        lets: Mapping[str, ast.Let],
        params: Mapping[str, Any],
        facts: Mapping[str, Any],
        batch: Mapping[str, Any] | None = None,
        *,
        environment: Environment,
    ) -> None:
        self.lets, self.params, self.facts, self.batch = lets, params, facts, batch or {}
        self.environment = environment

    # ---- entry points ------------------------------------------------------------------------------

    def condition(self, e: ast.Expr) -> Outcome:
        try:
            v = self._truth(self.eval(e, {}), e)
        except RefError as exc:
            return Outcome(UNKNOWN, "evaluation_error", (), exc.message)
        if isinstance(v, Unknown):
            return Outcome(UNKNOWN, "insufficient_evidence", v.missing)
        return Outcome(v, "true" if v else "false")

    def expression(self, e: ast.Expr) -> Outcome:
        try:
            v = self.eval(e, {})
        except RefError as exc:
            return Outcome(UNKNOWN, "evaluation_error", (), exc.message)
        if isinstance(v, Unknown):
            return Outcome(UNKNOWN, "insufficient_evidence", v.missing)
        return Outcome(v, "value")

    # ---- the tree walk -------------------------------------------------------------------------------

    def eval(self, e: ast.Expr, env: Mapping[str, _Var]) -> Any:  # noqa: C901 - one branch per node
        if isinstance(e, ast.Literal):
            return e.value
        if isinstance(e, ast.ListExpr):
            items = [self.eval(x, env) for x in e.items]
            unknown = [x for x in items if isinstance(x, Unknown)]
            return _union(*unknown) if unknown else items
        if isinstance(e, (ast.Name, ast.Field)) and _root_name(e) is not None:
            return self._path(e, env)
        if isinstance(e, ast.Field):
            obj = self.eval(e.obj, env)
            return self._field(obj, e.name, e, Unknown())
        if isinstance(e, ast.Index):
            obj, i = self.eval(e.obj, env), self.eval(e.index, env)
            if isinstance(obj, Unknown) or isinstance(i, Unknown):
                return _union(obj, i)
            if obj is None:
                return Unknown()
            if isinstance(obj, (list, str)):
                if not isinstance(i, int) or isinstance(i, bool):
                    raise RefError(f"an index into a {type_name(obj)} must be a whole number, got {type_name(i)}")
                return obj[i] if -len(obj) <= i < len(obj) else Unknown()
            if isinstance(obj, dict):
                return obj.get(i, Unknown()) if isinstance(i, str) else Unknown()
            raise RefError(f"a {type_name(obj)} cannot be indexed")
        if isinstance(e, ast.Call):
            return self._call(e, env)
        if isinstance(e, ast.Not):
            v = self._truth(self.eval(e.operand, env), e.operand)
            return v if isinstance(v, Unknown) else not v
        if isinstance(e, ast.BoolOp):
            decide = e.op == "or"
            unknown: list[Unknown] = []
            for x in e.operands:
                v = self._truth(self.eval(x, env), x)
                if isinstance(v, Unknown):
                    unknown.append(v)
                elif v is decide:
                    return decide
            return _union(*unknown) if unknown else (not decide)
        if isinstance(e, ast.Compare):
            return self._compare(e, env)
        if isinstance(e, ast.Arith):
            a, b = self.eval(e.left, env), self.eval(e.right, env)
            if isinstance(a, Unknown) or isinstance(b, Unknown):
                return _union(a, b)
            if _number(a) and _number(b):
                return a + b if e.op == "+" else a - b
            if e.op == "+" and isinstance(a, str) and isinstance(b, str):
                return a + b
            if e.op == "+" and isinstance(a, list) and isinstance(b, list):
                return a + b
            raise RefError(f"`{e.op}` cannot combine {type_name(a)} and {type_name(b)}")
        if isinstance(e, ast.Neg):
            v = self.eval(e.operand, env)
            if isinstance(v, Unknown):
                return v
            if not _number(v):
                raise RefError(f"`-` needs a number, got {type_name(v)}")
            return -v
        if isinstance(e, ast.Quantifier):
            return self._quantifier(e, list(e.loops), env)
        if isinstance(e, ast.Comprehension):
            return self._comprehension(e, env)
        raise AssertionError(f"unhandled node {type(e).__name__}")  # pragma: no cover

    def _truth(self, v: Any, node: ast.Expr) -> Any:
        if v is True or v is False or isinstance(v, Unknown):
            return v
        if isinstance(v, Found):
            return True
        raise RefError(f"`{node.span.text}` must be true or false, but it is {type_name(v)}")

    # ---- names and paths -------------------------------------------------------------------------------

    def _name(self, name: str, env: Mapping[str, _Var]) -> tuple[Any, str | None, bool]:
        """(value, concrete path or None, is a let)."""
        if name in env:
            return env[name].value, env[name].path, False
        if name in self.lets:
            return self.eval(self.lets[name].expr, {}), name, True
        if name in self.params:
            return self.params[name], name, False
        derived = self.environment.derived.get(name)
        if derived is not None:
            try:
                value = derived.compute(self.facts, self.batch)
            except EvalFailure as exc:
                raise RefError(exc.message) from None
            except Exception as exc:
                raise RefError(f"could not derive `{name}`: {exc}") from None
            return _from_runtime(value), name, False
        return _from_runtime(self.facts.get(name, UNKNOWN)), name, False

    def _path(self, e: ast.Expr, env: Mapping[str, _Var]) -> Any:
        keys: list[str] = []
        node = e
        while isinstance(node, ast.Field):
            keys.append(node.name)
            node = node.obj
        assert isinstance(node, ast.Name)
        keys.reverse()
        value, root_path, is_let = self._name(node.name, env)
        if is_let:
            if isinstance(value, Unknown):
                return value  # what made the let unknown
            gap = Unknown()  # a field missing from a let's value: no fact path to name
        else:
            concrete = _concrete(e, env)
            gap = Unknown((concrete,)) if concrete is not None else Unknown()
            if isinstance(value, Unknown):
                # a `where` name bound to a computed value: what made that value unknown
                return gap if concrete is not None else value
        for k in keys:
            value = self._field(value, k, e, gap)
            if isinstance(value, Unknown):
                return gap
        return value

    def _field(self, value: Any, name: str, node: ast.Expr, gap: Unknown) -> Any:
        if isinstance(value, dict):
            return value[name] if name in value else gap
        if isinstance(value, Unknown):
            return _union(value, gap)
        if value is None:
            return gap
        raise RefError(f"`{node.span.text}`: a {type_name(value)} has no field `{name}`")

    # ---- operators and calls -----------------------------------------------------------------------------

    def _compare(self, e: ast.Compare, env: Mapping[str, _Var]) -> Any:
        a, b = self.eval(e.left, env), self.eval(e.right, env)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return _union(a, b)
        if e.op in ("==", "!="):
            return _strict_eq(a, b) is (e.op == "==")
        if e.op in ("in", "not in"):
            if isinstance(b, str):
                if not isinstance(a, str):
                    raise RefError(f"`in` on a string needs a string on its left, got {type_name(a)}")
                found = a in b
            elif isinstance(b, list):
                found = any(_strict_eq(a, x) for x in b)
            elif isinstance(b, dict):
                found = isinstance(a, str) and a in b
            else:
                raise RefError(f"`in` needs a list, string or object on its right, got {type_name(b)}")
            return found is (e.op == "in")
        if not ((_number(a) and _number(b)) or (isinstance(a, str) and isinstance(b, str))):
            raise RefError(f"`{e.op}` compares numbers or strings, got {type_name(a)} and {type_name(b)}")
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[e.op]

    def _call(self, e: ast.Call, env: Mapping[str, _Var]) -> Any:
        fn = self.environment.builtins[e.func]
        bound = bind_arguments(fn, list(e.args), dict(e.kwargs))
        assert not isinstance(bound, str)
        # an argument left out is its default value, not a node
        values = [self.eval(a, env) if hasattr(a, "span") else a for a in bound]
        unknown = [v for v in values if isinstance(v, Unknown)]
        if unknown and not fn.sees_unknown:
            return _union(*unknown)
        runtime = [UNKNOWN if isinstance(v, Unknown) else v for v in values]
        try:
            result = fn.impl(*runtime)
        except EvalFailure as exc:
            raise RefError(exc.message) from None
        except LitmusError as exc:
            raise RefError(f"`{fn.name}` failed: {exc.message}") from None
        except Exception as exc:
            raise RefError(f"`{fn.name}` failed [{INTERNAL_ERROR}]: {exc}") from None
        if result is UNKNOWN:  # `default(x, y)` with both unknown: what both lacked
            return _union(*unknown)
        return result

    # ---- loops ---------------------------------------------------------------------------------------------

    def _list(self, b: ast.Binding, env: Mapping[str, _Var]) -> Any:
        xs = self.eval(b.collection, env)
        if isinstance(xs, Unknown):
            return xs
        if xs is None:
            return Unknown()
        if not isinstance(xs, list):
            raise RefError(f"`{b.collection.span.text}` must be a list, got {type_name(xs)}")
        return xs

    def _quantifier(self, e: ast.Quantifier, bindings: list[ast.Binding], env: Mapping[str, _Var]) -> Any:
        first, rest = bindings[0], bindings[1:]
        xs = self._list(first, env)
        if isinstance(xs, Unknown):
            return xs
        coll = _concrete(first.collection, env)
        count = 0
        unknown: Unknown | None = None
        decide = e.kind == "any"
        for i, x in enumerate(xs):
            inner = {**env, first.name: _Var(x, f"{coll}[{i}]" if coll is not None else None)}
            if rest:
                v = self._quantifier(e, rest, inner)
            else:
                for b in e.locals:
                    inner = {**inner, b.name: self._local(b, inner)}
                v = self._truth(self.eval(e.body, inner), e.body)
            if isinstance(v, Unknown):
                unknown = unknown or v
            elif e.kind == "count":
                count += int(v)
            elif v is decide:
                return decide
        if unknown is not None:
            return unknown
        return count if e.kind == "count" else (not decide)

    def _local(self, b: ast.Binding, env: Mapping[str, _Var]) -> _Var:
        # No fact path: a field missing from a `where` name's value is named by no path, as in the
        # compiled trace (an unknown value is explained by what made it unknown, in `_path`).
        return _Var(None, None, lambda: self.eval(b.value, env))

    def _comprehension(self, e: ast.Comprehension, env: Mapping[str, _Var]) -> Any:
        xs = self._list(ast.Binding(e.name, e.collection, span=e.span), env)
        if isinstance(xs, Unknown):
            return xs
        coll = _concrete(e.collection, env)
        out = []
        for x in xs:
            inner = {**env, e.name: _Var(x, f"{coll}[*]" if coll is not None else None)}
            if e.condition is not None:
                keep = self._truth(self.eval(e.condition, inner), e.condition)
                if isinstance(keep, Unknown):
                    return keep  # membership undecidable: the list is unknown
                if not keep:
                    continue
            v = self.eval(e.element, inner)
            if isinstance(v, Unknown):
                return v
            out.append(v)
        return out


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _from_runtime(v: Any) -> Any:
    return Unknown() if v is UNKNOWN else v


def _root_name(e: ast.Expr) -> str | None:
    while isinstance(e, ast.Field):
        e = e.obj
    return e.name if isinstance(e, ast.Name) else None


def _concrete(e: ast.Expr, env: Mapping[str, _Var]) -> str | None:
    """The fact path an expression reads (`a.b[0].c`), through quantifier variables; None if none."""
    keys: list[str] = []
    node = e
    while isinstance(node, (ast.Field, ast.Index)):
        if isinstance(node, ast.Field):
            keys.append("." + node.name)
        else:
            if not isinstance(node.index, ast.Literal):
                return None
            v = node.index.value
            keys.append(f"[{v!r}]" if isinstance(v, str) else f"[{v}]")
        node = node.obj
    if not isinstance(node, ast.Name):
        return None
    root = env[node.name].path if node.name in env else node.name
    if root is None:
        return None
    return root + "".join(reversed(keys))


def reference_condition(
    tree: ast.RuleSet,
    params: Mapping[str, Any],
    condition: ast.Expr,
    facts: Mapping[str, Any],
    batch: Mapping[str, Any] | None = None,
    *,
    environment: Environment,
) -> Outcome:
    """Evaluate one condition of a checked ruleset on one episode, the slow and plain way."""
    lets = {let.name: let for let in tree.lets}
    return Reference(lets, params, facts, batch, environment=environment).condition(condition)


__all__ = ["Outcome", "Reference", "RefError", "Unknown", "reference_condition"]
