"""The compile stage: a checked ruleset, with its params bound, as closures (lang/evaluate).

A `Program` holds what evaluation needs and nothing it must recompute per episode: the bound
params, the compiled lets (a fast and a recording compiler sharing slot numbers), every rule and
classification cell in both compiled forms, with its message parts and where its witnesses are.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from litmus_rules.domain.builtins import WITNESS_BUILTINS
from litmus_rules.errors import LitmusConfigError
from litmus_rules.lang import ast
from litmus_rules.lang.environment import Environment
from litmus_rules.lang.evaluate import Compiler, Fn
from litmus_rules.lang.values import short_repr


class Compiled:
    """One condition (a rule, or a classification cell) in both its compiled forms.

    This module's classes are plain slotted ones, never changed once made: attrs would generate
    their methods on every start of the command line."""

    __slots__ = ("node", "fast", "recording", "message", "name", "clause", "location", "witness_calls")

    def __init__(
        self,
        node: ast.Rule | ast.Cell,
        fast: Fn,
        recording: Fn,
        message: tuple[str | tuple[Fn, bool], ...] = (),
        # computed once here rather than for every reject: name, clause and `file:line`
        name: str = "",
        clause: str = "",
        location: str = "",
        # The calls whose recorded value may list witnesses (`collision`, `leak`): the message's,
        # in reading order, then the condition's. A reject's reason lists the first one's.
        witness_calls: tuple[int, ...] = (),
    ) -> None:
        self.node = node
        self.fast = fast
        self.recording = recording
        self.message = message
        self.name = name
        self.clause = clause
        self.location = location
        self.witness_calls = witness_calls


class Program:
    __slots__ = ("params", "lets", "fast_compiler", "rec_compiler", "rules", "classifiers", "overridden")

    def __init__(
        self,
        params: dict[str, Any],
        lets: dict[str, ast.Let],
        fast_compiler: Compiler,
        rec_compiler: Compiler,
        rules: list[Compiled],
        # (classifier, its cells with a condition, compiled; its last cell)
        classifiers: list[tuple[ast.Classify, list[Compiled], ast.Cell]],
        overridden: frozenset[str] = frozenset(),  # the params given by the caller, not defaulted
    ) -> None:
        self.params = params
        self.lets = lets
        self.fast_compiler = fast_compiler
        self.rec_compiler = rec_compiler
        self.rules = rules
        self.classifiers = classifiers
        self.overridden = overridden


def compile_program(tree: ast.RuleSet, environment: Environment, overrides: Mapping[str, Any]) -> Program:
    """The compile stage; raises LitmusConfigError for an unknown param or a value of the wrong type."""
    params = bind_params(tree, overrides)
    lets = {let.name: let for let in tree.lets}
    index = {name: i for i, name in enumerate(lets)}
    fast = Compiler(environment, params, index, recording=False)
    rec = Compiler(environment, params, index, recording=True)
    rec.hint_slots = fast.binding_slots
    rec.hint_results = fast.result_slots
    for compiler in (fast, rec):
        # let_fns is filled after every let is compiled: lets may refer to each other in any order
        fns = [compiler.compile(let.expr, {}) for let in lets.values()]
        compiler.let_fns.extend(fns)
    rules = [_compile(fast, rec, r, r.condition, r.message) for r in tree.rules]
    classifiers = [
        (c, [_compile(fast, rec, cell, cell.condition, None) for cell in c.cells if cell.condition is not None], c.cells[-1])
        for c in tree.classifiers
    ]
    return Program(params, lets, fast, rec, rules, classifiers, frozenset(overrides))


def _compile(
    fast_compiler: Compiler, rec_compiler: Compiler, node: ast.Rule | ast.Cell, condition: ast.Expr | None,
    message: ast.Message | None,
) -> Compiled:
    assert condition is not None
    fast = fast_compiler.compile(condition, {})
    recording = rec_compiler.compile(condition, {})
    parts: list[str | tuple[Fn, bool]] = []
    if message is not None:
        scope = _binding_slots(condition, rec_compiler)
        for part in message.parts:
            if isinstance(part, str):
                parts.append(part)
            else:
                parts.append((rec_compiler.compile(part.expr, scope), part.repr))
    if isinstance(node, ast.Rule):
        name, clause = node.name, f"reject {node.mode}"
    else:
        name, clause = node.label, f'"{node.label}" when'
    exprs = [p.expr for p in message.parts if not isinstance(p, str)] if message is not None else []
    return Compiled(node, fast, recording, tuple(parts), name, clause, node.span.short_location(),
                    _calls(exprs + [condition]))


def _calls(exprs: Iterable[ast.Expr]) -> tuple[int, ...]:
    """The ids of the calls in `exprs` that list witnesses, each expression's in reading order."""
    out: list[int] = []
    for expr in exprs:
        calls = [n for n in ast.walk(expr) if isinstance(n, ast.Call) and n.func in WITNESS_BUILTINS]
        out.extend(id(n) for n in sorted(calls, key=lambda n: n.span.start))
    return tuple(out)


def _binding_slots(condition: ast.Expr, compiler: Compiler) -> dict[str, int]:
    """Message placeholders see the quantifier variables of the condition, at their recorded slots."""
    return {
        b.name: compiler.binding_slots[id(b)]
        for node in ast.walk(condition)
        if isinstance(node, ast.Quantifier)
        for b in node.bindings
    }


# ---- params --------------------------------------------------------------------------------------------


def bind_params(tree: ast.RuleSet, overrides: Mapping[str, Any]) -> dict[str, Any]:
    decls = {p.name: p for p in tree.params}
    for name in overrides:
        if name not in decls:
            import difflib  # here: only an unknown param needs it

            guess = difflib.get_close_matches(name, list(decls), n=1)
            hint = f"; did you mean `{guess[0]}`?" if guess else f"; params: {', '.join(decls) or 'none'}"
            raise LitmusConfigError(f"unknown param `{name}`{hint}")
    values = {}
    for name, decl in decls.items():
        values[name] = _coerce_param(decl, overrides[name]) if name in overrides else _constant(decl.default)
    return values


def _coerce_param(decl: ast.Param, value: Any) -> Any:
    declared = decl.type_name or _literal_kind(decl.default)
    if isinstance(value, str) and declared != "string":
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise LitmusConfigError(f"param `{decl.name}` expects a {declared}, got `{value}`") from None
    ok = {
        "string": isinstance(value, str),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "list": isinstance(value, list),
    }.get(declared, True)
    if not ok:
        raise LitmusConfigError(f"param `{decl.name}` expects a {declared}, got {short_repr(value)}")
    return value


def _literal_kind(e: ast.Expr) -> str:
    if isinstance(e, ast.Literal):
        v = e.value
        if isinstance(v, bool):
            return "bool"
        if isinstance(v, (int, float)):
            return "number"
        if isinstance(v, str):
            return "string"
        return "any"
    if isinstance(e, ast.Neg):
        return "number"
    if isinstance(e, ast.ListExpr):
        return "list"
    return "any"


def _constant(e: ast.Expr) -> Any:
    if isinstance(e, ast.Literal):
        return e.value
    if isinstance(e, ast.Neg):
        return -_constant(e.operand)
    if isinstance(e, ast.ListExpr):
        return [_constant(x) for x in e.items]
    raise AssertionError("params are checked to be constants")
