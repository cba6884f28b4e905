"""Compile a checked ruleset once into Python closures, then evaluate episodes many times.

Every expression node becomes a closure `f(env) -> value`. Values are JSON values or UNKNOWN (a
missing fact); `and`/`or`/`not` follow Kleene's three-valued logic. Each node is compiled twice: a
fast version for every episode, and a recording version, run only when a rule rejects or a cell
classifies, that stores each sub-expression's value for the trace. Nothing here prints, reads files
or imports the parser or checker.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from litmus_rules import ast
from litmus_rules.builtins import REGISTRY, bind_arguments
from litmus_rules.facts import DERIVED
from litmus_rules.values import UNKNOWN, BudgetExceeded, EvalFailure, type_name

Fn = Callable[["Env"], Any]

DEFAULT_BUDGET = 20_000_000
_UNSET: Any = object()
UNBOUND: Any = object()


class Found(dict):  # type: ignore[type-arg]
    """A built-in predicate's witness: truthy in conditions, and shown in full in traces."""


class Env:
    """Per-evaluation state: the episode's facts, quantifier slots, let cache, budget, recordings."""

    __slots__ = ("facts", "batch", "slots", "lets", "derived", "budget", "rec")

    def __init__(self, facts: Mapping[str, Any], batch: Mapping[str, Any], nslots: int, nlets: int, budget: int):
        self.facts = facts
        self.batch = batch
        self.slots: list[Any] = [UNBOUND] * nslots
        self.lets: list[Any] = [_UNSET] * nlets
        self.derived: dict[str, Any] = {}
        self.budget = budget
        self.rec: dict[Any, Any] | None = None

    def charge(self, units: int) -> None:
        self.budget -= units
        if self.budget < 0:
            raise BudgetExceeded("evaluation budget exceeded: the rules did more work than allowed on this episode")

    def derive(self, name: str) -> Any:
        value = self.derived.get(name, _UNSET)
        if value is _UNSET:
            try:
                value = DERIVED[name].compute(self.facts, self.batch)
            except EvalFailure:
                raise
            except Exception as exc:  # a derived fact must never crash the engine: fail closed
                raise EvalFailure(f"could not derive `{name}`: {exc}") from None
            self.derived[name] = value
        return value


def truth(value: Any, node: ast.Expr) -> Any:
    """True / False / UNKNOWN for a condition value; anything else is a type error."""
    if value is True or value is False or value is UNKNOWN:
        return value
    if value.__class__ is Found:
        return True
    raise EvalFailure(f"`{node.span.text}` must be true or false, but it is {type_name(value)}", node)


def _strict_eq(a: Any, b: Any) -> bool:
    # JSON equality: true is not 1, and 1 equals 1.0
    return bool(a == b) and (a.__class__ is bool) == (b.__class__ is bool)


def _member(item: Any, container: Any, node: ast.Expr) -> Any:
    if item is UNKNOWN or container is UNKNOWN:
        return UNKNOWN
    if isinstance(container, str):
        if not isinstance(item, str):
            raise EvalFailure(f"`in` on a string needs a string on its left, got {type_name(item)}", node)
        return item in container
    if isinstance(container, list):
        return any(_strict_eq(item, x) for x in container)
    if isinstance(container, dict):
        return item in container if isinstance(item, str) else False
    raise EvalFailure(f"`in` needs a list, string or object on its right, got {type_name(container)}", node)


def _field_of(value: Any, name: str, node: ast.Expr) -> Any:
    if value.__class__ is dict or isinstance(value, dict):
        return value.get(name, UNKNOWN)
    if value is UNKNOWN or value is None:
        return UNKNOWN  # an absent or null parent: the field is missing evidence, not an error
    raise EvalFailure(f"`{node.span.text}`: a {type_name(value)} has no field `{name}`", node)


def _order(op: str, a: Any, b: Any, node: ast.Expr) -> Any:
    if a is UNKNOWN or b is UNKNOWN:
        return UNKNOWN
    numbers = isinstance(a, (int, float)) and isinstance(b, (int, float)) and a.__class__ is not bool and b.__class__ is not bool
    if not numbers and not (isinstance(a, str) and isinstance(b, str)):
        raise EvalFailure(f"`{op}` compares numbers or strings, got {type_name(a)} and {type_name(b)}", node)
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


