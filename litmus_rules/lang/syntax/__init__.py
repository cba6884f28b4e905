"""Rule text -> AST. The only package that imports lark, and only when a text is parsed: a caller
that keeps parsed trees (engine/rulecache.py, for the rule files of a ruleset) never imports it on
a hit."""

from __future__ import annotations

from litmus_rules.lang import ast
from litmus_rules.lang.syntax._limits import MAX_NESTING, MAX_RULE_FILE_BYTES

__all__ = ["MAX_NESTING", "MAX_RULE_FILE_BYTES", "parse", "parse_expression"]


def parse(text: str, name: str = "<rules>") -> ast.RuleSet:
    """Parse one rule file. Raises LitmusSyntaxError with a span inside `text`."""
    from litmus_rules.lang.syntax import _front

    return _front.parse(text, name)


def parse_expression(text: str, name: str = "<expr>") -> ast.Expr:
    """Parse a single expression (used by tests and tools)."""
    from litmus_rules.lang.syntax import _front

    return _front.parse_expression(text, name)
