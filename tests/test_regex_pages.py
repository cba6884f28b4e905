"""`regexes._pages` (the pages of a text's non-ASCII characters, which decide how a regex is
rewritten for it) finds the same pages by its page-by-page scan as by hashing every character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import regexes


def _hashed(text: str) -> tuple[int, ...]:
    return tuple(sorted({ord(c) >> 8 for c in text if ord(c) > 0x7F}))


# ASCII, page edges (0x80, 0xff, 0x100), scripts, fullwidth, format characters, astral, tags
_CHARS = st.one_of(st.characters(max_codepoint=0x7F), st.sampled_from("\x80\xff\u0100\u04ff\u0500\uff21\u200b\U0001d400\U000e0041"),
                   st.characters())


@settings(max_examples=400, deadline=None)
@given(st.lists(_CHARS, max_size=300).map("".join), st.integers(0, 5), st.integers(1, 70))
def test_the_scan_finds_the_hashed_pages(text: str, scan_min: int, scan_max: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(regexes, "PAGE_SCAN_MIN", scan_min)  # scan short texts too, stop after few pages
        mp.setattr(regexes, "PAGE_SCAN_MAX", scan_max)
        assert regexes._pages.__wrapped__(text) == _hashed(text)


def test_a_large_text_with_many_pages() -> None:
    text = "a" * 5000 + "".join(chr(0x100 * p + 7) for p in range(1, 200)) + "\U0001f600" * 3
    assert regexes._pages(text) == _hashed(text) and len(_hashed(text)) == 200


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_CHARS, st.sampled_from("\ud800\udfff\udc00\U00010000\U0010ffff\U0001f600é")), max_size=200).map("".join))
def test_the_pages_of_every_plane_and_of_lone_surrogates(text: str) -> None:
    """`_hashed_pages` reads the pages from the middle bytes of the UTF-32 units: every plane, lone
    surrogates and page 0 (which ASCII shares) must come out as hashing each character finds them."""
    assert regexes._hashed_pages(text) == _hashed(text)


def test_an_empty_text_and_a_text_of_astral_characters() -> None:
    text = "".join(chr(cp) for cp in range(0x10000, 0x30000, 97))  # ~1,350 characters, 512 pages
    assert regexes._hashed_pages("") == () and regexes._hashed_pages(text) == _hashed(text)
