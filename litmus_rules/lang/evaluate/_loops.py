"""Compiling quantifiers and comprehensions: the loops where the evaluation time goes.

A mixin of `Compiler`: plain loops (the fused ones for the commonest shapes are in `_fused.py`),
hoisting of inner collections that do not depend on the outer variable, and the recording versions
that search with fast closures and replay only the element that decided.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang.evaluate._fused import FusedLoops
from litmus_rules.lang.evaluate._runtime import _UNSET, Env, Fn, _field_of, truth
from litmus_rules.lang.values import UNKNOWN, EvalFailure, type_name

if TYPE_CHECKING:
    from litmus_rules.lang.evaluate._compiler import Compiler


class _Deferred:
    """A hoisted collection that failed: raised where the nested loops would first have read it."""

    __slots__ = ("failure",)

    def __init__(self, failure: EvalFailure) -> None:
        self.failure = failure


class LoopCompiler(FusedLoops):
    """The loop half of `Compiler` (see `_compiler.py` for the attributes it relies on)."""

    recording: bool
    twin: Compiler | None
    binding_slots: dict[int, int]
    local_values: dict[int, Fn]
    let_index: Mapping[str, int]
    let_fns: list[Fn]
    hint_slots: dict[int, int]
    result_slots: dict[int, int]
    hint_results: dict[int, int]

    if TYPE_CHECKING:

        def compile(self, node: ast.Expr, scope: dict[str, int]) -> Fn: ...
        def _is_fact(self, name: str, scope: dict[str, int]) -> bool: ...
        def _new_slot(self) -> int: ...
        def _slot_field(self, e: ast.Expr, scope: dict[str, int]) -> tuple[int, str] | None: ...

    def _collection(self, b: ast.Binding, scope: dict[str, int], hoisted: int | None = None) -> Fn:
        if hoisted is not None:  # evaluated once by the enclosing loop (see _quantifier), charged per use

            def hoisted_get(env: Env) -> Any:
                xs = env.slots[hoisted]
                if xs.__class__ is _Deferred:
                    raise xs.failure
                if xs.__class__ is list:
                    env.budget -= len(xs) + 1
                    if env.budget < 0:
                        env.charge(0)
                return xs

            return hoisted_get
        path = _fact_keys(b.collection) if not self.recording else None
        if path is not None and path[0] not in scope and self._is_fact(path[0], scope):
            root, keys = path[0], path[1:]

            def fact_list(env: Env) -> Any:  # a fact path and the list check in one closure
                xs = env.facts.get(root, UNKNOWN)
                for k in keys:
                    xs = xs.get(k, UNKNOWN) if xs.__class__ is dict else _field_of(xs, k, b.collection)
                if xs.__class__ is not list:
                    if xs is UNKNOWN or xs is None:
                        return UNKNOWN
                    raise EvalFailure(f"`{b.collection.span.text}` must be a list, got {type_name(xs)}", b.collection)
                env.budget -= len(xs) + 1
                if env.budget < 0:
                    env.charge(0)
                return xs

            return fact_list
        name = b.collection.name if isinstance(b.collection, ast.Name) and not self.recording else None
        if name is not None and name not in scope and name in self.let_index:
            i, let_fns = self.let_index[name], self.let_fns

            def let_list(env: Env) -> Any:  # a let read and the list check in one closure
                xs = env.lets[i]
                if xs is _UNSET:
                    xs = env.lets[i] = let_fns[i](env)
                if xs.__class__ is not list:
                    if xs is UNKNOWN or xs is None:
                        return UNKNOWN
                    if not isinstance(xs, list):
                        raise EvalFailure(f"`{b.collection.span.text}` must be a list, got {type_name(xs)}", b.collection)
                env.budget -= len(xs) + 1
                if env.budget < 0:
                    env.charge(0)
                return xs

            return let_list
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
        """`any x in xs, y in ys: body` compiles as nested single-binding loops.

        A top-level `any`/`all` (outside every loop, so evaluated at most once per episode) also
        leaves its result in a slot: a recording run that finds it decided nothing skips its search.
        """
        fn = self._quantifier_fn(e, bindings, scope, hoisted)
        if self.recording or scope or e.kind == "count":
            return fn
        result = self._new_slot()
        self.result_slots[id(bindings[0])] = result

        def remembering(env: Env) -> Any:
            value = env.slots[result] = fn(env)
            return value

        return remembering

    def _quantifier_fn(
        self, e: ast.Quantifier, bindings: list[ast.Binding], scope: dict[str, int], hoisted: int | None
    ) -> Fn:
        first, rest = bindings[0], bindings[1:]
        coll = self._collection(first, scope, hoisted)
        slot = self._new_slot()
        self.binding_slots[id(first)] = slot
        if self.recording:
            return self._recording_quantifier(e, first, rest, coll, slot, scope)
        inner = {**scope, first.name: slot}
        if not rest:
            if e.kind != "count" and not e.locals:
                fused = self._fused_loop(e, first, slot, coll, scope, inner, e.kind == "any")
                if fused is not None:
                    return fused
            return self._loop(e, rest, coll, slot, self._body(e, inner))
        if first.name in ast.names(rest[0].collection):
            return self._loop(e, rest, coll, slot, self._quantifier(e, rest, inner))
        # `any s in A, c in B`: B does not depend on s, so read it once, not once per s
        hoist = self._new_slot()
        inner_coll = self._collection(rest[0], scope)
        pair = self._fused_pair(e, first, rest, coll, inner_coll, slot, scope) if not e.locals else None
        if pair is not None:
            return pair
        loop = self._loop(e, rest, coll, slot, self._quantifier(e, rest, inner, hoisted=hoist))

        def hoisting(env: Env) -> Any:
            try:
                env.slots[hoist] = inner_coll(env)
            except EvalFailure as exc:  # fails where the nested loops would first read it, if ever
                env.slots[hoist] = _Deferred(exc)
            return loop(env)

        return hoisting

    def _body(self, e: ast.Quantifier, scope: dict[str, int]) -> Fn:
        """The innermost body, after its `where` names: each gets a slot, emptied for every element
        and filled at its first read (`_compiler._lazy`), so a name is computed at most once per
        element however often the body and the message read it."""
        if not e.locals:
            return self.compile(e.body, scope)
        inner = dict(scope)
        slots: list[int] = []
        for b in e.locals:
            value = self.compile(b.value, inner)  # sees the loop variables and the earlier names
            slot = self._new_slot()
            self.binding_slots[id(b)] = slot
            self.local_values[slot] = value
            inner[b.name] = slot
            slots.append(slot)
        body = self.compile(e.body, inner)
        if len(slots) == 1:
            (only,) = slots

            def one_local(env: Env) -> Any:
                env.slots[only] = _UNSET
                return body(env)

            return one_local

        def locals_(env: Env) -> Any:
            env_slots = env.slots
            for slot in slots:
                env_slots[slot] = _UNSET
            return body(env)

        return locals_

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
            search, replay = self.twin._body(e, inner), self._body(e, inner)
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

        result_slot = self.hint_results.get(binding_id) if not scope else None

        def quant(env: Env) -> Any:
            # Known undecided: the fast run's result says so, or the enclosing binding of the same
            # quantifier was undecided, which makes every inner level undecided too.
            assumed, env.assume = env.assume, None
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            if kind != "count" and (
                assumed is (not decide)
                or (env.hint is not None and result_slot is not None and env.hint[result_slot] is (not decide))
            ):
                if xs:  # show the last element
                    env.slots[slot] = xs[-1]
                    env.rec[bind_key] = len(xs) - 1  # type: ignore[index]
                    env.assume = (not decide) if rest else None
                    replay(env)
                    env.assume = None
                return not decide
            if kind != "count" and replay_hint(env, xs):
                return decide
            slots, rec = env.slots, env.rec
            assert rec is not None
            found = first_unknown = -1
            total, unknown = 0, False
            failure: EvalFailure | None = None
            for i, x in enumerate(xs):
                slots[slot] = x
                try:
                    v = search(env)
                    if not rest:
                        v = truth(v, body_node)
                except EvalFailure as exc:
                    found, failure = i, exc  # replay it recorded, so the trace shows where it failed
                    break
                if kind == "count":
                    if v is UNKNOWN:
                        unknown = True
                        if first_unknown < 0:
                            first_unknown = i
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
            if failure is not None:  # the replay may only have recorded a value that is not a condition
                raise failure
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
                failure: EvalFailure | None = None
                v = None
                try:
                    keep = truth(cond(env), cond_node) if cond is not None else True  # type: ignore[arg-type]
                except EvalFailure as exc:
                    keep, failure = UNKNOWN, exc
                if keep is True:
                    try:
                        v = element(env)
                    except EvalFailure as exc:
                        v, failure = UNKNOWN, exc
                if keep is UNKNOWN or v is UNKNOWN:  # record the element that made the list unknown
                    if rec_cond is not None:
                        rec_cond(env)
                    if keep is True:  # the element was read only if kept
                        rec_element(env)
                    if failure is not None:  # a replay records values; the failure is the search's
                        raise failure
                    return UNKNOWN
                if keep is True:
                    out.append(v)
            return out

        return comprehension

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


def _fact_keys(e: ast.Expr) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None for anything but a plain path."""
    keys: list[str] = []
    while isinstance(e, ast.Field):
        keys.append(e.name)
        e = e.obj
    if not isinstance(e, ast.Name):
        return None
    keys.append(e.name)
    return keys[::-1]
