"""Bytes in binary and escapes spaced out (domain/grouped.py, session 16): what decodes, and what
does not. Each was SCORED before: the escape decoders turn "\\x6c \\x63 \\x2d" into a token spelt
out with a two-character separator, which no run read."""

from __future__ import annotations

import pytest

from litmus_rules.domain.grouped import grouped_hint, grouped_text
from litmus_rules.domain.matching import leaks

TOKEN = "lc-5f0e9a1d7c3b"
RAW = TOKEN.encode()


@pytest.mark.parametrize("text", [
    " ".join(f"{b:08b}" for b in RAW), "".join(f"{b:08b}" for b in RAW), ",".join(f"{b:08b}" for b in RAW),
    " ".join(f"\\x{b:02x}" for b in RAW), ", ".join(f"\\x{b:02X}" for b in RAW),
    " ".join(f"\\u{b:04x}" for b in RAW), " ".join(f"\\U{b:08x}" for b in RAW),
    " ".join(f"&#{b};" for b in RAW), "".join(f"&#x{b:x}; " for b in RAW).strip(),
    " ".join(f"%{b:02X}" for b in RAW), "-".join(f"%u{b:04x}" for b in RAW),
    " ".join(f"\\{b:03o}" for b in RAW),
])
def test_a_token_in_binary_or_spaced_escapes_decodes(text: str) -> None:
    assert TOKEN in grouped_text(f"send ({text}) now").split("\n")
    witness = leaks(TOKEN, f"send ({text}) now")
    assert witness is not None and "grouped encodings" in witness.transform, witness
    assert grouped_hint().search(text) is not None


def test_spaced_byte_escapes_are_read_as_utf8() -> None:
    word = "naïve-token-née"
    assert grouped_text(" ".join(f"\\x{b:02x}" for b in word.encode())) == word
    assert grouped_text(" ".join(f"%{b:02X}" for b in word.encode())) == word


@pytest.mark.parametrize("text", [
    "flags 0000000100000010 and 1010", "mask 11111111 00000000 11111111 00000000 11111111",
    "bits 01101000 01101001",  # fewer than five bytes
    "%20 %20 %20 %20 %20 %20",  # spaces: not text
    "a%20b%20c%20d%20e%20f", "C:\\x00 \\x01 and \\u0001",  # not five escapes with one separator
    "&#1; &#2; &#3; &#4; &#5; &#6;",  # control characters: not text
])
def test_numbers_and_sparse_escapes_give_nothing(text: str) -> None:
    assert grouped_text(text) == ""
