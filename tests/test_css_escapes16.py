"""CSS escapes (`decoding.css_unescape`, form "css unescaped"): two or more in a row are decoded
("\\6c\\63", "\\6c \\63", "\\00006c"); a lone one, a Windows path with a hex-looking folder, and
text without escapes are left as they are."""

from __future__ import annotations

import pytest

from litmus_rules.domain.decoding import css_unescape
from litmus_rules.domain.matching import first_leak, leaks

TOKEN = "lc-5f0e9a1d7c3b"


@pytest.mark.parametrize("text", [
    "".join(f"\\{ord(c):x}" for c in TOKEN), "".join(f"\\{ord(c):x} " for c in TOKEN),
    "".join(f"\\{ord(c):06x}" for c in TOKEN), "".join(f"\\{ord(c):X}\t" for c in TOKEN),
    "lc-\\35\\66 0e9a1d7c3b",  # two escaped characters inside the token
])
def test_css_escapes_decode(text: str) -> None:
    witness = leaks(TOKEN, f"content: '{text}';")
    assert witness is not None and witness.transform == "css unescaped", witness
    assert first_leak(TOKEN, ["a plain text", f"content: '{text}';"]) == (1, witness)


@pytest.mark.parametrize("text", [
    "C:\\Users\\dev\\app", "one \\6c alone", "no escapes here", "\\u006c\\u0063", "\\xff\\x00",
])
def test_lone_escapes_and_paths_are_left(text: str) -> None:
    assert css_unescape(text) == text


def test_a_code_point_out_of_range_is_a_replacement_character() -> None:
    assert css_unescape("\\110000\\0 x") == "\ufffd\ufffdx"
