"""The printer: golden formatter pairs (tests/data/fmt/NAME.litmus-in -> NAME.litmus-out) and the
layout decisions one by one. Set LITMUS_UPDATE_GOLDEN=1 to rewrite the expected outputs after a
deliberate change (then read the diff)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from litmus_rules.lang import ast
from litmus_rules._resources import default_rules_dir
from litmus_rules.lang.printer import format_expr, format_ruleset, format_text
from litmus_rules.source import Source, Span
from litmus_rules.lang.syntax import parse, parse_expression

GOLDEN = Path(__file__).resolve().parent / "data" / "fmt"
CASES = sorted(p.name[: -len(".litmus-in")] for p in GOLDEN.glob("*.litmus-in"))
SPAN = Span(Source("<test>", ""), 0, 0)


def test_there_are_golden_pairs() -> None:
    assert {"basic", "comments", "precedence", "long_lines", "strings"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden_pair(case: str) -> None:
    source = (GOLDEN / f"{case}.litmus-in").read_text(encoding="utf-8")
    expected_path = GOLDEN / f"{case}.litmus-out"
    formatted = format_text(source, f"{case}.litmus-in")
    if os.environ.get("LITMUS_UPDATE_GOLDEN"):
        expected_path.write_text(formatted, encoding="utf-8")
    assert formatted == expected_path.read_text(encoding="utf-8")
    assert format_text(formatted) == formatted  # idempotent
    assert parse(formatted) == parse(source)  # the same rules


def test_the_shipped_rules_format_to_the_same_ast_and_stay_formatted() -> None:
    for file in sorted(default_rules_dir().glob("*.litmus")):
        text = file.read_text(encoding="utf-8")
        once = format_text(text)
        assert parse(once) == parse(text)
        assert format_text(once) == once


def q(text: str) -> str:
    """Parse and print an expression."""
    return format_expr(parse_expression(text))


@pytest.mark.parametrize(
    "source, printed",
    [
        ("((a and b)) or (c)", "a and b or c"),
        ("(a or b) and c", "(a or b) and c"),
        ("a or (b or c)", "a or (b or c)"),  # kept: it is a different tree from `a or b or c`
        ("a and (any x in xs: p)", "a and (any x in xs: p)"),
        ("(any x in xs: p) and a", "(any x in xs: p) and a"),
        ("not (any x in xs: p)", "not (any x in xs: p)"),
        ("(count x in xs: p) > 2", "(count x in xs: p) > 2"),
        ("any x in xs: p and q", "any x in xs: p and q"),
        ("a - (b - c)", "a - (b - c)"),
        ("(a - b) - c", "a - b - c"),
        ("-(a + b)", "-(a + b)"),
        ("(1).x", "(1).x"),
        ('"s".x', '"s".x'),
        ("f(any x in xs: p, k: a or b)", "f(any x in xs: p, k: a or b)"),
        ("[x for x in (a + b) if (x)]", "[x for x in a + b if x]"),
        ("a not in b", "a not in b"),
    ],
)
def test_parentheses_follow_precedence_not_the_source(source: str, printed: str) -> None:
    assert q(source) == printed
    assert parse_expression(printed) == parse_expression(source)


def test_a_quantifier_operand_is_parenthesised_even_where_it_comes_last() -> None:
    quantifier = ast.Quantifier("any", (ast.Binding("x", ast.Name("xs", span=SPAN), span=SPAN),), ast.Name("p", span=SPAN), span=SPAN)
    tree = ast.BoolOp("and", (quantifier, ast.Name("q", span=SPAN)), span=SPAN)
    assert format_expr(tree) == "(any x in xs: p) and q"
    assert parse_expression(format_expr(tree)) == tree


def test_strings_are_json_with_unicode_kept_and_line_separators_escaped() -> None:
    assert format_expr(ast.Literal('café "q" \n', span=SPAN)) == '"café \\"q\\" \\n"'
    assert format_expr(ast.Literal("a\u2028b\x85", span=SPAN)) == '"a\\u2028b\\u0085"'


def test_numbers_print_so_that_they_parse_back() -> None:
    assert q("1.0") == "1.0" and q("2") == "2" and q("1e20") == "1e+20"
    with pytest.raises(ValueError):
        format_expr(ast.Literal(float("inf"), span=SPAN))


def test_messages_re_escape_braces_and_keep_placeholders() -> None:
    rs = parse('ruleset a version "1"\nrule r reject when x because "{{lit}} {x.y!r} }}"\n')
    out = format_ruleset(rs)
    assert 'because "{{lit}} {x.y!r} }}"' in out
    assert parse(out) == rs


def test_a_placeholder_holding_a_string_literal_cannot_be_printed() -> None:
    message = ast.Message((ast.Placeholder(ast.Literal("s", span=SPAN), False, span=SPAN),), span=SPAN)
    rule = ast.Rule("r", None, None, (), "when", ast.Name("x", span=SPAN), message, span=SPAN)
    with pytest.raises(ValueError, match="string literal"):
        format_ruleset(ast.RuleSet("a", "1", (rule,), span=SPAN))


def test_long_docs_and_messages_split_into_adjacent_literals_between_words() -> None:
    doc = " ".join(f"word{i}" for i in range(40))
    rs = parse(f'ruleset a version "1"\nrule r "{doc}" reject when x because "{doc} {{x}}"\n')
    out = format_ruleset(rs, width=60)
    assert all(len(line) <= 60 for line in out.splitlines())
    assert out.count('"\n  "') >= 2  # the doc continues on lines of its own
    assert parse(out) == rs


def test_long_conditions_break_before_top_level_operands_with_a_continuation_indent() -> None:
    rs = parse('ruleset a version "1"\nrule r reject when alpha == 1 and beta == 2 or gamma == 3 and delta == 4\n')
    assert "  reject when alpha == 1 and beta == 2\n    or gamma == 3 and delta == 4\n" in format_ruleset(rs, width=40)
    narrow = format_ruleset(rs, width=30)  # an operand that does not fit breaks in turn, 2 deeper
    assert "  reject when alpha == 1\n      and beta == 2\n    or gamma == 3\n      and delta == 4\n" in narrow


def test_comments_of_an_ast_without_positions_are_kept_at_the_end() -> None:
    rs = parse('# one\nruleset a version "1"\nlet x = 1  # two\n')
    moved = ast.RuleSet(rs.name, rs.version, (ast.Let("x", ast.Literal(1, span=SPAN), span=SPAN),), span=SPAN,
                        comments=rs.comments)
    assert format_ruleset(moved).endswith("let x = 1\n\n# one\n# two\n")


def test_an_empty_ruleset_is_just_its_header() -> None:
    assert format_text('ruleset  a . b  version "1"') == 'ruleset a.b version "1"\n'
