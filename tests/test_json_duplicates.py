"""The fast JSON path finds exactly the documents with a repeated key that the stdlib path finds.

`jsontext.decode` reads a whole-text document with jiter (`catch_duplicate_keys`) when it is
installed, and falls back to the stdlib path (`_exact`: a hook per object) on anything jiter
refuses. The stdlib path is the contract: for every text, `decode` must give the same value, or the
same error (message, code, position), as `_exact`. Texts are generated with and without repeated
keys, nested, with keys spelled with escapes (`"a"` and `"\\u0061"` are the same key), odd numbers,
surrogates, control characters and whitespace.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.io import jsontext
from litmus_rules.io.jsontext import BadInput

pytestmark = pytest.mark.skipif(jsontext._accelerator() is None, reason="jiter is not installed: one path only")

DEPTH = 200


def _outcome(read: Any, text: str) -> tuple[str, Any]:
    try:
        value, end = read(text, jsontext.ws(text, 0), DEPTH)
    except BadInput as e:
        return "error", (e.message, e.code, e.pos)
    return "value", (_canonical(value), type(value).__name__, end)


def _canonical(value: Any) -> Any:
    """Equal values compare equal (NaN included); int, float and bool stay apart."""
    if isinstance(value, dict):
        return ("dict", [(k, _canonical(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_canonical(v) for v in value])
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else repr(value))
    return (type(value).__name__, value)


def _same(text: str) -> tuple[str, Any]:
    fast, slow = _outcome(jsontext.decode, text), _outcome(jsontext._exact, text)
    assert fast == slow, text
    return fast


# ---- generated texts ----------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "ab", "é", "\u212a", "a\"", "a\\", "", "😀"])


def _spell(key: str, draw: Any) -> str:
    """A key as JSON text, each character plain or escaped: different texts, one key."""
    out = []
    for ch in key:
        how = draw(st.sampled_from(["plain", "u", "u"])) if ch not in "\"\\" else "u"
        if how == "plain":
            out.append(ch)
        elif ord(ch) > 0xFFFF:  # a surrogate pair escape, as json.dumps writes it
            out.append(json.dumps(ch)[1:-1])
        else:
            out.append(f"\\u{ord(ch):04x}" if draw(st.booleans()) else f"\\u{ord(ch):04X}")
    return '"' + "".join(out) + '"'


SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n  "])
NUMBERS = st.sampled_from(["0", "-0", "1", "-1.5e3", "1E400", "-1e400", "1e-400", "0.1", "1" * 30, "1" * 4301,
                           "12345678901234567890.5", "NaN", "Infinity", "-Infinity", "1.", "01", "+1"])
STRINGS = st.sampled_from(['"x"', '""', '"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"a\tb"', '"\\u0000"',
                           '"\\/"', '"\\x"', '"é"', '"\u2028"'])


@st.composite
def json_text(draw: Any, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["object", "object", "array", "scalar"] if depth < 4 else ["scalar"]))
    sp = lambda: draw(SPACE)  # noqa: E731
    if kind == "scalar":
        return draw(st.one_of(NUMBERS, STRINGS, st.sampled_from(["true", "false", "null", "tru", "nul"])))
    if kind == "array":
        items = [draw(json_text(depth + 1)) for _ in range(draw(st.integers(0, 3)))]
        return "[" + sp() + ("," + sp()).join(items) + sp() + "]"
    pairs = []
    for _ in range(draw(st.integers(0, 4))):
        pairs.append(_spell(draw(KEYS), draw) + sp() + ":" + sp() + draw(json_text(depth + 1)))
    return "{" + sp() + ("," + sp()).join(pairs) + sp() + "}"


@settings(max_examples=200, deadline=None)
@given(json_text(), SPACE, SPACE)
def test_the_fast_path_flags_exactly_the_documents_the_hook_flags(text: str, before: str, after: str) -> None:
    _same(before + text + after)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_repeated_key_is_found_however_deep_and_however_spelled(data: st.DataObject) -> None:
    key = data.draw(KEYS)
    inner = "{" + _spell(key, data.draw) + ": 1, " + _spell(key, data.draw) + ": 1}"
    text = inner
    for _ in range(data.draw(st.integers(0, 5))):
        text = data.draw(st.sampled_from(['{"k": %s}', '[1, %s]', '{"a": [%s], "b": 2}'])) % text
    kind, (message, code, _) = _same(text)
    assert kind == "error" and message == f"duplicate key `{key}`" and code == jsontext.UNPARSEABLE


# ---- the edges ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"a": 1, "\\u0061": 2}', '{"a": {"x": 1, "x": 1}}', '{"a": 1, "b": {"a": 2}}',
    "[" * 250 + "]" * 250, "[" * 150 + "]" * 150, "1" * 4301, '"\\ud800"', "NaN", '{"a": 1} x', '{"a": 1}\x0b',
    '{"a": 1,}', "", "  ", '{"a": "\\u0000"}', '"\\udc00\\ud800"', '{"a\\"": 1, "a\\u0022": 2}',
])
def test_edge_texts_read_alike(text: str) -> None:
    _same(text)


def test_a_document_inside_an_array_file_is_read_by_the_stdlib_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # jiter reads whole texts only: an element of a JSON array file never goes through it.
    class Refuse:
        @staticmethod
        def from_json(*_: Any, **__: Any) -> Any:
            raise AssertionError("jiter used on part of a text")

    monkeypatch.setattr(jsontext, "_jiter", Refuse)
    text = '[{"a": 1}, {"b": 2, "b": 3}]'
    assert jsontext.decode(text, 1, DEPTH) == ({"a": 1}, 9)
    with pytest.raises(BadInput, match="duplicate key `b`"):
        jsontext.decode(text, 11, DEPTH)
