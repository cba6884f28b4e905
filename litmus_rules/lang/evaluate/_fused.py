"""Fused loops: the commonest quantifier shapes compiled as plain Python loops.

A mixin of `LoopCompiler` (and so of `Compiler`): a comparison of the loop variable's field with a
loop-invariant value, and the two-collection pair `any s in A, c in B: c.k in s.j`, run without a
closure call per element. Every other shape falls back to the general loop in `_loops.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litmus_rules.lang import ast
from litmus_rules.lang.evaluate._runtime import Env, Fn, _field_of, _member, _strict_eq
from litmus_rules.lang.values import UNKNOWN, EvalFailure

if TYPE_CHECKING:
    from litmus_rules.lang.evaluate._compiler import Compiler


class FusedLoops:
    """The fused half of `LoopCompiler` (see `_compiler.py` for the attributes it relies on)."""

    recording: bool
    twin: Compiler | None
    binding_slots: dict[int, int]

    if TYPE_CHECKING:

        def compile(self, node: ast.Expr, scope: dict[str, int]) -> Fn: ...
        def _new_slot(self) -> int: ...
        def _slot_field(self, e: ast.Expr, scope: dict[str, int]) -> tuple[int, str] | None: ...

    def _fused_pair(
        self, e: ast.Quantifier, first: ast.Binding, rest: list[ast.Binding], coll: Fn, inner_coll: Fn,
        slot: int, scope: dict[str, int],
    ) -> Fn | None:
        """`any s in A, c in B: c.k in s.j` (or `==`, either side) as two plain loops, the
        disjointness check of every validity ruleset. B's fields are read once, not once per s;
        a field that cannot be read fails only where the nested loops would have read it."""
        body = e.body
        if len(rest) != 1 or e.kind == "count" or not isinstance(body, ast.Compare) or body.op not in ("in", "=="):
            return None
        second = rest[0]
        sides = []
        for side in (body.left, body.right):
            if not (isinstance(side, ast.Field) and isinstance(side.obj, ast.Name)):
                return None
            sides.append((side.obj.name, side.name, side))
        names = {sides[0][0], sides[1][0]}
        if names != {first.name, second.name} or first.name == second.name:
            return None
        inner_left = sides[0][0] == second.name
        (_, inner_key, inner_node), (_, outer_key, outer_node) = sides if inner_left else sides[::-1]
        inner_slot = self._new_slot()
        self.binding_slots[id(second)] = inner_slot
        decide = e.kind == "any"
        other, member = not decide, body.op == "in"

        def pair(env: Env) -> Any:
            xs = coll(env)
            if xs is UNKNOWN:
                return UNKNOWN
            if not xs:
                return other
            ys = inner_coll(env)
            if ys is UNKNOWN:
                return UNKNOWN
            if not ys:
                return other
            bs: list[Any] = []
            strings = member
            for y in ys:
                try:
                    b = y.get(inner_key, UNKNOWN) if y.__class__ is dict else _field_of(y, inner_key, inner_node)
                except EvalFailure as exc:
                    b = exc
                bs.append(b)
                if b.__class__ is not str:
                    strings = False
            env.budget -= len(xs) * (len(ys) + 1)
            if env.budget < 0:
                env.charge(0)
            unknown = False
            for x in xs:
                try:
                    a = x.get(outer_key, UNKNOWN) if x.__class__ is dict else _field_of(x, outer_key, outer_node)
                except EvalFailure as exc:
                    a = exc  # raised where the nested loops would read it: after `c.k` when that is left
                a_str = a.__class__ is str
                if strings and a_str:  # the common case, as tight as a hand-written loop
                    if inner_left:
                        for b in bs:
                            if (b in a) is decide:
                                break
                        else:
                            continue
                    else:
                        for b in bs:
                            if (a in b) is decide:
                                break
                        else:
                            continue
                    env.slots[slot], env.slots[inner_slot] = x, ys[bs.index(b)]
                    return decide
                for j, b in enumerate(bs):
                    for side in ((b, a) if inner_left else (a, b)):  # the nested loops' reading order
                        if isinstance(side, EvalFailure):
                            raise side
                    if a is UNKNOWN or b is UNKNOWN:
                        unknown = True
                        continue
                    if member:
                        left, right = (b, a) if inner_left else (a, b)
                        if a_str and b.__class__ is str:
                            v = left in right
                        else:
                            v = _member(left, right, body)
                    else:
                        v = _strict_eq(a, b)
                    if v is decide:
                        env.slots[slot], env.slots[inner_slot] = x, ys[j]
                        return decide
                    if v is UNKNOWN:
                        unknown = True
            return UNKNOWN if unknown else other

        return pair

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
            if binding.name not in ast.names(side):
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
            try:
                b = rfn(env) if rfn is not None else None
            except EvalFailure as exc:
                if not lsf:
                    raise
                b = exc  # the nested loops read the left side first: raised after it, below
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
                elif isinstance(b, EvalFailure):
                    raise b
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
            try:
                inv = invariant(env)
            except EvalFailure as exc:
                if not loop_left:
                    raise  # read before the element's field, at the first element
                x = xs[0]
                x.get(key, UNKNOWN) if x.__class__ is dict else _field_of(x, key, node)
                raise exc from None
            if inv is UNKNOWN:  # every comparison is unknown, but a field that cannot be read fails
                for x in xs:
                    x.get(key, UNKNOWN) if x.__class__ is dict else _field_of(x, key, node)
                return UNKNOWN
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
