"""Base64 and hex written in groups (domain/grouped.py): what decodes, what does not, and that a
search of many texts at once (joined.py) tests on its own every text whose groups decode."""

from __future__ import annotations

import base64

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import joined
from litmus_rules.domain.grouped import grouped_hint, grouped_text
from litmus_rules.domain.matching import leaks
from _helpers import assert_changed_texts_are_not_plain, assert_hint_finds_changes

TOKEN = "lc-5f0e9a1d7c3b"
RAW = TOKEN.encode()
B64 = base64.b64encode(RAW).decode()


@pytest.mark.parametrize("text", [
    " ".join(B64[i:i + 4] for i in range(0, len(B64), 4)),
    "\t".join(B64[i:i + 4] for i in range(0, len(B64), 4)),
    ":".join(f"{b:02x}" for b in RAW),
    "-".join(f"{b:02X}" for b in RAW),
    " ".join(f"{b:02x}" for b in RAW),
    ", ".join(f"0x{b:02x}" for b in RAW),
    "".join(f"0x{b:02x} " for b in RAW),
    " ".join(RAW[i:i + 2].hex() for i in range(0, len(RAW), 2)),  # xxd's pairs, the last one short
    ":".join(RAW[i:i + 2].hex() for i in range(0, len(RAW), 2)),
    " ".join(RAW[i:i + 4].hex() for i in range(0, len(RAW), 4)),  # groups of four bytes
    " ".join(B64[i:i + 8] for i in range(0, len(B64), 8)),  # base64 in groups of eight
    " ".join(str(b) for b in RAW), ",".join(str(b) for b in RAW), "; ".join(str(b) for b in RAW),  # char codes
    base64.b32encode(RAW).decode(), base64.b32encode(RAW).decode().rstrip("="),
    " ".join(TOKEN), ".".join(TOKEN), "-".join(TOKEN), "\u00b7".join(TOKEN),  # spelt out
])
def test_a_token_written_in_groups_decodes(text: str) -> None:
    assert grouped_text(f"see ({text}) here") == TOKEN
    witness = leaks(TOKEN, f"see ({text}) here")
    assert witness is not None and witness.transform == "grouped encodings"


@pytest.mark.parametrize("before", ["+", "/", "-", "_", "é", "\n"])
def test_a_run_after_any_character_that_is_not_its_own_decodes(before: str) -> None:
    # (each run with the characters it is made of: one of them before it makes a longer word)
    for run, alphabet in ((" ".join(TOKEN), "_-"), (base64.b32encode(RAW).decode(), ""),
                          (":".join(f"{b:02x}" for b in RAW), ""), (",".join(str(b) for b in RAW), "")):
        if before not in alphabet:
            assert TOKEN in grouped_text(f"x {before}{run} y"), (before, run)


@pytest.mark.parametrize("text", ["Use the code {} when asked.", "{} then more words here", "read this {}"])
def test_base64_groups_next_to_four_letter_words_decode(text: str) -> None:
    # "code", "when", "then", "more", "this" read as groups of the run: it is decoded without them too
    groups = " ".join(B64[i:i + 4] for i in range(0, len(B64), 4))
    assert TOKEN in grouped_text(text.format(groups)).split("\n")


def test_char_codes_from_a_call_decode() -> None:
    call = "String.fromCharCode(" + ",".join(str(b) for b in RAW) + ")"
    assert grouped_text(call) == TOKEN


@pytest.mark.parametrize("text", [
    "Send your data here now",  # four-letter words
    "Send FULL data to the pre-flight TODO list",  # words that look encoded, decoding to bytes
    "User Email", "Last Name Here",
    "at 2022-02-17 09:00:00, 12:30:45 and 2026-11-30",  # separators mixed
    "uuid 550e8400-e29b-41d4-a716-446655440000",  # groups of 4-12 digits
    "10.0.0.1 and 192.168.1.254", "6c:63:2d",  # fewer than five bytes
    "Card 4543 7987 5987 1234", "[1, 2, 3, 4, 5, 6]", "[200, 300, 400, 500, 600]",
    "CONFIGURATIONFILES", "SHA256 0123456789abcdef", "v1.2.3.4.5", "I am a b c d e f g", "x-y-z",
])
def test_prose_numbers_and_ids_give_nothing(text: str) -> None:
    assert grouped_text(text) == ""


def test_a_run_whose_last_group_alone_looks_encoded_is_hinted() -> None:
    # "Xzpq" and "Mjdp" hold only lower-case letters past their first character, "dDdr" does not
    text = "ref Xzpq Mjdp dDdr."
    assert grouped_text(text) == "_:j27it7k"
    assert grouped_hint().search(text) is not None
    assert 0 in joined.Haystack((text, "plain")).changed


def test_junk_that_decodes_to_punctuation_is_not_kept() -> None:
    # printable bytes, but not text: fewer than three quarters letters, digits and "-_./:@"
    junk = base64.b64encode(b"~)^ +!{}|<>?").decode()
    assert grouped_text(" ".join(junk[i:i + 4] for i in range(0, len(junk), 4))) == ""


_PIECES = st.sampled_from([
    B64[:4], B64[4:8], B64[8:12], B64[12:], "bGMt", "Q0FO", "Send", "data", "FULL", "2026", "6c", "63", "2d",
    "0x6c", "0X2D", "6c63", " ", "  ", "\t", ":", "-", ",", ", ", ".", "\n", "=", "x", "é", "\u200b", "\uff1a",
    "ＱＵＪＤ", "\x00", "Xzpq", "Mjdp", "dDdr", "108", "99", "45", "NRRS", "2NLG", "GBST", "SYJR", "MQ3W",
    "l c - 5 f 0 ", "e.9.a.1.", "d", "+", "/",
    "01101100", "01100011 ", "\\x6c ", "\\x63", "&#108; ", "%6C ", "\\154 ", "\\u006c ",  # session 16
])
_TEXTS = st.lists(st.lists(_PIECES, max_size=14).map("".join), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_TEXTS)
def test_the_hint_is_found_wherever_groups_decode(texts: list[str]) -> None:
    assert_hint_finds_changes(texts, lambda form: bool(grouped_text(form)), grouped_hint())


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_TEXTS)
def test_a_text_whose_groups_decode_is_never_plain(texts: list[str]) -> None:
    assert_changed_texts_are_not_plain(texts, lambda text: bool(grouped_text(text)), TOKEN)
