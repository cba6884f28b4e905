"""Lark's parse failures, translated into LitmusSyntaxError in the rule author's terms.

The catalogue below labels typical mistakes by example (lark's `match_examples`): when a failure
happens in the same parser state as one of the snippets, the author sees the label, not a list of
terminal names.
"""

from __future__ import annotations

from typing import Any, Callable

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from litmus_rules.errors import LitmusSyntaxError
from litmus_rules.source import Source, Span

_HEAD = 'ruleset r version "1"\n'

CATALOGUE: dict[str, list[str]] = {
    "a rule file starts with `ruleset NAME version \"VERSION\"`": [
        'rule a reject when true',
        'ruleset r\nrule a reject when true',
        'ruleset r version 1\n',
    ],
    "expected `reject when` or `reject unless` after the rule's name, doc, cite and tags": [
        _HEAD + 'rule a "doc" when true',
        _HEAD + 'rule a when true',
        _HEAD + 'rule a "doc" because "x"',
        _HEAD + 'rule a reject true',
    ],
    "`=` is not a comparison: write `==`": [
        _HEAD + "rule a reject when a = b",
        _HEAD + "let x = a = b",
    ],
    "use `and`, `or` and `not`, not `&&`, `||` and `!`": [
        _HEAD + "rule a reject when a && b",
        _HEAD + "rule a reject when a || b",
        _HEAD + "rule a reject when !a",
    ],
    "a quantifier is written `any x in xs: condition` (missing `:` or `in`)": [
        _HEAD + "rule a reject when any x in xs x",
        _HEAD + "rule a reject when any x xs: x",
        _HEAD + "rule a reject when all x in xs, y: x",
    ],
    "a `where` clause names values after a quantifier's bindings: `any x in xs where v = f(x): v`": [
        _HEAD + "rule a reject when any x in xs where v: x",
        _HEAD + "rule a reject when any x in xs where v == 1: x",
        _HEAD + "rule a reject when any x in xs where : x",
    ],
    "strings are written in double quotes": [
        _HEAD + "rule a reject when x == 'y'",
    ],
    "a classify block is a list of `\"label\" when CONDITION` cells ending with `\"label\" otherwise`": [
        _HEAD + "classify c\n  \"a\" when x\n",
        _HEAD + "classify c\n  a when x\n  \"b\" otherwise",
        _HEAD + "classify c\n  \"a\" x\n  \"b\" otherwise",
    ],
    "a message is written `because \"text with {placeholders}\"`": [
        _HEAD + "rule a reject when x because y",
    ],
    "unbalanced parentheses or brackets": [
        _HEAD + "rule a reject when (x",
        _HEAD + "rule a reject when [x",
        _HEAD + "rule a reject when f(x",
        _HEAD + "rule a reject when x)",
        _HEAD + "rule a reject when x]",
    ],
    "a declaration starts with `param`, `let`, `rule` or `classify`": [
        _HEAD + "rules a reject when x",
        _HEAD + "rule a reject when x\nfoo",
    ],
}

_CHARACTER_LABELS = {
    "=": "`=` is not a comparison: write `==`",
    "&": "use `and`, `or` and `not`, not `&&`, `||` and `!`",
    "|": "use `and`, `or` and `not`, not `&&`, `||` and `!`",
    "!": "use `and`, `or` and `not`, not `&&`, `||` and `!` (and `!=` for inequality)",
    "'": "strings are written in double quotes",
}

# Lark's names for terminals, in the words a rule author uses.
_FRIENDLY = {
    "NAME": "a name",
    "STRING": 'a string ("...")',
    "NUMBER": "a number",
    "$END": "end of file",
    "COMPARE_OP": "a comparison (== != < <= > >=)",
    "ADD_OP": "`+` or `-`",
}


def _describe(parser: Lark, names: set[str]) -> list[str]:
    by_name = {t.name: t for t in parser.terminals}
    out = set()
    for name in names:
        if name in _FRIENDLY:
            out.add(_FRIENDLY[name])
        elif name in by_name and by_name[name].pattern.type == "str":
            out.add(f"`{by_name[name].pattern.value}`")
        else:
            out.add(name.lower())
    return sorted(out)


def _char_pos(exc: UnexpectedCharacters) -> int:
    # lark declares `pos_in_stream = None` on UnexpectedInput; UnexpectedCharacters always sets the
    # lexer's (int) position in __init__, which the class-level declaration hides from mypy.
    return exc.pos_in_stream  # type: ignore[return-value]


def translate(
    exc: Exception,
    source: Source,
    parser: Lark | None = None,
    parse: Callable[[str], Tree[Any]] | None = None,
) -> LitmusSyntaxError:
    """Lark UnexpectedInput -> LitmusSyntaxError with a real span, even at end of input."""
    if not isinstance(exc, UnexpectedInput):
        raise exc
    label = None
    if isinstance(exc, UnexpectedCharacters):
        # Characters never reach a parser state, so label them by the character itself.
        pos = _char_pos(exc)
        label = _CHARACTER_LABELS.get(source.text[pos : pos + 1])
    if label is None and parse is not None:
        try:
            label = exc.match_examples(parse, CATALOGUE, use_accepts=True)
        except Exception:  # the catalogue is advice; never let it mask the real error
            label = None
    text_len = len(source.text)
    expected: set[str]  # (lark's stubs say UnexpectedEOF.expected holds Tokens: a str subclass)
    if isinstance(exc, UnexpectedEOF):
        start = end = text_len
        expected = set(exc.expected)
        found = "end of file"
    elif isinstance(exc, UnexpectedToken):
        tok: Token = exc.token
        if tok.type == "$END":
            start = end = text_len
            found = "end of file"
        else:
            start = tok.start_pos or 0
            end = tok.end_pos or start + 1
            found = f"`{tok}`"
        expected = set(exc.accepts or exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        start = _char_pos(exc)
        end = start + 1
        found = f"`{source.text[start:end]}`"
        expected = set(exc.allowed or ())
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        start = end = 0
        found = "input"
        expected = set()
    described = _describe(parser, expected) if parser is not None else sorted(expected)
    if label:
        message = f"{label} (found {found})"
    elif described:
        message = f"unexpected {found}; expected " + ", ".join(described[:8])
        if len(described) > 8:
            message += f" or {len(described) - 8} more"
    else:
        message = f"unexpected {found}"
    return LitmusSyntaxError(message, span=Span(source, start, end), expected=described, label=label)
