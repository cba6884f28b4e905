"""Disguises the decoders used to miss: an escape inside an escape of another kind
(`decoding.unescape_all`) and combining marks between letters (the confusable skeleton)."""

from __future__ import annotations

import unicodedata

import pytest

from litmus_rules.domain.decoding import ESCAPES_MAX_LAYERS, LimitUnknown, unescape_all
from litmus_rules.domain.matching import leaks
from litmus_rules.domain.normalize import Undecodable, forms
from litmus_rules.domain.transforms import _combining_marks, skeleton, skeleton_key


@pytest.mark.parametrize(("text", "decoded"), [
    ("\\u0026#108;\\u0026#99;", "lc"),  # JSON escape of an HTML entity
    ("&#92;u006c&#92;u0063", "lc"),  # HTML entity of a JSON escape
    ("\\u0025\\u0036\\u0063", "l"),  # JSON escapes of a percent escape
    ("\\u0026amp;#37;6c", "l"),  # four layers, three kinds
    ("\\\\u006c", "\\u006c"),  # JSON escaping: one layer, as json_unescape
    ("plain text, 100% & done", "plain text, 100% & done"),  # nothing to decode: the text itself
])
def test_escapes_are_decoded_together_to_a_fixed_point(text: str, decoded: str) -> None:
    assert unescape_all(text) == decoded
    if "\\" not in decoded:  # (JSON decoding is not idempotent: "\\u006c" is a JSON escape again)
        assert unescape_all(decoded) == decoded


def _nested(layers: int) -> str:
    """"l" under `layers` escapes, JSON and HTML by turns, each escaping the one before's lead."""
    text = "&#108;"
    for _ in range(layers):
        text = "\\u0026" + text[1:] if text[0] == "&" else "&#92;" + text[1:]
    return text


def test_more_layers_than_the_limit_are_unknown_not_half_decoded() -> None:
    assert unescape_all(_nested(2 * ESCAPES_MAX_LAYERS - 2)) == "l"
    deep = _nested(2 * ESCAPES_MAX_LAYERS + 2)
    with pytest.raises(LimitUnknown, match="ESCAPES_MAX_LAYERS"):
        unescape_all(deep)
    assert any(isinstance(f, Undecodable) and f.name == "escapes decoded" for f in forms(deep))


def test_a_single_kind_of_escape_adds_no_form_of_its_own() -> None:
    # one decoder alone makes the same text: the joint decoder's form would repeat it
    names = [f.name for f in forms("ref &#108;&#99;-5f0e") if not isinstance(f, Undecodable)]
    assert "html unescaped" in names and "escapes decoded" not in names


def test_the_skeleton_drops_every_combining_mark() -> None:
    marks = _combining_marks()
    assert len(marks) > 1500 and all(unicodedata.category(m) in ("Mn", "Me") for m in marks)
    assert skeleton("".join(f"a{m}" for m in marks)) == "a" * len(marks)
    assert skeleton_key("l\u0307c\u0307-\u03055\u20dd") == "lc-5"


@pytest.mark.parametrize("mark", ["\u0301", "\u0307", "\u0323", "\u0336", "\u20dd", "\u0e31", "\u05b4", "\u1ab0"])
def test_a_canary_with_a_mark_on_each_character_leaks(mark: str) -> None:
    canary = "lc-5f0e9a1d7c3b"
    witness = leaks(canary, "ref " + "".join(c + mark for c in canary) + ".")
    assert witness is not None and "confusable skeleton" in witness.transform
