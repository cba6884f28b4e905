"""AST -> closures: names, paths, operators and calls (loops are in `_loops.py`)."""

from __future__ import annotations

from typing import Any, Mapping

from litmus_rules.errors import LitmusError
from litmus_rules.lang import ast
from litmus_rules.lang.builtins import bind_arguments
from litmus_rules.lang.environment import Environment
from litmus_rules.lang.evaluate._loops import LoopCompiler
from litmus_rules.lang.evaluate._runtime import _UNSET, UNBOUND, Env, Fn, _field_of, _member, _order, _strict_eq, grown, truth
from litmus_rules.lang.values import INTERNAL_ERROR, UNKNOWN, EvalFailure, type_name


class Compiler(LoopCompiler):
    """AST -> closures. One instance per ruleset and mode (fast or recording)."""

    def __init__(
        self,
        environment: Environment,
        params: Mapping[str, Any],
        let_index: Mapping[str, int],
        recording: bool,
        _slot_counter: list[int] | None = None,
    ) -> None:
        self.environment = environment
        self.builtins = environment.builtins
        self.derived = environment.derived
        self.params = params
        self.let_index = let_index
        self.recording = recording
        self._slot_counter = _slot_counter if _slot_counter is not None else [0]
        self.let_fns: list[Fn] = []
        self.binding_slots: dict[int, int] = {}  # id(ast.Binding) -> slot, for message placeholders
        self.local_values: dict[int, Fn] = {}  # slot of a `where` name -> its value's closure
        # A recording compiler's view of the fast compiler's binding and result slots (set by the engine).
        self.hint_slots: dict[int, int] = {}
        self.result_slots: dict[int, int] = {}  # id(first ast.Binding) -> slot of a top-level loop's result
        self.hint_results: dict[int, int] = {}
        # A recording compiler searches quantifier loops with fast closures and records only the
        # element that decided: a trace shows the witness, and costs one body evaluation per loop.
        self.twin: Compiler | None = None
        # recording closures that store their own node's value (fact paths): `compile` does not
        # wrap them in `record` again (one call less for every path a trace shows)
        self._recorders: set[Fn] = set()
        if recording:
            self.twin = Compiler(environment, params, let_index, False, self._slot_counter)
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
        if fn in self._recorders:
            return fn
        key = id(node)
        if isinstance(node, ast.Name) and scope.get(node.name, -1) in self.local_values:

            def record_local(env: Env, fn: Fn = fn, key: int = key) -> Any:
                # An unknown `where` name is explained by its value's own node (a child of the
                # quantifier in the trace): the name is not a fact path, so it is left unrecorded.
                value = fn(env)
                if value is not UNKNOWN:
                    env.rec[key] = value  # type: ignore[index]
                return value

            return record_local

        def record(env: Env, fn: Fn = fn, key: int = key) -> Any:
            try:
                value = fn(env)
            except EvalFailure as exc:
                env.rec.setdefault(("error", key), exc.message)  # type: ignore[union-attr]
                raise
            env.rec[key] = value  # type: ignore[index]
            return value

        return record

    def _compile(self, e: ast.Expr, scope: dict[str, int]) -> Fn:  # noqa: C901 - one branch per node
        if isinstance(e, ast.Literal):
            value = e.value
            return lambda env: value
        if isinstance(e, ast.ListExpr):
            if all(isinstance(x, ast.Literal) for x in e.items):
                # a list of literals (`s.kind in ["substring", "regex"]`), often read once per element
                # of a loop: built once, and copied for each reader (a value is never shared)
                const = [x.value for x in e.items]
                return lambda env: const.copy()
            items = [self.compile(x, scope) for x in e.items]

            def list_(env: Env) -> Any:
                # every item is evaluated (and recorded) before an unknown one makes the list unknown;
                # (loops, not a comprehension: no frame of its own per list)
                out = []
                unknown = False
                for f in items:
                    v = f(env)
                    if v is UNKNOWN:
                        unknown = True
                    out.append(v)
                return UNKNOWN if unknown else out

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
            return self._quantifier(e, list(e.loops), scope)
        if isinstance(e, ast.Comprehension):
            return self._comprehension(e, scope)
        raise AssertionError(f"unhandled node {type(e).__name__}")  # pragma: no cover

    # ---- names and paths ----------------------------------------------------------------------------

    def _root(self, name: str, scope: dict[str, int]) -> Fn:
        if name in scope:
            slot = scope[name]
            value = self.local_values.get(slot)
            if value is not None:
                return _lazy(slot, value)
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
        derived = self.derived.get(name)
        if derived is not None:
            compute = derived.compute
            return lambda env: env.derive(name, compute)
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
        local = node.name in scope and scope[node.name] in self.local_values
        if not keys:
            if self.recording and not local:  # (a `where` name is recorded by `compile`'s record_local)
                return self._recording_root(e, root)
            return root
        keys.reverse()
        if self.recording:
            # a path through a `where` name names no fact (the trace knows no path for the name):
            # its value's own node names what is missing
            slot = scope[node.name] if node.name in scope and not local else None
            return self._recording_path(e, root, keys, not local, slot)
        if self._is_fact(node.name, scope):
            return self._fact_path(node.name, keys, e)
        if node.name in scope and len(keys) == 1 and scope[node.name] not in self.local_values:
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
        return not (name in scope or name in self.let_index or name in self.params or name in self.derived)

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

    def _recording_path(
        self, e: ast.Expr, root: Fn, keys: list[str], named: bool = True, slot: int | None = None
    ) -> Fn:
        """A path's getter that records its value (and its failure) as `compile`'s `record` would.
        `slot`: the root is a loop variable, read from its slot here (one call less per read)."""
        # the trace names the path as missing when this is set (a key no node has, when not `named`)
        missing: tuple[str, int] = ("missing", id(e)) if named else ("missing", -1)
        key, error = id(e), ("error", id(e))

        def get(env: Env) -> Any:
            try:
                v = env.slots[slot] if slot is not None else root(env)
                for k in keys:
                    v = v.get(k, UNKNOWN) if v.__class__ is dict else _field_of(v, k, e)
                    if v is UNKNOWN:
                        env.rec[missing] = True  # type: ignore[index]
                        break
            except EvalFailure as exc:
                env.rec.setdefault(error, exc.message)  # type: ignore[union-attr]
                raise
            env.rec[key] = v  # type: ignore[index]
            return v

        self._recorders.add(get)
        return get

    def _recording_root(self, e: ast.Expr, root: Fn) -> Fn:
        """A name's getter that records its value (and its failure) as `compile`'s `record` would."""
        key, error = id(e), ("error", id(e))

        def get_root(env: Env) -> Any:
            try:
                v = root(env)
            except EvalFailure as exc:
                env.rec.setdefault(error, exc.message)  # type: ignore[union-attr]
                raise
            env.rec[key] = v  # type: ignore[index]
            return v

        self._recorders.add(get_root)
        return get_root

    def _index(self, e: ast.Index, scope: dict[str, int]) -> Fn:
        obj, index = self.compile(e.obj, scope), self.compile(e.index, scope)

        def index_(env: Env) -> Any:
            v, i = obj(env), index(env)
            if v is UNKNOWN or i is UNKNOWN or v is None:
                return UNKNOWN
            if v.__class__ is dict and i.__class__ is str:  # the common case, without the isinstance chain
                return v.get(i, UNKNOWN)
            if v.__class__ is list and i.__class__ is int:
                return v[i] if -len(v) <= i < len(v) else UNKNOWN
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
        if e.obj.name not in scope or scope[e.obj.name] in self.local_values:
            return None
        return scope[e.obj.name], e.name

    def _compare(self, e: ast.Compare, scope: dict[str, int]) -> Fn:
        left, right, op = self.compile(e.left, scope), self.compile(e.right, scope), e.op
        lsf, rsf = self._slot_field(e.left, scope), self._slot_field(e.right, scope)
        ls, lk = lsf if lsf else (0, "")
        rs, rk = rsf if rsf else (0, "")
        if op == "==" or op == "!=":
            want = op == "=="

            if not lsf:

                def eq_(env: Env) -> Any:
                    a, b = left(env), right(env)
                    if a is UNKNOWN or b is UNKNOWN:
                        return UNKNOWN
                    # `_strict_eq`, inlined: true is not 1, and 1 equals 1.0
                    return (bool(a == b) and (a.__class__ is bool) == (b.__class__ is bool)) is want

                return eq_

            def eq(env: Env) -> Any:
                a = env.slots[ls]
                a = a.get(lk, UNKNOWN) if a.__class__ is dict else _field_of(a, lk, e.left)
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
            # (two branches, so that each `a + b` is str + str or list + list to the type checker)
            if plus and isinstance(a, str) and isinstance(b, str):
                grown(len(a) + len(b), "text", e)
                env.charge(1 + (len(a) + len(b)) // 64)
                return a + b
            if plus and isinstance(a, list) and isinstance(b, list):
                grown(len(a) + len(b), "list", e)
                env.charge(1 + (len(a) + len(b)) // 64)
                return a + b
            raise EvalFailure(f"`{e.op}` cannot combine {type_name(a)} and {type_name(b)}", e)

        return arith

    def _call(self, e: ast.Call, scope: dict[str, int]) -> Fn:
        fn = self.builtins[e.func]
        bound = bind_arguments(fn, list(e.args), dict(e.kwargs))
        assert not isinstance(bound, str)  # the checker guarantees a well-formed call
        args = [self.compile(a, scope) if _is_node(a) else (lambda env, a=a: a) for a in bound]
        impl, name, sees_unknown, cost = fn.impl, fn.name, fn.sees_unknown, fn.cost

        def call(env: Env) -> Any:
            # every argument is evaluated (and recorded) before an unknown one makes the call unknown;
            # (a loop, not a comprehension: no frame of its own per call)
            values = []
            unknown = False
            for a in args:
                v = a(env)
                if v is UNKNOWN:
                    unknown = True
                values.append(v)
            if unknown and not sees_unknown:
                return UNKNOWN
            env.budget -= cost(values) if cost is not None else 1  # (`env.charge`, inlined)
            if env.budget < 0:
                env.charge(0)  # raises BudgetExceeded with its message
            try:
                return impl(*values)
            except EvalFailure:
                raise
            except LitmusError as exc:  # the library's own error: its message is for users already
                raise EvalFailure(f"`{name}` failed: {exc.message}", e) from None
            except Exception as exc:  # a built-in must never crash the engine: fail closed
                raise EvalFailure(f"`{name}` failed [{INTERNAL_ERROR}]: {exc}", e) from None

        return call

    # ---- quantifiers --------------------------------------------------------------------------------


def _lazy(slot: int, value: Fn) -> Fn:
    """A `where` name: computed at its first read for the current element, then read from its slot.
    Computed on demand, a name means exactly what its expression would mean where it is read: a body
    that never reads it (an `and` decided before it) never computes it, nor fails on it."""

    def local(env: Env) -> Any:
        v = env.slots[slot]
        if v is _UNSET or v is UNBOUND:  # UNBOUND: a message read before any element was bound
            v = env.slots[slot] = value(env)
        return v

    return local


def _is_node(value: Any) -> bool:
    return hasattr(value, "span") and not isinstance(value, (str, int, float, bool, type(None), tuple, list))