class Compiler:
    """AST -> closures. One instance per ruleset and mode (fast or recording)."""

    def __init__(self, params: Mapping[str, Any], let_index: Mapping[str, int], recording: bool) -> None:
        self.params = params
        self.let_index = let_index
        self.recording = recording
        self.nslots = 0
        self.let_fns: list[Fn] = []
        self.binding_slots: dict[int, int] = {}  # id(ast.Binding) -> slot, for message placeholders

    # scope: name -> slot, innermost last
    def compile(self, node: ast.Expr, scope: dict[str, int]) -> Fn:
        fn = self._compile(node, scope)
        if not self.recording:
            return fn
        key = id(node)

        def record(env: Env, fn: Fn = fn, key: int = key) -> Any:
            try:
                value = fn(env)
            except EvalFailure as exc:
                assert env.rec is not None
                env.rec.setdefault(("error", key), exc.message)
                raise
            assert env.rec is not None
            env.rec[key] = value
            return value

        return record

    def _compile(self, e: ast.Expr, scope: dict[str, int]) -> Fn:  # noqa: C901 - one branch per node
        if isinstance(e, ast.Literal):
            value = e.value
            return lambda env: value
        if isinstance(e, ast.ListExpr):
            items = [self.compile(x, scope) for x in e.items]

            def list_(env: Env) -> Any:
                out = [f(env) for f in items]
                return UNKNOWN if any(v is UNKNOWN for v in out) else out

            return list_
        if isinstance(e, (ast.Name, ast.Field)):
            path = self._path(e, scope)
            if path is not None:
                return path
        if isinstance(e, ast.Name):
            raise AssertionError(f"unresolved name {e.name}")  # the checker guarantees resolution
        if isinstance(e, ast.Field):
            obj, name = self.compile(e.obj, scope), e.name
            return lambda env: _field_of(obj(env), name, e)
        if isinstance(e, ast.Index):
            return self._index(e, scope)
        if isinstance(e, ast.Call):
            return self._call(e, scope)
        if isinstance(e, ast.Not):
            operand = self.compile(e.operand, scope)

            def not_(env: Env) -> Any:
                v = operand(env)
                if v is True:
                    return False
                if v is False:
                    return True
                v = truth(v, e.operand)
                return UNKNOWN if v is UNKNOWN else not v

            return not_
        if isinstance(e, ast.BoolOp):
            return self._boolop(e, scope)
        if isinstance(e, ast.Compare):
            return self._compare(e, scope)
        if isinstance(e, ast.Arith):
            return self._arith(e, scope)
        if isinstance(e, ast.Neg):
            operand = self.compile(e.operand, scope)

            def neg(env: Env) -> Any:
                v = operand(env)
                if v is UNKNOWN:
                    return UNKNOWN
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise EvalFailure(f"`-` needs a number, got {type_name(v)}", e)
                return -v

            return neg
        if isinstance(e, ast.Quantifier):
            return self._quantifier(e, list(e.bindings), scope)
        if isinstance(e, ast.Comprehension):
            return self._comprehension(e, scope)
        raise AssertionError(f"unhandled node {type(e).__name__}")  # pragma: no cover

    # ---- names and paths ----------------------------------------------------------------------------

    def _root(self, name: str, scope: dict[str, int]) -> Fn:
        if name in scope:
            slot = scope[name]
            return lambda env: env.slots[slot]
        if name in self.let_index:
            i = self.let_index[name]
            let_fns = self.let_fns

            def let(env: Env) -> Any:
                v = env.lets[i]
                if v is _UNSET:
                    v = env.lets[i] = let_fns[i](env)
                return v

            return let
        if name in self.params:
            value = self.params[name]
            return lambda env: value
        if name in DERIVED:
            return lambda env: env.derive(name)
        return lambda env: env.facts.get(name, UNKNOWN)

    def _path(self, e: ast.Expr, scope: dict[str, int]) -> Fn | None:
        """A chain `root.a.b` compiles into one getter: the hot path of every rule."""
        keys: list[str] = []
        node = e
        while isinstance(node, ast.Field):
            keys.append(node.name)
            node = node.obj
        if not isinstance(node, ast.Name):
            return None
        root = self._root(node.name, scope)
        if not keys:
            return root
        keys.reverse()
        if self.recording:
            return self._recording_path(e, root, keys)
        if len(keys) == 1:
            (k,) = keys

            def get1(env: Env) -> Any:
                v = root(env)
                if v.__class__ is dict:
                    return v.get(k, UNKNOWN)
                return _field_of(v, k, e)

            return get1

        def get(env: Env) -> Any:
            v = root(env)
            for k in keys:
                if v.__class__ is dict:
                    v = v.get(k, UNKNOWN)
                else:
                    v = _field_of(v, k, e)
                    if v is UNKNOWN:
                        return v
            return v

        return get

    def _recording_path(self, e: ast.Expr, root: Fn, keys: list[str]) -> Fn:
        key = id(e)

        def get(env: Env) -> Any:
            v = root(env)
            for depth, k in enumerate(keys):
                if v is UNKNOWN:
                    break
                nv = _field_of(v, k, e)
                if nv is UNKNOWN and v is not UNKNOWN:
                    assert env.rec is not None
                    env.rec[("missing", key)] = depth + 1  # how many keys were read before the gap
                v = nv
            if v is UNKNOWN and ("missing", key) not in (env.rec or {}):
                assert env.rec is not None
                env.rec[("missing", key)] = 0
            return v

        return get

    def _index(self, e: ast.Index, scope: dict[str, int]) -> Fn:
        obj, index = self.compile(e.obj, scope), self.compile(e.index, scope)

        def index_(env: Env) -> Any:
            v, i = obj(env), index(env)
            if v is UNKNOWN or i is UNKNOWN or v is None:
                return UNKNOWN
            if isinstance(v, (list, str)):
                if not isinstance(i, int) or isinstance(i, bool):
                    raise EvalFailure(f"an index into a {type_name(v)} must be a whole number, got {type_name(i)}", e)
                return v[i] if -len(v) <= i < len(v) else UNKNOWN
            if isinstance(v, dict):
                return v.get(i, UNKNOWN) if isinstance(i, str) else UNKNOWN
            raise EvalFailure(f"a {type_name(v)} cannot be indexed", e)

        return index_

    # ---- operators ----------------------------------------------------------------------------------

    def _boolop(self, e: ast.BoolOp, scope: dict[str, int]) -> Fn:
        fns = [self.compile(x, scope) for x in e.operands]
        nodes = e.operands
        stop = e.op == "or"  # the value that decides: True for `or`, False for `and`

        def boolop(env: Env) -> Any:
            result = not stop
            for f, node in zip(fns, nodes):
                v = f(env)
                if v is stop:
                    return stop
                if v is not (not stop):
                    v = truth(v, node)
                    if v is UNKNOWN:
                        result = UNKNOWN
                    elif v is stop:
                        return stop
            return result

        return boolop

    def _compare(self, e: ast.Compare, scope: dict[str, int]) -> Fn:
        left, right, op = self.compile(e.left, scope), self.compile(e.right, scope), e.op
        if op == "==" or op == "!=":
            want = op == "=="

            def eq(env: Env) -> Any:
                a, b = left(env), right(env)
                if a is UNKNOWN or b is UNKNOWN:
                    return UNKNOWN
                return _strict_eq(a, b) is want

            return eq
        if op == "in":

            def member(env: Env) -> Any:
                a, b = left(env), right(env)
                if b.__class__ is str and a.__class__ is str:
                    return a in b
                return _member(a, b, e)

            return member
        if op == "not in":

            def not_member(env: Env) -> Any:
                v = _member(left(env), right(env), e)
                return UNKNOWN if v is UNKNOWN else not v

            return not_member
        return lambda env: _order(op, left(env), right(env), e)

    def _arith(self, e: ast.Arith, scope: dict[str, int]) -> Fn:
        left, right, plus = self.compile(e.left, scope), self.compile(e.right, scope), e.op == "+"

        def arith(env: Env) -> Any:
            a, b = left(env), right(env)
            if a is UNKNOWN or b is UNKNOWN:
                return UNKNOWN
            nums = isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool)
            if nums:
                return a + b if plus else a - b
            if plus and ((isinstance(a, str) and isinstance(b, str)) or (isinstance(a, list) and isinstance(b, list))):
                env.charge(1 + (len(a) + len(b)) // 64)
                return a + b
            raise EvalFailure(f"`{e.op}` cannot combine {type_name(a)} and {type_name(b)}", e)

        return arith

    def _call(self, e: ast.Call, scope: dict[str, int]) -> Fn:
        fn = REGISTRY[e.func]
        bound = bind_arguments(fn, list(e.args), dict(e.kwargs))
        assert not isinstance(bound, str)  # the checker guarantees a well-formed call
        args = [self.compile(a, scope) if _is_node(a) else (lambda env, a=a: a) for a in bound]
        impl, name, sees_unknown, cost = fn.impl, fn.name, fn.sees_unknown, fn.cost

        def call(env: Env) -> Any:
            values = [a(env) for a in args]
            if not sees_unknown and any(v is UNKNOWN for v in values):
                return UNKNOWN
            env.charge(cost(values) if cost is not None else 1)
            try:
                return impl(*values)
            except EvalFailure:
                raise
            except Exception as exc:  # a built-in must never crash the engine: fail closed
                raise EvalFailure(f"`{name}` failed: {type(exc).__name__}: {exc}", e) from None

        return call

    # ---- quantifiers --------------------------------------------------------------------------------

    def _collection(self, b: ast.Binding, scope: dict[str, int]) -> Fn:
        coll = self.compile(b.collection, scope)

        def get(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN or xs is None:
                return UNKNOWN
            if not isinstance(xs, list):
                raise EvalFailure(f"`{b.collection.span.text}` must be a list, got {type_name(xs)}", b.collection)
            env.charge(len(xs) + 1)
            return xs

        return get

    def _quantifier(self, e: ast.Quantifier, bindings: list[ast.Binding], scope: dict[str, int]) -> Fn:
        first, rest = bindings[0], bindings[1:]
        coll = self._collection(first, scope)
        slot = self.nslots
        self.nslots += 1
        self.binding_slots[id(first)] = slot
        inner = {**scope, first.name: slot}
        body = (
            self._quantifier(e, rest, inner) if rest else self.compile(e.body, inner)
        )
        body_node: ast.Expr = e.body
        kind = e.kind
        if kind == "count" and rest:
            kind = "sum"  # count over several bindings: add up the inner counts
        recording = self.recording
        bind_key = ("bind", id(first))

        if kind == "any" or kind == "all":
            decide = kind == "any"  # the body value that decides the whole quantifier

            def quant(env: Env) -> Any:
                xs = coll(env)
                if xs is UNKNOWN:
                    return UNKNOWN
                slots = env.slots
                first_unknown = -1
                for i, x in enumerate(xs):
                    slots[slot] = x
                    v = body(env)
                    if v is not decide and v is not (not decide):
                        v = truth(v, body_node) if not rest else v
                        if v is UNKNOWN:
                            if first_unknown < 0:
                                first_unknown = i
                            continue
                    if v is decide:
                        if recording:
                            env.rec[bind_key] = i  # type: ignore[index]
                        return decide
                if first_unknown >= 0:
                    if recording:  # replay the undecided element so the trace shows why
                        slots[slot] = xs[first_unknown]
                        env.rec[bind_key] = first_unknown  # type: ignore[index]
                        body(env)
                    return UNKNOWN
                if recording and xs:
                    env.rec[bind_key] = len(xs) - 1  # type: ignore[index]
                return not decide

            return quant

        def count(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            slots = env.slots
            n = 0
            unknown = False
            for x in xs:
                slots[slot] = x
                v = body(env)
                if kind == "sum":
                    if v is UNKNOWN:
                        unknown = True
                    else:
                        n += v
                    continue
                if v is not True and v is not False:
                    v = truth(v, body_node)
                if v is UNKNOWN:
                    unknown = True
                elif v:
                    n += 1
            return UNKNOWN if unknown else n

        return count

    def _comprehension(self, e: ast.Comprehension, scope: dict[str, int]) -> Fn:
        coll = self._collection(ast.Binding(e.name, e.collection, span=e.span), scope)
        slot = self.nslots
        self.nslots += 1
        inner = {**scope, e.name: slot}
        element = self.compile(e.element, inner)
        cond = self.compile(e.condition, inner) if e.condition is not None else None
        cond_node = e.condition

        def comprehension(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            slots = env.slots
            out = []
            for x in xs:
                slots[slot] = x
                if cond is not None:
                    keep = cond(env)
                    if keep is not True:
                        if keep is False:
                            continue
                        keep = truth(keep, cond_node)  # type: ignore[arg-type]
                        if keep is UNKNOWN:
                            return UNKNOWN  # membership undecidable: the list itself is unknown
                        if not keep:
                            continue
                v = element(env)
                if v is UNKNOWN:
                    return UNKNOWN
                out.append(v)
            return out

        return comprehension


def _is_node(value: Any) -> bool:
    return hasattr(value, "span") and not isinstance(value, (str, int, float, bool, type(None), tuple, list))
