"""Parsing: the AST we get, and the errors rule authors see."""

from __future__ import annotations

import pytest

from litmus_rules.lang import ast
from litmus_rules.errors import LitmusSyntaxError
from litmus_rules.lang.syntax import parse, parse_expression

HEAD = 'ruleset t version "1"\n'


def test_header_and_items_in_source_order() -> None:
    rs = parse(HEAD + "param p = 6\nlet l = [1, 2]\nrule r reject when p > 1\nclassify c\n  \"a\" when true\n  \"b\" otherwise\n")
    assert (rs.name, rs.version) == ("t", "1")
    assert [type(i).__name__ for i in rs.items] == ["Param", "Let", "Rule", "Classify"]
    cls = rs.classifiers[0]
    assert [c.label for c in cls.cells] == ["a", "b"] and cls.cells[-1].condition is None


def test_rule_metadata_and_message_placeholders() -> None:
    rs = parse(
        HEAD
        + 'rule r "doc " "continued" cite "Note §1" tags ["a", "b"]\n'
        + '  reject unless any x in xs: x.v == 1\n  because "x={x.v!r} {{literal}} y={len(xs)}"\n'
    )
    rule = rs.rules[0]
    assert rule.doc == "doc continued" and rule.cite == "Note §1" and rule.tags == ("a", "b")
    assert rule.mode == "unless"
    parts = rule.message.parts
    assert parts[0] == "x=" and isinstance(parts[1], ast.Placeholder) and parts[1].repr
    assert parts[2] == " {literal} y="
    assert isinstance(parts[3].expr, ast.Call) and parts[3].expr.func == "len"


def test_placeholder_spans_point_into_the_file() -> None:
    text = HEAD + 'rule r reject when true because "see {a.b}"'
    rs = parse(text, "f.litmus")
    placeholder = rs.rules[0].message.parts[1]
    assert placeholder.expr.span.text == "a.b"


def test_precedence_and_greedy_quantifier_body() -> None:
    e = parse_expression("a or b and not c == d")
    assert isinstance(e, ast.BoolOp) and e.op == "or"
    assert isinstance(e.operands[1], ast.BoolOp) and e.operands[1].op == "and"
    assert isinstance(e.operands[1].operands[1], ast.Not)
    q = parse_expression("any x in xs: p and q")
    assert isinstance(q, ast.Quantifier) and isinstance(q.body, ast.BoolOp)
    mixed = parse_expression("a and any x in xs: p or q")
    assert isinstance(mixed, ast.BoolOp) and isinstance(mixed.operands[1], ast.Quantifier)


def test_paths_indexing_calls_and_comprehensions() -> None:
    e = parse_expression('f(episode.dispatch[0].tool, [s for s in xs if s.kind in ["a"]], min_len: -2 + 3)')
    assert isinstance(e, ast.Call) and e.kwargs[0][0] == "min_len"
    path = e.args[0]
    assert isinstance(path, ast.Field) and isinstance(path.obj, ast.Index)
    assert isinstance(e.args[1], ast.Comprehension) and e.args[1].condition is not None


def test_not_in_and_count() -> None:
    e = parse_expression("(count d in ds: d.x not in ys) >= 2")
    assert isinstance(e, ast.Compare) and e.op == ">="
    assert isinstance(e.left, ast.Quantifier) and e.left.kind == "count"
    assert isinstance(e.left.body, ast.Compare) and e.left.body.op == "not in"


def test_spans_are_excluded_from_equality() -> None:
    assert parse_expression("a.b == 1") == parse_expression("a.b   ==\n 1")


@pytest.mark.parametrize(
    "text, line, col, label_part",
    [
        (HEAD + "rule r reject when a = b", 2, 22, "write `==`"),
        (HEAD + "rule r reject when any x in xs x", 2, 32, "quantifier"),
        (HEAD + "rule r reject when (x", 2, 22, "unbalanced"),
        (HEAD + "rule r reject when x == 'y'", 2, 25, "double quotes"),
        (HEAD + 'rule r "doc" when true', 2, 14, "reject when"),
        ("rule r reject when true", 1, 1, "starts with `ruleset"),
        (HEAD + "rule r reject when a && b", 2, 22, "use `and`"),
    ],
)
def test_syntax_errors_have_position_caret_and_label(text: str, line: int, col: int, label_part: str) -> None:
    with pytest.raises(LitmusSyntaxError) as info:
        parse(text, "bad.litmus")
    err = info.value
    assert (err.span.line, err.span.column) == (line, col)
    assert label_part in err.message
    rendered = err.render()
    assert rendered.startswith(f"bad.litmus:{line}:{col}: ")
    assert "^" in rendered.splitlines()[-1]


def test_unexpected_eof_has_a_real_location() -> None:
    text = HEAD + "rule r reject when f("
    with pytest.raises(LitmusSyntaxError) as info:
        parse(text, "eof.litmus")
    assert info.value.span.start == len(text)
    assert info.value.span.line == 2
    assert "end of file" in info.value.message and info.value.expected


def test_invalid_escape_and_bad_placeholder() -> None:
    with pytest.raises(LitmusSyntaxError, match="invalid escape"):
        parse(HEAD + 'let x = "\\d"')
    with pytest.raises(LitmusSyntaxError) as info:
        parse(HEAD + 'rule r reject when true because "a {b.}"', "m.litmus")
    assert info.value.span.line == 2
    with pytest.raises(LitmusSyntaxError, match="unmatched brace"):
        parse(HEAD + 'rule r reject when true because "a } b"')


def test_nesting_and_size_limits() -> None:
    assert parse(HEAD + "let x = " + "(" * 500 + "1" + ")" * 500)  # parentheses add no depth
    deep = HEAD + "let x = " + "[" * 500 + "1" + "]" * 500
    with pytest.raises(LitmusSyntaxError, match="nested"):
        parse(deep)
    nots = HEAD + "let x = " + "not " * 500 + "true"
    with pytest.raises(LitmusSyntaxError, match="nested"):
        parse(nots)
    with pytest.raises(LitmusSyntaxError, match="limit"):
        parse(HEAD + "# " + "x" * 1_100_000)


def test_comments_are_collected_with_positions() -> None:
    rs = parse(HEAD + '# first\nlet x = "a # not a comment" # trailing\n')
    assert [c.text for c in rs.comments] == ["# first", "# trailing"]
    assert rs.comments[1].span.line == 3
