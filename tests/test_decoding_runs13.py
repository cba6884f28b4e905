"""Runs of escapes decoded at once (issue 13): `percent_decode` and `json_unescape` give, on any
text, what decoding escape by escape gave: urllib's `unquote` and the one-escape-per-match
substitution they replaced (kept here as the oracle)."""

from __future__ import annotations

import re
import urllib.parse

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoding
from litmus_rules.domain.decoding import json_unescape, percent_decode

# ---- the oracles -----------------------------------------------------------------------------------

_ORACLE_RE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u\{([0-9a-fA-F]{1,6})\}"
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\x([0-9a-fA-F]{2})"
    r"|\\([\"\\/bfnrt'])"
)
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}


def _oracle_escape(m: re.Match[str]) -> str:
    hi, lo, astral, bmp, byte, simple = m.groups()
    if hi is not None:
        return chr(0x10000 + ((int(hi, 16) - 0xD800) << 10) + (int(lo, 16) - 0xDC00))
    if astral is not None:
        cp = int(astral, 16)
        return chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else m.group()
    if bmp is not None:
        cp = int(bmp, 16)
        return m.group() if 0xD800 <= cp <= 0xDFFF else chr(cp)
    if byte is not None:
        return chr(int(byte, 16))
    return _SIMPLE[simple]


def oracle_json_unescape(text: str) -> str:
    return _ORACLE_RE.sub(_oracle_escape, text)


def oracle_unquote(text: str) -> str:
    return urllib.parse.unquote(text, errors="replace")


# ---- texts made of escapes and what sits between them -----------------------------------------------

_HEX = "0123456789abcdefABCDEF"
_UNITS = ["0041", "00e9", "4e2d", "d83d", "de00", "D83D", "DE00", "dbff", "dfff", "dc00", "d800", "0000", "ffff",
          "feff", "200b", "00", "12", "zz"]


def _json_piece() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(_UNITS).map(lambda u: "\\u" + u),
        st.text(_HEX, min_size=0, max_size=3).map(lambda h: "\\x" + h),
        st.text(_HEX, min_size=0, max_size=7).map(lambda h: "\\u{" + h + "}"),
        st.sampled_from(['\\"', "\\\\", "\\/", "\\n", "\\q", "\\", "u", "x", "{", "}", "a", "é", "\ud800", "😀", " "]),
    )


def _percent_piece() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(_HEX, min_size=2, max_size=2).map(lambda h: "%" + h),
        st.sampled_from(["%C3", "%A9", "%E2%82", "%AC", "%F0%9F%98", "%80", "%FF", "%25", "%2541", "%", "%4", "%G1"]),
        st.sampled_from(["a", "+", " ", "é", "中", "\ud800", "\udcff", "😀", "%%", "\x00"]),
    )


# ---- the properties --------------------------------------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(st.lists(_json_piece(), max_size=30).map("".join))
def test_json_unescape_is_the_escape_by_escape_substitution(text: str) -> None:
    assert json_unescape(text) == oracle_json_unescape(text)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_percent_piece(), max_size=30).map("".join))
def test_one_percent_pass_is_urllib_unquote(text: str) -> None:
    assert decoding._unquote(text) == oracle_unquote(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_both_on_any_text(text: str) -> None:
    assert json_unescape(text) == oracle_json_unescape(text)
    assert decoding._unquote(text) == oracle_unquote(text)


def test_long_runs_decode_whole() -> None:
    units = "".join(f"\\u{cp:04x}" for cp in range(0x20, 0xD800, 7))
    assert json_unescape(units) == oracle_json_unescape(units) == "".join(chr(cp) for cp in range(0x20, 0xD800, 7))
    pairs = "\\ud83d\\ude00" * 1000 + "\\ud83d" + "\\u0041" * 3
    assert json_unescape(pairs) == "😀" * 1000 + "\\ud83dAAA"
    latin = "".join(f"\\x{b:02x}" for b in range(256))
    assert json_unescape(latin) == bytes(range(256)).decode("latin-1")
    text = "".join(f"%{b:02X}" for b in "aé中😀".encode()) * 500 + "%E2%82" + "x%AC"
    assert percent_decode(text) == "aé中😀" * 500 + "\ufffdx\ufffd" == oracle_unquote(text)
    assert percent_decode("%2541%252541") == "AA"  # to a fixed point, as before
