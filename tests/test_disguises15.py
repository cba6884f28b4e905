"""Disguises the decoders used to miss (session 15): an escape inside an escape of another kind and
escapes of other languages (`decoding.unescape_all`), UTF-16 under base64 and hex, combining marks
and letter look-alikes (the confusable skeleton), and what joined.py must not take for plain."""

from __future__ import annotations

import base64
import unicodedata
from typing import Any

import pytest

from litmus_rules.domain import joined
from litmus_rules.domain.decoding import ESCAPES_MAX_LAYERS, LimitUnknown, nested_escapes, unescape_all
from litmus_rules.domain.matching import first_leak, leaks
from litmus_rules.domain.normalize import Undecodable, forms
from litmus_rules.domain.transforms import _combining_marks, skeleton, skeleton_key


@pytest.mark.parametrize(("text", "decoded"), [
    ("\\u0026#108;\\u0026#99;", "lc"),  # JSON escape of an HTML entity
    ("&#92;u006c&#92;u0063", "lc"),  # HTML entity of a JSON escape
    ("\\u0025\\u0036\\u0063", "l"),  # JSON escapes of a percent escape
    ("\\u0026amp;#37;6c", "l"),  # four layers, three kinds
    ("\\\\u006c", "\\u006c"),  # JSON escaping: one layer, as json_unescape
    ("plain text, 100% & done", "plain text, 100% & done"),  # nothing to decode: the text itself
    ("\\U0000006c\\U00000063", "lc"),  # Python's 8-digit escapes
    ("\\154\\143", "lc"),  # octal, as C and the shell write it
    ("%u006c%u0063", "lc"),  # IIS
    ("=6C=63=2D=35", "lc-5"),  # quoted-printable, two escapes or more
    ("id=12ab&x=1 a=3D", "id=12ab&x=1 a=3D"),  # one "=XX" is no escape
    ("\\u005c154", "l"),  # a JSON escape of an octal one
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


@pytest.mark.parametrize(("text", "nested"), [
    ("see \\x41\\u0041 &#65; %41 C:\\d1\\..\\x", False),  # every kind, side by side
    ("\\u0026#108;", True), ("%5Cu006c", True), ("&#37;6c", True), ("%3D6C%3D63", True),  # one inside another
    ("=6C=63", True), ("\\154\\143", True),  # escapes only the joint decoder reads
])
def test_the_joint_form_is_derived_where_escapes_nest(text: str, nested: bool) -> None:
    assert nested_escapes(text) is nested
    names = [f.name for f in forms(text) if not isinstance(f, Undecodable)]
    assert ("escapes decoded" in names) is nested


def test_the_skeleton_drops_every_combining_mark() -> None:
    marks = _combining_marks()
    assert len(marks) > 1500 and all(unicodedata.category(m) in ("Mn", "Me") for m in marks)
    assert skeleton("".join(f"a{m}" for m in marks)) == "a" * len(marks)
    assert skeleton_key("l\u0307c\u0307-\u03055\u20dd") == "lc-5"


@pytest.mark.parametrize(("encode", "family"), [
    (lambda t: base64.b64encode(t.encode("utf-16-le")).decode(), "base64"),  # PowerShell -EncodedCommand
    (lambda t: t.encode("utf-16-be").hex(), "hex"),
])
def test_a_canary_in_utf16_then_encoded_leaks(encode: Any, family: str) -> None:
    canary = "lc-5f0e9a1d7c3b"
    witness = leaks(canary, f"run -enc {encode('echo ' + canary)} now")
    assert witness is not None and witness.transform.startswith(family)


@pytest.mark.parametrize("mark", ["\u0301", "\u0307", "\u0323", "\u0336", "\u20dd", "\u0e31", "\u05b4", "\u1ab0"])
def test_a_canary_with_a_mark_on_each_character_leaks(mark: str) -> None:
    canary = "lc-5f0e9a1d7c3b"
    witness = leaks(canary, "ref " + "".join(c + mark for c in canary) + ".")
    assert witness is not None and "confusable skeleton" in witness.transform


@pytest.mark.parametrize("hidden", [
    "".join(f"={b:02X}" for b in b"lc-5f0e9a1d7c3b"),  # no backslash, "&" nor "%"
    "".join(f"%u{c:04x}" for c in b"lc-5f0e9a1d7c3b"),  # a "%" that percent-decoding leaves
    "".join(f"\uff05u{c:04x}" for c in b"lc-5f0e9a1d7c3b"),  # the same, in fullwidth (NFKC makes the "%")
])
def test_escapes_only_the_joint_decoder_reads_are_found_among_many_texts(hidden: str) -> None:
    texts = ["plain words", f"ref {hidden}.", "more plain words"]
    assert 1 in joined.Haystack(tuple(texts)).changed
    found = first_leak("lc-5f0e9a1d7c3b", texts)
    assert found is not None and found[0] == 1 and "escapes decoded" in found[1].transform


@pytest.mark.parametrize(("disguised", "plain"), [
    ("ᴇxꜰɪʟ", "exfil"),  # small capitals (no NFKC, no confusables entry for most)
    ("🇪🇽🇫🇮🇱", "EXFIL"),  # regional indicator symbols
    ("🅴🆇🅵🅸🅻", "EXFIL"),  # negative squared letters
    ("🅔🅧🅕🅘🅛", "EXFIL"),  # negative circled letters
])
def test_letter_look_alikes_named_for_a_letter_have_its_skeleton(disguised: str, plain: str) -> None:
    assert skeleton_key(disguised) == skeleton_key(plain)
    witness = leaks("exfil-canary-42", f"send {disguised}-canary-42 now")
    assert witness is not None and "confusable skeleton" in witness.transform
