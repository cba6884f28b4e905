"""`normalize.encoded_forms` (a canary's base64, hex, percent and JSON-escaped spellings) writes
exactly what the per-byte loops it replaced wrote, for any text (surrogates, astral, NUL)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import normalize


def _per_byte(token: str) -> list[tuple[str, str]]:
    """The previous implementation, kept as the oracle."""
    raw = token.encode("utf-8", "surrogatepass")
    out: list[tuple[str, str]] = []
    for core in normalize._base64_cores(raw):
        out.append(("base64-encoded token", core))
        url = core.translate(str.maketrans("+/", "-_"))
        if url != core:
            out.append(("base64url-encoded token", url))
    out += [("hex-encoded token", raw.hex()), ("hex-encoded token", raw.hex().upper()),
            ("percent-encoded token", "".join(f"%{b:02X}" for b in raw)),
            ("percent-encoded token", "".join(f"%{b:02x}" for b in raw))]
    units = token.encode("utf-16-be", "surrogatepass")
    escaped = "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))
    return out + [("json-escaped token", escaped), ("json-escaped token", escaped.upper().replace("\\U", "\\u"))]


@settings(max_examples=1500, deadline=None)
@given(st.text(st.characters(codec=None)))
def test_the_forms_equal_the_per_byte_ones(token: str) -> None:
    assert normalize.encoded_forms(token) == _per_byte(token)


def test_edges() -> None:
    for token in ("", "A", "\x00", "\ud800", "\U0001f600", "EXFIL_CANARY-42"):
        assert normalize.encoded_forms(token) == _per_byte(token)
    assert ("percent-encoded token", "%41%42") in normalize.encoded_forms("AB")
