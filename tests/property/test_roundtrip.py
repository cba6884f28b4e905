"""The formatter is the parser's inverse: printing then parsing gives the same AST, and formatting is
idempotent and keeps every comment."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.lang import ast
from litmus_rules.lang.printer import format_expr, format_ruleset, format_text
from litmus_rules.lang.syntax import parse, parse_expression
from strategies import expressions, rule_texts, rulesets

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(expressions(max_leaves=14))
def test_an_expression_prints_to_text_that_parses_back_to_it(e: ast.Expr) -> None:
    assert parse_expression(format_expr(e)) == e


@SETTINGS
@given(rulesets())
def test_a_ruleset_prints_to_text_that_parses_back_to_it(rs: ast.RuleSet) -> None:
    text = format_ruleset(rs)
    assert parse(text) == rs
    assert text.endswith("\n") and not text.endswith("\n\n")


@SETTINGS
@given(rulesets(max_items=4), st.integers(10, 200))
def test_any_width_keeps_the_ast(rs: ast.RuleSet, width: int) -> None:
    assert parse(format_ruleset(rs, width=width)) == rs


def _comments(text: str) -> Counter[str]:
    return Counter(c.text.rstrip() for c in parse(text).comments)


@SETTINGS
@given(rule_texts())
def test_fmt_is_idempotent_keeps_the_ast_and_every_comment(text: str) -> None:
    once = format_text(text)
    assert format_text(once) == once
    assert parse(once) == parse(text)
    assert _comments(once) == _comments(text)
