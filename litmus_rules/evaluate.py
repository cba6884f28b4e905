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

    __slots__ = ("facts", "batch", "slots", "lets", "derived", "budget", "rec", "hint")

    def __init__(self, facts: Mapping[str, Any], batch: Mapping[str, Any], nslots: int, nlets: int, budget: int):
        self.facts = facts
        self.batch = batch
        self.slots: list[Any] = [UNBOUND] * nslots
        self.lets: list[Any] = [_UNSET] * nlets
        self.derived: dict[str, Any] = {}
        self.budget = budget
        self.rec: dict[Any, Any] | None = None
        self.hint: list[Any] | None = None  # a recording run: the fast run's slots, where witnesses are

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

    def __init__(
        self,
        params: Mapping[str, Any],
        let_index: Mapping[str, int],
        recording: bool,
        _slot_counter: list[int] | None = None,
    ) -> None:
        self.params = params
        self.let_index = let_index
        self.recording = recording
        self._slot_counter = _slot_counter if _slot_counter is not None else [0]
        self.let_fns: list[Fn] = []
        self.binding_slots: dict[int, int] = {}  # id(ast.Binding) -> slot, for message placeholders
        # A recording compiler's view of the fast compiler's binding slots (set by the engine).
        self.hint_slots: dict[int, int] = {}
        # A recording compiler searches quantifier loops with fast closures and records only the
        # element that decided: a trace shows the witness, and costs one body evaluation per loop.
        self.twin: Compiler | None = None
        if recording:
            self.twin = Compiler(params, let_index, False, self._slot_counter)
            self.twin.let_fns = self.let_fns

    @property
    def nslots(self) -> int:
        return self._slot_counter[0]

    def _new_slot(self) -> int:
        self._slot_counter[0] += 1
        return self._slot_counter[0] - 1

    # scope: name -> slot, innermost last
    def compile(self, node: ast.Expr, scope: dict[str, int]) -> Fn:
        fn = self._compile(node, scope)
        if not self.recording or isinstance(node, ast.Literal):  # a literal's value is in the source
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
        if self._is_fact(node.name, scope):
            return self._fact_path(node.name, keys, e)
        if node.name in scope and len(keys) == 1:
            slot, k = scope[node.name], keys[0]

            def slot_field(env: Env) -> Any:
                v = env.slots[slot]
                if v.__class__ is dict:
                    return v.get(k, UNKNOWN)
                return _field_of(v, k, e)

            return slot_field
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

    def _is_fact(self, name: str, scope: dict[str, int]) -> bool:
        return not (name in scope or name in self.let_index or name in self.params or name in DERIVED)

    def _fact_path(self, root: str, keys: list[str], e: ast.Expr) -> Fn:
        def fact_path(env: Env) -> Any:
            v = env.facts.get(root, UNKNOWN)
            for k in keys:
                if v.__class__ is dict:
                    v = v.get(k, UNKNOWN)
                else:
                    v = _field_of(v, k, e)
                    if v is UNKNOWN:
                        return v
            return v

        return fact_path

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

    def _slot_field(self, e: ast.Expr, scope: dict[str, int]) -> tuple[int, str] | None:
        """`x.k` with `x` a quantifier variable: compare closures read it inline (the hot loop)."""
        if self.recording or not isinstance(e, ast.Field) or not isinstance(e.obj, ast.Name):
            return None
        if e.obj.name not in scope:
            return None
        return scope[e.obj.name], e.name

    def _compare(self, e: ast.Compare, scope: dict[str, int]) -> Fn:
        left, right, op = self.compile(e.left, scope), self.compile(e.right, scope), e.op
        lsf, rsf = self._slot_field(e.left, scope), self._slot_field(e.right, scope)
        ls, lk = lsf if lsf else (0, "")
        rs, rk = rsf if rsf else (0, "")
        if op == "==" or op == "!=":
            want = op == "=="

            def eq(env: Env) -> Any:
                if lsf:
                    a = env.slots[ls]
                    a = a.get(lk, UNKNOWN) if a.__class__ is dict else _field_of(a, lk, e.left)
                else:
                    a = left(env)
                b = right(env)
                if a is UNKNOWN or b is UNKNOWN:
                    return UNKNOWN
                return _strict_eq(a, b) is want

            return eq
        if op == "in":

            def member(env: Env) -> Any:
                if lsf:
                    a = env.slots[ls]
                    a = a.get(lk, UNKNOWN) if a.__class__ is dict else _field_of(a, lk, e.left)
                else:
                    a = left(env)
                if rsf:
                    b = env.slots[rs]
                    b = b.get(rk, UNKNOWN) if b.__class__ is dict else _field_of(b, rk, e.right)
                else:
                    b = right(env)
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

    def _collection(self, b: ast.Binding, scope: dict[str, int], hoisted: int | None = None) -> Fn:
        if hoisted is not None:  # evaluated once by the enclosing loop (see _quantifier), charged per use

            def hoisted_get(env: Env) -> Any:
                xs = env.slots[hoisted]
                if xs.__class__ is list:
                    env.budget -= len(xs) + 1
                    if env.budget < 0:
                        env.charge(0)
                return xs

            return hoisted_get
        coll = self.compile(b.collection, scope)

        def get(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN or xs is None:
                return UNKNOWN
            if not isinstance(xs, list):
                raise EvalFailure(f"`{b.collection.span.text}` must be a list, got {type_name(xs)}", b.collection)
            env.budget -= len(xs) + 1
            if env.budget < 0:
                env.charge(0)  # raises BudgetExceeded with its message
            return xs

        return get

    def _quantifier(
        self, e: ast.Quantifier, bindings: list[ast.Binding], scope: dict[str, int], hoisted: int | None = None
    ) -> Fn:
        """`any x in xs, y in ys: body` compiles as nested single-binding loops."""
        first, rest = bindings[0], bindings[1:]
        coll = self._collection(first, scope, hoisted)
        slot = self._new_slot()
        self.binding_slots[id(first)] = slot
        if self.recording:
            return self._recording_quantifier(e, first, rest, coll, slot, scope)
        inner = {**scope, first.name: slot}
        if not rest:
            if e.kind != "count":
                fused = self._fused_loop(e, first, slot, coll, scope, inner, e.kind == "any")
                if fused is not None:
                    return fused
            return self._loop(e, rest, coll, slot, self.compile(e.body, inner))
        if first.name in _names(rest[0].collection):
            return self._loop(e, rest, coll, slot, self._quantifier(e, rest, inner))
        # `any s in A, c in B`: B does not depend on s, so read it once, not once per s
        hoist = self._new_slot()
        inner_coll = self._collection(rest[0], scope)
        loop = self._loop(e, rest, coll, slot, self._quantifier(e, rest, inner, hoisted=hoist))

        def hoisting(env: Env) -> Any:
            env.slots[hoist] = inner_coll(env)
            return loop(env)

        return hoisting

    def _loop(self, e: ast.Quantifier, rest: list[ast.Binding], coll: Fn, slot: int, body: Fn) -> Fn:
        body_node: ast.Expr = e.body
        kind = e.kind
        if kind == "count" and rest:
            kind = "sum"  # count over several bindings: add up the inner counts

        if kind == "any" or kind == "all":
            decide = kind == "any"  # the body value that decides the whole quantifier
            other = not decide

            def quant(env: Env) -> Any:
                xs = coll(env)
                if xs is UNKNOWN:
                    return UNKNOWN
                slots = env.slots
                unknown = False
                for x in xs:
                    slots[slot] = x
                    v = body(env)
                    if v is other:
                        continue
                    if v is not decide:
                        v = truth(v, body_node) if not rest else v
                        if v is UNKNOWN:
                            unknown = True
                            continue
                    if v is decide:
                        return decide
                return UNKNOWN if unknown else other

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

    def _recording_quantifier(
        self, e: ast.Quantifier, first: ast.Binding, rest: list[ast.Binding], coll: Fn, slot: int, scope: dict[str, int]
    ) -> Fn:
        assert self.twin is not None
        inner = {**scope, first.name: slot}
        if rest:
            search, replay = self.twin._quantifier(e, rest, inner), self._quantifier(e, rest, inner)
        else:
            search, replay = self.twin.compile(e.body, inner), self.compile(e.body, inner)
        body_node, kind, bind_key = e.body, e.kind, ("bind", id(first))
        decide = kind == "any"

        hint_slots, binding_id = self.hint_slots, id(first)

        def replay_hint(env: Env, xs: list[Any]) -> bool:
            """Try the fast run's witness first: its slot still holds the element that decided."""
            fast_slot = hint_slots.get(binding_id)
            if env.hint is None or fast_slot is None:
                return False
            witness = env.hint[fast_slot]
            for i, x in enumerate(xs):
                if x is witness:
                    # keep nothing from a wrong guess: neither its records nor the lets it computed
                    outer, env.rec, lets = env.rec, {}, list(env.lets)
                    env.slots[slot] = x
                    try:
                        v = replay(env)
                        v = v if rest else truth(v, body_node)
                    except EvalFailure:
                        v = None
                    assert outer is not None and env.rec is not None
                    guessed, env.rec = env.rec, outer
                    if v is decide:
                        outer.update(guessed)
                        outer[bind_key] = i
                        return True
                    env.lets[:] = lets
                    return False
            return False

        def quant(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            if kind != "count" and replay_hint(env, xs):
                return decide
            slots, rec = env.slots, env.rec
            assert rec is not None
            found = first_unknown = -1
            total, unknown = 0, False
            for i, x in enumerate(xs):
                slots[slot] = x
                try:
                    v = search(env)
                    if not rest:
                        v = truth(v, body_node)
                except EvalFailure:
                    found = i  # replay it recorded, so the trace shows where it failed
                    break
                if kind == "count":
                    if v is UNKNOWN:
                        unknown = True
                    else:
                        total += v if rest else int(v)
                elif v is decide:
                    found = i
                    break
                elif v is UNKNOWN and first_unknown < 0:
                    first_unknown = i
            pick = found if found >= 0 else first_unknown if first_unknown >= 0 else len(xs) - 1
            if pick >= 0:
                slots[slot] = xs[pick]
                rec[bind_key] = pick
                replay(env)
            if kind == "count":
                return UNKNOWN if unknown else total
            if found >= 0:
                return decide
            return UNKNOWN if first_unknown >= 0 else not decide

        return quant

    def _recording_comprehension(self, e: ast.Comprehension, coll: Fn, slot: int, inner: dict[str, int]) -> Fn:
        assert self.twin is not None
        element, cond = self.twin.compile(e.element, inner), None
        if e.condition is not None:
            cond = self.twin.compile(e.condition, inner)
        rec_element = self.compile(e.element, inner)
        rec_cond = self.compile(e.condition, inner) if e.condition is not None else None
        cond_node = e.condition

        def comprehension(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            slots = env.slots
            out = []
            for x in xs:
                slots[slot] = x
                try:
                    keep = truth(cond(env), cond_node) if cond is not None else True  # type: ignore[arg-type]
                    v = element(env) if keep is True else None
                except EvalFailure:
                    keep = v = UNKNOWN
                if keep is UNKNOWN or v is UNKNOWN:  # record the element that made the list unknown
                    if rec_cond is not None:
                        rec_cond(env)
                    rec_element(env)
                    return UNKNOWN
                if keep is True:
                    out.append(v)
            return out

        return comprehension

    def _fused_loop(
        self,
        e: ast.Quantifier,
        binding: ast.Binding,
        slot: int,
        coll: Fn,
        outer: dict[str, int],
        inner: dict[str, int],
        decide: bool,
    ) -> Fn | None:
        """`any x in xs: x.k in E` (or `==`) as one loop: the rule engine's hottest shape.

        Each side of the comparison is read inline when it is `var.field`, or evaluated once before
        the loop when it does not mention the loop variable. Same semantics as the general path.
        """
        body = e.body
        if self.recording or not isinstance(body, ast.Compare) or body.op not in ("in", "=="):
            return None
        sides: list[tuple[int, str] | Fn] = []
        for side in (body.left, body.right):
            field = self._slot_field(side, inner)
            if binding.name not in _names(side):
                sides.append(self.compile(side, outer))  # loop-invariant: evaluated once
            elif field is not None:
                sides.append(field)
            else:
                return None
        one = self._fused_one(sides, slot, coll, body, decide)
        if one is not None:
            return one
        (lsf, lfn), (rsf, rfn) = [(s, None) if isinstance(s, tuple) else (None, s) for s in sides]
        ls, lk = lsf if lsf else (0, "")
        rs, rk = rsf if rsf else (0, "")
        member = body.op == "in"
        left_node, right_node = body.left, body.right

        def fused(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            if not xs:
                return not decide
            a = lfn(env) if lfn is not None else None  # invariant sides, once per loop
            b = rfn(env) if rfn is not None else None
            slots = env.slots
            unknown = False
            for x in xs:
                slots[slot] = x
                if lsf:
                    o = slots[ls]
                    a = o.get(lk, UNKNOWN) if o.__class__ is dict else _field_of(o, lk, left_node)
                if rsf:
                    o = slots[rs]
                    b = o.get(rk, UNKNOWN) if o.__class__ is dict else _field_of(o, rk, right_node)
                if member:
                    v = a in b if (a.__class__ is str and b.__class__ is str) else _member(a, b, body)
                elif a is UNKNOWN or b is UNKNOWN:
                    v = UNKNOWN
                else:
                    v = _strict_eq(a, b)
                if v is decide:
                    return decide
                if v is UNKNOWN:
                    unknown = True
            return UNKNOWN if unknown else not decide

        return fused

    def _fused_one(
        self, sides: list[tuple[int, str] | Fn], slot: int, coll: Fn, body: ast.Compare, decide: bool
    ) -> Fn | None:
        """The commonest loop of all: `x.k in E` / `x.k == E` / `E in x.k` with E loop-invariant."""
        (left, right) = sides
        if isinstance(left, tuple) and not isinstance(right, tuple) and left[0] == slot:
            (_, key), invariant, loop_left = left, right, True
        elif isinstance(right, tuple) and not isinstance(left, tuple) and right[0] == slot:
            (_, key), invariant, loop_left = right, left, False
        else:
            return None
        node = body.left if loop_left else body.right
        member, other = body.op == "in", not decide

        def fused_one(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            if not xs:
                return other
            inv = invariant(env)
            if inv is UNKNOWN:
                return UNKNOWN  # every comparison would be unknown
            inv_str = inv.__class__ is str
            unknown = False
            for x in xs:
                a = x.get(key, UNKNOWN) if x.__class__ is dict else _field_of(x, key, node)
                if a is UNKNOWN:
                    unknown = True
                    continue
                if member:
                    if loop_left:
                        v = (a in inv) if (inv_str and a.__class__ is str) else _member(a, inv, body)
                    else:
                        v = (inv in a) if (inv_str and a.__class__ is str) else _member(inv, a, body)
                else:
                    v = _strict_eq(a, inv)
                if v is decide:
                    env.slots[slot] = x
                    return decide
            return UNKNOWN if unknown else other

        return fused_one

    def _comprehension(self, e: ast.Comprehension, scope: dict[str, int]) -> Fn:
        coll = self._collection(ast.Binding(e.name, e.collection, span=e.span), scope)
        slot = self._new_slot()
        inner = {**scope, e.name: slot}
        if self.recording:
            return self._recording_comprehension(e, coll, slot, inner)
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


def _names(e: ast.Expr) -> set[str]:
    """Every bare name an expression mentions (a superset of its free variables)."""
    out: set[str] = set()
    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            out.add(node.name)
        stack.extend(ast.children(node))
    return out


def _is_node(value: Any) -> bool:
    return hasattr(value, "span") and not isinstance(value, (str, int, float, bool, type(None), tuple, list))
