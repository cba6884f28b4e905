"""Hypothesis strategies for the rule language: random syntactically valid expressions, messages and
rulesets, as AST (what the parser could have produced) or as text (printed, then roughened with
comments and blank lines). Shared: import them from any property test.

    from strategies import expressions, rulesets, rule_texts      # from tests/property/
    from property.strategies import rulesets                      # from tests/ (conftest's path)

The ASTs carry a placeholder span (spans are excluded from equality), so `parse(print(x)) == x` is
the round-trip property. They are syntactically valid, not checked: names need not resolve.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from hypothesis import strategies as st

from litmus_rules.lang import ast
from litmus_rules.source import Source, Span

__all__ = [
    "KEYWORDS",
    "comments",
    "declarations",
    "expressions",
    "literals",
    "messages",
    "names",
    "rule_texts",
    "rulesets",
]

SPAN = Span(Source("<generated>", ""), 0, 0)

# Every keyword of grammar/litmus.lark: never a name.
KEYWORDS = frozenset(
    "ruleset version param let rule cite tags reject when unless because classify otherwise "
    "and or not in any all count for if true false null where".split()
)

names = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: n not in KEYWORDS)


# Text for strings and comments: anything but lone surrogates (they cannot be written as UTF-8).
_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
# A comment runs to the end of its line: no character any line-splitter treats as a break.
_comment_chars = st.characters(
    exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="\x85"
)


def _positive_float(x: float) -> bool:
    return math.isfinite(x) and math.copysign(1.0, x) > 0


@functools.lru_cache(maxsize=None)  # building a strategy is slow; drawing is not
def literals(strings: bool = True) -> st.SearchStrategy[ast.Literal]:
    """Literals as the parser makes them: numbers are never negative (`-1` is `Neg(1)`)."""
    values: list[st.SearchStrategy[Any]] = [
        st.integers(min_value=0, max_value=10**20),
        st.floats(min_value=0.0, max_value=1e30).filter(_positive_float),
        st.sampled_from([True, False, None]),
    ]
    if strings:
        values.append(_text)
    return st.one_of(values).map(lambda v: ast.Literal(v, span=SPAN))


def _bindings(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[tuple[ast.Binding, ...]]:
    """Loop variables, then (often) `where` names, as the parser orders them."""
    binding = st.builds(lambda n, c: ast.Binding(n, c, span=SPAN), names, children)
    local = st.builds(lambda n, v: ast.Binding(n, v, span=SPAN, local=True), names, children)
    return st.builds(
        lambda loops, locals_: tuple(loops) + tuple(locals_),
        st.lists(binding, min_size=1, max_size=2),
        st.lists(local, max_size=2),
    )


@functools.lru_cache(maxsize=None)  # building a strategy is slow; drawing is not
def expressions(max_leaves: int = 10, strings: bool = True) -> st.SearchStrategy[ast.Expr]:
    """Any expression node, nested. `strings=False` leaves out string literals, which a message
    placeholder cannot hold."""
    leaves = st.one_of(literals(strings), names.map(lambda n: ast.Name(n, span=SPAN)))

    def extend(children: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
        kwargs = st.lists(st.tuples(names, children), max_size=2, unique_by=lambda kv: kv[0]).map(tuple)
        return st.one_of(
            st.lists(children, max_size=3).map(lambda xs: ast.ListExpr(tuple(xs), span=SPAN)),
            st.builds(lambda o, n: ast.Field(o, n, span=SPAN), children, names),
            st.builds(lambda o, i: ast.Index(o, i, span=SPAN), children, children),
            st.builds(lambda f, a, k: ast.Call(f, tuple(a), k, span=SPAN), names, st.lists(children, max_size=3), kwargs),
            children.map(lambda x: ast.Not(x, span=SPAN)),
            st.builds(
                lambda op, xs: ast.BoolOp(op, tuple(xs), span=SPAN),
                st.sampled_from(["and", "or"]),
                st.lists(children, min_size=2, max_size=4),
            ),
            st.builds(
                lambda op, a, b: ast.Compare(op, a, b, span=SPAN),
                st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in"]),
                children,
                children,
            ),
            st.builds(lambda op, a, b: ast.Arith(op, a, b, span=SPAN), st.sampled_from(["+", "-"]), children, children),
            children.map(lambda x: ast.Neg(x, span=SPAN)),
            st.builds(
                lambda k, bs, body: ast.Quantifier(k, bs, body, span=SPAN),
                st.sampled_from(["any", "all", "count"]),
                _bindings(children),
                children,
            ),
            st.builds(
                lambda e, n, c, cond: ast.Comprehension(e, n, c, cond, span=SPAN),
                children,
                names,
                children,
                st.none() | children,
            ),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def _normalise(parts: list[str | ast.Placeholder]) -> tuple[str | ast.Placeholder, ...]:
    """As the parser builds messages: adjacent text merged, empty text dropped."""
    out: list[str | ast.Placeholder] = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        elif part != "":
            out.append(part)
    return tuple(out)


@functools.lru_cache(maxsize=None)  # building a strategy is slow; drawing is not
def messages() -> st.SearchStrategy[ast.Message]:
    placeholder = st.builds(
        lambda e, r: ast.Placeholder(e, r, span=SPAN), expressions(max_leaves=3, strings=False), st.booleans()
    )
    return st.lists(st.one_of(_text, placeholder), max_size=5).map(
        lambda parts: ast.Message(_normalise(parts), span=SPAN)
    )


@functools.lru_cache(maxsize=None)  # building a strategy is slow; drawing is not
def declarations(max_leaves: int = 10) -> st.SearchStrategy[ast.Decl]:
    exprs = expressions(max_leaves)
    maybe_text = st.none() | _text
    param = st.builds(lambda n, ty, d: ast.Param(n, ty, d, span=SPAN), names, st.none() | names, exprs)
    let = st.builds(lambda n, e: ast.Let(n, e, span=SPAN), names, exprs)
    rule = st.builds(
        lambda n, doc, cite, tags, mode, cond, msg: ast.Rule(n, doc, cite, tuple(tags), mode, cond, msg, span=SPAN),
        names,
        maybe_text,
        maybe_text,
        st.lists(_text, max_size=3),
        st.sampled_from(["when", "unless"]),
        exprs,
        st.none() | messages(),
    )
    cell = st.builds(lambda label, cond: ast.Cell(label, cond, span=SPAN), _text, exprs)
    classify = st.builds(
        lambda n, doc, cells, last: ast.Classify(n, doc, (*cells, ast.Cell(last, None, span=SPAN)), span=SPAN),
        names,
        maybe_text,
        st.lists(cell, max_size=3),
        _text,
    )
    return st.one_of(param, let, rule, classify)


@functools.lru_cache(maxsize=None)  # building a strategy is slow; drawing is not
def rulesets(max_items: int = 6, max_leaves: int = 10) -> st.SearchStrategy[ast.RuleSet]:
    return st.builds(
        lambda parts, version, items: ast.RuleSet(".".join(parts), version, tuple(items), span=SPAN),
        st.lists(names, min_size=1, max_size=3),
        _text,
        st.lists(declarations(max_leaves), max_size=max_items),
    )


comments = st.text(_comment_chars, max_size=20).map(lambda s: "#" + s)


@st.composite
def rule_texts(draw: st.DrawFn, max_items: int = 5) -> str:
    """Rule text in a layout the formatter would not choose: printed at a random width, with
    comments at the ends of lines and on lines of their own, and extra blank lines."""
    from litmus_rules.lang.printer import format_ruleset

    tree = draw(rulesets(max_items))
    lines = format_ruleset(tree, width=draw(st.integers(20, 160))).splitlines()
    out: list[str] = []
    for line in lines:
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(comments))
        if draw(st.integers(0, 6)) == 0:
            out.append("")
        out.append(line + ("  " + draw(comments) if line.strip() and draw(st.integers(0, 4)) == 0 else ""))
    if draw(st.booleans()):
        out.append(draw(comments))
    return "\n".join(out) + "\n"
