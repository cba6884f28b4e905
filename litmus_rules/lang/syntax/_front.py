"""Rule text -> AST through lark: the parse itself, without the cache in front of it (`__init__.py`)."""

from __future__ import annotations

from lark import Token, Tree
from lark.exceptions import UnexpectedInput, VisitError

from litmus_rules.lang import ast
from litmus_rules.errors import LitmusSyntaxError
from litmus_rules.source import Source, Span
from litmus_rules.lang.syntax._comments import scan_comments
from litmus_rules.lang.syntax._errors import translate
from litmus_rules.lang.syntax._grammar import parser
from litmus_rules.lang.syntax._to_ast import ToAst

from litmus_rules.lang.syntax._limits import MAX_NESTING, MAX_RULE_FILE_BYTES

__all__ = ["parse", "parse_expression"]


def _parse_tree(text: str, start: str) -> Tree[Token]:
    return parser().parse(text, start=start)


def _check_size(source: Source) -> None:
    if len(source.text) > MAX_RULE_FILE_BYTES:
        raise LitmusSyntaxError(
            f"rule file is {len(source.text)} characters; the limit is {MAX_RULE_FILE_BYTES}",
            span=Span(source, 0, 0),
        )


def _check_depth(tree: Tree[Token], source: Source) -> None:
    """LALR parsing is iterative, but everything after it recurses: bound the nesting first."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            meta = node.meta
            start = 0 if meta.empty else meta.start_pos
            raise LitmusSyntaxError(
                f"expression nested more than {MAX_NESTING} levels deep",
                span=Span(source, start, start + 1),
            )
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def _to_ast(tree: Tree[Token], source: Source) -> object:
    _check_depth(tree, source)
    try:
        return ToAst(source, lambda t: _parse_tree(t, "expr")).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, LitmusSyntaxError):
            raise exc.orig_exc from None
        raise


def parse(text: str, name: str = "<rules>") -> ast.RuleSet:
    """Parse one rule file. Raises LitmusSyntaxError with a span inside `text`."""
    source = Source(name, text)
    _check_size(source)
    try:
        tree = _parse_tree(text, "start")
    except UnexpectedInput as exc:
        raise translate(exc, source, parser(), lambda t: _parse_tree(t, "start")) from None
    ruleset = _to_ast(tree, source)
    assert isinstance(ruleset, ast.RuleSet)
    comments = tuple(ast.Comment(t, span=Span(source, s, e)) for s, e, t in scan_comments(text))
    return ast.RuleSet(ruleset.name, ruleset.version, ruleset.items, comments=comments, span=ruleset.span)


def parse_expression(text: str, name: str = "<expr>") -> ast.Expr:
    """Parse a single expression (used by tests and tools)."""
    source = Source(name, text)
    _check_size(source)
    try:
        tree = _parse_tree(text, "expr")
    except UnexpectedInput as exc:
        raise translate(exc, source, parser()) from None
    return _to_ast(tree, source)  # type: ignore[return-value]
