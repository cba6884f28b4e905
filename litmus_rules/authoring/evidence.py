"""What the rule author's tools need to know statically beyond types: can a value be *unknown* (a
missing fact), and does it read the episode at all. The style lints (L405, L407, L408) and rule-test
coverage read it.

The types come from the check stage (engine/stages.py keeps the checker's type of every node); this
pass adds the one refinement it needs on top: `default(x, fallback)` is, when known, a value of
`x`'s type (or the fallback's, when `x`'s is not known statically), so that the fields of its
items are known to be present where the schema promises them. Conservative: "may be unknown"
whenever the schema does not promise the fact. The schema's `required` lists (and the derived
facts) are the promises.
"""

from __future__ import annotations

from typing import Any

from litmus_rules.engine import stages
from litmus_rules.lang import ast
from litmus_rules.lang import types as t

__all__ = ["Evidence"]

Info = tuple[bool, t.T, bool]  # (may be unknown, type when known, reads facts)


class Evidence:
    """Static evidence facts about the expressions of one checked ruleset."""

    def __init__(self, rs: ast.RuleSet | stages.Checked) -> None:
        self.checked = rs if isinstance(rs, stages.Checked) else stages.check(rs)
        env = self.checked.environment
        tree = self.checked.tree
        self.builtins = env.builtins
        self.derived = env.derived
        self.required = _required(getattr(env.roots, "schema", None))
        self.lets = {let.name: let for let in tree.lets}
        self.params = {p.name for p in tree.params}
        self._lets: dict[str, Info] = {}

    def may_be_unknown(self, e: ast.Expr) -> bool:
        return self._top(e)[0]

    def reads_facts(self, e: ast.Expr) -> bool:
        return self._top(e)[2]

    def let_info(self, name: str) -> Info:
        """(may be unknown, type, reads facts) of a let."""
        if name not in self._lets:
            self._lets[name] = (True, t.ANY, True)  # a cycle (the checker reports it): assume the worst
            self._lets[name] = self._info(self.lets[name].expr, {})
        return self._lets[name]

    def _top(self, e: ast.Expr) -> Info:
        if self.checked.type_of(e) is None:  # not part of the checked tree: type it first
            self.checked.type_expression(e)
        return self._info(e, {})

    def _type(self, e: ast.Expr) -> t.T:
        """The checker's type of a node (any, where the checker stopped before typing it)."""
        return self.checked.type_of(e) or t.ANY

    def _info(self, e: ast.Expr, scope: dict[str, t.T | Info]) -> Info:  # noqa: C901 - one branch per node type
        if isinstance(e, ast.Literal):
            return False, self._type(e), False
        if isinstance(e, ast.Name):
            if e.name in scope:
                bound = scope[e.name]
                if isinstance(bound, tuple):  # a `where` name: what its value is
                    return bound
                return False, bound, False  # an element of a list is a value, never unknown
            if e.name in self.lets:
                return self.let_info(e.name)
            if e.name in self.params:
                return False, t.ANY, False
            if e.name in self.derived:
                return False, self._type(e), True  # derived facts are always computed
            return e.name not in self.required, self._type(e), True
        if isinstance(e, ast.Field):
            unknown, base, reads = self._info(e.obj, scope)
            field = t.field_type(base, e.name) if not base.is_any else None
            return unknown or not _always_has(base, e.name), field or t.ANY, reads
        if isinstance(e, ast.Call):
            infos = [self._info(a, scope) for a in e.args] + [self._info(v, scope) for _, v in e.kwargs]
            reads = any(i[2] for i in infos)
            if e.func == "default" and len(infos) == 2:
                # the fallback stands in for an absent value: the value's own type is the precise one
                typ = infos[0][1] if not infos[0][1].is_any else infos[1][1]
                return infos[1][0], typ, reads
            if e.func == "known":
                return False, t.BOOL, reads
            fn = self.builtins.get(e.func)
            unknown = any(i[0] for i in infos) or fn is None or fn.sees_unknown
            return unknown, self._type(e) if fn else t.ANY, reads
        if isinstance(e, ast.Quantifier):
            inner = dict(scope)
            unknown = reads = False
            for b in e.bindings:
                cu, ct, cr = self._info(b.collection, inner)
                if b.local:  # read only where the body reads it: its unknowns count there
                    inner[b.name] = (cu, ct, cr)
                    continue
                unknown, reads = unknown or cu, reads or cr
                inner[b.name] = t.item_type(ct)
            bu, _, br = self._info(e.body, inner)
            return unknown or bu, t.NUM if e.kind == "count" else t.BOOL, reads or br
        if isinstance(e, ast.Comprehension):
            cu, ct, cr = self._info(e.collection, scope)
            inner = {**scope, e.name: t.item_type(ct)}
            eu, et, er = self._info(e.element, inner)
            qu, _, qr = self._info(e.condition, inner) if e.condition is not None else (False, t.ANY, False)
            return cu or eu or qu, t.list_of(et), cr or er or qr
        parts = [self._info(c, scope) for c in ast.children(e)]
        unknown = any(p[0] for p in parts) or isinstance(e, ast.Index)
        reads = any(p[2] for p in parts)
        if isinstance(e, ast.ListExpr):
            typ = t.list_of(parts[0][1] if parts else t.ANY)
        elif isinstance(e, (ast.Not, ast.BoolOp, ast.Compare)):
            typ = t.BOOL
        elif isinstance(e, (ast.Arith, ast.Neg)):
            typ = parts[0][1] if parts else t.NUM
        else:
            typ = t.ANY
        return unknown, typ, reads


def _required(schema: Any) -> set[str]:
    """Properties a schema object always has: its own `required` and its `allOf` branches' (the
    conditional `then` branches promise nothing unconditionally)."""
    if not isinstance(schema, dict):
        return set()
    out = set(schema.get("required", ()))
    for sub in schema.get("allOf", ()):
        if isinstance(sub, dict):
            out |= set(sub.get("required", ()))
    return out


def _always_has(base: t.T, name: str) -> bool:
    if base.is_any or base.kinds != frozenset({"object"}):
        return False  # it may be null or not an object: its field is then unknown
    if base.fields is not None:  # derived facts and built-in results carry every declared field
        return name in base.fields
    if base.schema is None or base.root is None:
        return False
    return name in _required(base.schema)  # `from_schema` stored it with its `$ref` resolved
