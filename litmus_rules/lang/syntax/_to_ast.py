"""Turn lark's parse tree into the typed AST, with a Span on every node.

Runs after parsing (not as lark's internal transformer, where `meta` is missing). Any rule without a
handler raises: a grammar change must come with its AST mapping.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from lark import Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedInput
from lark.tree import Meta

from litmus_rules.lang import ast
from litmus_rules.errors import LitmusSyntaxError
from litmus_rules.source import Source, Span
from litmus_rules.lang.syntax._errors import translate
from litmus_rules.lang.syntax._grammar import parser

# `{expr}` or `{expr!r}` inside a message; `{{` and `}}` are literal braces.
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def _depth(tree: Tree[Token]) -> int:
    children = [c for c in tree.children if isinstance(c, Tree)]
    return 1 + max((_depth(c) for c in children), default=0)


@v_args(meta=True)
class ToAst(Transformer[Token, Any]):
    def __init__(self, source: Source, parse_expr: Callable[[str], Tree[Token]]) -> None:
        super().__init__(visit_tokens=False)
        self.source = source
        self._parse_expr = parse_expr

    # ---- helpers -----------------------------------------------------------------------------------

    def _span(self, meta: Meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.source, 0, 0)
        return Span(self.source, meta.start_pos, meta.end_pos)

    def _tok(self, tok: Token) -> Span:
        return Span(self.source, tok.start_pos or 0, tok.end_pos or 0)

    def _string(self, tok: Token) -> str:
        try:
            value = json.loads(str(tok))
        except json.JSONDecodeError as exc:
            raise LitmusSyntaxError(
                f"invalid escape in string: {exc.msg.lower()}",
                span=Span(self.source, (tok.start_pos or 0) + exc.pos, (tok.start_pos or 0) + exc.pos + 1),
                expected=("a JSON string escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX",),
            ) from None
        assert isinstance(value, str)
        return value

    def __default__(self, data: str, children: list[Any], meta: Meta) -> Any:
        raise NotImplementedError(f"grammar rule `{data}` has no AST mapping")

    # ---- file structure ----------------------------------------------------------------------------

    def start(self, meta: Meta, children: list[Any]) -> ast.RuleSet:
        (name, version), *items = children
        return ast.RuleSet(name=name, version=version, items=tuple(items), span=self._span(meta))

    def header(self, meta: Meta, children: list[Any]) -> tuple[str, str]:
        return children[0], self._string(children[1])

    def dotted_name(self, meta: Meta, children: list[Token]) -> str:
        return ".".join(str(c) for c in children)

    def param(self, meta: Meta, children: list[Any]) -> ast.Param:
        name, type_name, default = children
        return ast.Param(
            str(name), str(type_name) if type_name is not None else None, default, span=self._tok(name)
        )

    def let(self, meta: Meta, children: list[Any]) -> ast.Let:
        name, expr = children
        return ast.Let(str(name), expr, span=self._tok(name))

    def rule(self, meta: Meta, children: list[Any]) -> ast.Rule:
        name, doc, cite, tags, (mode, condition), message = children
        return ast.Rule(
            name=str(name),
            doc=doc[0] if doc else None,
            cite=cite,
            tags=tags or (),
            mode=mode,
            condition=condition,
            message=message,
            span=self._tok(name),
        )

    def text(self, meta: Meta, children: list[Token]) -> tuple[str, list[Token]]:
        return "".join(self._string(t) for t in children), children

    def cite(self, meta: Meta, children: list[Any]) -> str:
        return str(children[0][0])

    def tags(self, meta: Meta, children: list[Token | None]) -> tuple[str, ...]:
        return tuple(self._string(t) for t in children if t is not None)

    def reject(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Expr]:
        return children[0], children[1]

    def reject_mode(self, meta: Meta, children: list[Token]) -> str:
        return str(children[0])

    def because(self, meta: Meta, children: list[Any]) -> ast.Message:
        _, tokens = children[0]
        parts: list[str | ast.Placeholder] = []
        for tok in tokens:
            parts.extend(self._message_parts(tok))
        merged: list[str | ast.Placeholder] = []
        for part in parts:  # adjacent literal pieces merge, so equal messages compare equal
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] += part
            elif part != "":
                merged.append(part)
        return ast.Message(tuple(merged), span=self._span(meta))

    def _message_parts(self, tok: Token) -> list[str | ast.Placeholder]:
        raw = str(tok)[1:-1]
        base = (tok.start_pos or 0) + 1
        parts: list[str | ast.Placeholder] = []
        pos = 0
        for m in _PLACEHOLDER.finditer(raw):
            parts.append(self._string(Token("STRING", '"' + raw[pos : m.start()] + '"', start_pos=base + pos - 1)))
            pos = m.end()
            whole = m.group(0)
            if whole in ("{{", "}}"):
                parts.append(whole[0])
                continue
            span = Span(self.source, base + m.start(), base + m.end())
            inner = m.group(1)
            if inner is None:
                raise LitmusSyntaxError(
                    "unmatched brace in message", span=span, expected=("`{{` or `}}` for a literal brace",)
                )
            parts.append(self._placeholder(inner, base + m.start() + 1, span))
        parts.append(self._string(Token("STRING", '"' + raw[pos:] + '"', start_pos=base + pos - 1)))
        return parts

    def _placeholder(self, inner: str, offset: int, span: Span) -> ast.Placeholder:
        text, as_repr = (inner[:-2], True) if inner.endswith("!r") else (inner, False)
        if not text.strip():
            raise LitmusSyntaxError("empty placeholder in message", span=span, expected=("an expression",))
        # Parse the placeholder in place: padded with spaces, lark's offsets are offsets into the file.
        padded = " " * offset + text
        try:
            tree = self._parse_expr(padded)
        except UnexpectedInput as exc:
            padded_source = Source(self.source.name, self.source.text[:offset] + text)
            raise translate(exc, padded_source, parser()) from None
        if _depth(tree) > 20:
            raise LitmusSyntaxError("placeholder expression nested too deeply", span=span)
        expr = ToAst(self.source, self._parse_expr).transform(tree)
        return ast.Placeholder(expr, as_repr, span=span)

    def classify(self, meta: Meta, children: list[Any]) -> ast.Classify:
        name, doc, *cells = children
        return ast.Classify(
            str(name), self._string(doc) if doc is not None else None, tuple(cells), span=self._tok(name)
        )

    def cell(self, meta: Meta, children: list[Any]) -> ast.Cell:
        label, condition = children
        return ast.Cell(self._string(label), condition, span=self._tok(label))

    def otherwise(self, meta: Meta, children: list[Token]) -> ast.Cell:
        return ast.Cell(self._string(children[0]), None, span=self._span(meta))

    # ---- expressions -------------------------------------------------------------------------------

    def or_expr(self, meta: Meta, children: list[ast.Expr]) -> ast.BoolOp:
        return ast.BoolOp("or", tuple(children), span=self._span(meta))

    def and_expr(self, meta: Meta, children: list[ast.Expr]) -> ast.BoolOp:
        return ast.BoolOp("and", tuple(children), span=self._span(meta))

    def not_(self, meta: Meta, children: list[ast.Expr]) -> ast.Not:
        return ast.Not(children[0], span=self._span(meta))

    def quantifier(self, meta: Meta, children: list[Any]) -> ast.Quantifier:
        kind, *bindings, where, body = children
        return ast.Quantifier(kind, tuple(bindings) + (where or ()), body, span=self._span(meta))

    def quantifier_kind(self, meta: Meta, children: list[Token]) -> str:
        return str(children[0])

    def binding(self, meta: Meta, children: list[Any]) -> ast.Binding:
        name, collection = children
        return ast.Binding(str(name), collection, span=self._span(meta))

    def where(self, meta: Meta, children: list[ast.Binding]) -> tuple[ast.Binding, ...]:
        return tuple(children)

    def local(self, meta: Meta, children: list[Any]) -> ast.Binding:
        name, value = children
        return ast.Binding(str(name), value, span=self._span(meta), local=True)

    def compare(self, meta: Meta, children: list[Any]) -> ast.Compare:
        left, op, right = children
        return ast.Compare(str(op), left, right, span=self._span(meta))

    def member(self, meta: Meta, children: list[ast.Expr]) -> ast.Compare:
        return ast.Compare("in", children[0], children[1], span=self._span(meta))

    def not_member(self, meta: Meta, children: list[ast.Expr]) -> ast.Compare:
        return ast.Compare("not in", children[0], children[1], span=self._span(meta))

    def arith(self, meta: Meta, children: list[Any]) -> ast.Arith:
        left, op, right = children
        return ast.Arith(str(op), left, right, span=self._span(meta))

    def neg(self, meta: Meta, children: list[ast.Expr]) -> ast.Neg:
        return ast.Neg(children[0], span=self._span(meta))

    def field(self, meta: Meta, children: list[Any]) -> ast.Field:
        return ast.Field(children[0], str(children[1]), span=self._span(meta))

    def index(self, meta: Meta, children: list[ast.Expr]) -> ast.Index:
        return ast.Index(children[0], children[1], span=self._span(meta))

    def name(self, meta: Meta, children: list[Token]) -> ast.Name:
        return ast.Name(str(children[0]), span=self._span(meta))

    def call(self, meta: Meta, children: list[Any]) -> ast.Call:
        func, *rest = children
        args = tuple(a for a in rest if a is not None and not isinstance(a, tuple))
        kwargs = tuple(a for a in rest if isinstance(a, tuple))
        return ast.Call(str(func), args, kwargs, span=self._span(meta))

    def kwarg(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Expr]:
        return str(children[0]), children[1]

    def list_literal(self, meta: Meta, children: list[Any]) -> ast.ListExpr:
        items = tuple(c for c in children if c is not None and not isinstance(c, Token))
        return ast.ListExpr(items, span=self._span(meta))

    def comprehension(self, meta: Meta, children: list[Any]) -> ast.Comprehension:
        element, name, collection, condition = children
        return ast.Comprehension(element, str(name), collection, condition, span=self._span(meta))

    def string(self, meta: Meta, children: list[Token]) -> ast.Literal:
        return ast.Literal(self._string(children[0]), span=self._span(meta))

    def number(self, meta: Meta, children: list[Token]) -> ast.Literal:
        text = str(children[0])
        value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
        return ast.Literal(value, span=self._span(meta))

    def constant(self, meta: Meta, children: list[Token]) -> ast.Literal:
        value = {"true": True, "false": False, "null": None}[str(children[0])]
        return ast.Literal(value, span=self._span(meta))
