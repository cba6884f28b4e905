"""The facts that let `transforms.clean` derive its result from the NFKC form and drop the format
strips after NFKC (checked over every code point), and that the faster paths for large texts
(formatchars.strip_each, encoded._all_runs, the batched decoders) give the former results."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import encoded, formatchars, normalize, textmemo, transforms

_FORMAT = regex.compile(
    r"[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}--[\U000E0000-\U000E007F]]+", regex.V1)


def old_strip(text: str) -> str:
    return text if text.isascii() else _FORMAT.sub("", text)


def old_tags(text: str) -> str:
    return re.sub("[\U000e0000-\U000e007f]+", lambda m: "".join(
        chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E), text)


def old_clean(text: str) -> str:
    # the former chain: format characters removed > tags decoded > NFKC > format characters removed
    return old_strip(unicodedata.normalize("NFKC", old_tags(old_strip(text))))


def old_full(text: str) -> str:
    return old_strip(unicodedata.normalize("NFKC", old_clean(text).casefold()))


@cache
def _every() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


@cache
def _format_set() -> frozenset[str]:
    return frozenset("".join(_FORMAT.findall("".join(_every()))))


def _per_char(transform_name: str, chars: list[str]) -> list[str]:
    """The NFKD (casefold) of each character but NUL."""
    # NUL is a starter that nothing decomposes to or composes with: joined by NUL, each character's
    # NFKD (casefold) is its own piece
    chars = [c for c in chars if c != "\0"]  # (NUL: its own NFKD and casefold)
    joined = "\0".join(chars)
    out = (unicodedata.normalize("NFKD", joined) if transform_name == "NFKD" else joined.casefold()).split("\0")
    assert len(out) == len(chars)
    return out


def test_format_characters_decompose_and_fold_among_themselves() -> None:
    fmt = _format_set()
    assert len(fmt) > 400
    # format characters are starters, never composed into or from anything
    assert [c for c in fmt if unicodedata.combining(c)] == []
    assert [c for c in fmt if unicodedata.decomposition(c) and not unicodedata.decomposition(c).startswith("<")] == []
    # the NFKD of a format character holds only format characters, that of any other none
    others = [c for c in _every() if c not in fmt]
    ordered = sorted(fmt)
    assert [c for c, d in zip(ordered, _per_char("NFKD", ordered)) if not set(d) <= fmt] == []
    assert _FORMAT.search("".join(_per_char("NFKD", others))) is None
    # casefold makes none from other characters
    assert _FORMAT.search("".join(_per_char("casefold", others))) is None


def test_the_joiner_class_admits_every_mark_and_every_second_of_a_composition() -> None:
    seconds = {chr(c) for c in [*range(0x1161, 0x1176), *range(0x11A8, 0x11C3)]}  # Hangul V and T
    for c in _every():
        decomposition = unicodedata.decomposition(c)
        if decomposition and not decomposition.startswith("<") and len(decomposition.split()) == 2:
            seconds.add(chr(int(decomposition.split()[1], 16)))
    joining = seconds | {c for c in _every() if unicodedata.combining(c)}
    joiner = textmemo.re2_compiled(transforms._FORMAT_THEN_JOINER_PATTERN)
    assert [hex(ord(c)) for c in joining if joiner.search("\u200b" + c) is None] == []
    assert joiner.search("\u200ba") is None  # (a letter does not join)


_PIECES = ["a", "e", "B", "D", "J", "ß", "İ", "ǰ", "ﬁ", "Ａ", "Ｄ", "𝐃", "①", "ａ", "а", "ο", "Ϲ", "한", "\u1100",
           "\u1161", "\u11a8", "\u3164", "\uffa0", "\u200b", "\u200c", "\u00ad", "\u2060", "\u202e", "\ufe0f",
           "\u034f", "\u180e", "\U000e0041", "\U000e0001", "\u0301", "\u0308", "\u0323", "\u030c", "\u0345",
           "\u0307", "\u0331", "é", "e\u0301", "😀", " ", "/", "ＱＵＪＤ", "ZXhmaWw=", "\n"]
texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_clean_and_normalised_are_the_former_chain(text: str) -> None:
    assert transforms.clean(text) == old_clean(text)
    assert transforms.full_normalise(text) == old_full(text)
    assert transforms.strip_format_chars(text) == old_strip(text)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(texts.filter(lambda t: not t.isascii()), st.integers(1, 2))
def test_large_texts_are_cleaned_and_stripped_as_before(text: str, times: int) -> None:
    big = (text + " ") * (formatchars.STRIP_EACH_MIN // (len(text) + 1) + 1) * times
    textmemo.clear_memo()
    assert transforms.strip_format_chars(big) == old_strip(big)
    assert transforms.clean(big) == old_clean(big)
    assert transforms.full_normalise(big) == old_full(big)


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_strip_each_gives_up_past_its_limit_and_the_substitution_strips(monkeypatch: pytest.MonkeyPatch,
                                                                         limit: int) -> None:
    monkeypatch.setattr(formatchars, "DISTINCT_MAX", limit)
    text = ("x\u200by\u00adz\U000e0041\u2060\ufe0f w " * 3000)
    textmemo.clear_memo()
    assert len(text) >= formatchars.STRIP_EACH_MIN
    assert formatchars.strip_each(text, text.encode()) is None  # five distinct ones (a tag among them)
    assert transforms.strip_format_chars(text) == old_strip(text) == "xyz\U000e0041 w " * 3000


def test_strip_each_keeps_tags_and_gives_back_a_text_without_format_characters_itself() -> None:
    text = "abc \U000e0041\U000e007f é" * 4000
    assert formatchars.strip_each(text, text.encode()) is text
    assert formatchars.strip_each("a\u200bb\u200b", "a\u200bb\u200b".encode()) == "ab"


_RUN_PIECES = ["QUJDREVG", "ZXhmaWw", "deadbeef", "ab", "A", "+/", "_-", " ", "\t", "\r", "é", "Ａ", "😀", "\x00", "?",
               "\ud800", "========", "12345678"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_RUN_PIECES), st.text(max_size=3)), max_size=30).map("".join))
def test_all_runs_are_the_runs_the_pattern_finds(text: str) -> None:
    assert encoded._all_runs(text) == encoded._B64_RUN.findall(text)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ABCDEFabcdefghXYZ0123456789+/_-", min_size=8, max_size=40), min_size=9, max_size=40))
def test_batched_decoders_agree_with_one_run_at_a_time(runs: list[str]) -> None:
    encoded._decoded_memo.clear()
    batched = encoded._decode_b64_many(runs)
    assert batched == [encoded._decode_b64_one(run.translate(encoded._URL_TO_STD)) for run in runs]
    hexes = [run for run in runs if re.fullmatch("[0-9A-Fa-f]+", run)] * 3
    assert encoded._hex_found(hexes) == [encoded._hex_one(run) for run in hexes]


def test_printable_many_is_printable_of_each() -> None:
    raws = [b"", b"hello world", b"\xff\xfe\xfd\xfc", b"ok\x01\x02\x03\x04\x05", "привет".encode(), None, b"a\x00bcdefgh"]
    assert encoded._printable_many(raws) == [None if r is None else encoded._printable(r) for r in raws]


def test_a_large_non_ascii_text_has_the_forms_of_the_former_chain() -> None:
    text = ("Ｅｘ\u200bＦｉｌ ΑΒΓ ж\u0301 Ｂ\u0301 ＱＵＪＤＲＥＶＧ " * 2000)
    textmemo.clear_memo()
    views = {name: form for name, form, _ in (d for d in normalize.derivations(text) if isinstance(d, tuple))}
    assert views["normalised"] == old_full(text)
    assert views["format characters removed"] == old_strip(text)


_FEW_PIECES = ["a", "é", " ", "\u200b", "\u00ad", "\u2060", "\ufe0f", "\U000e0041", "\u034f", "\u180e", "\u0301",
               "\U000e0100", "\u3164", "\uffa0", "\u17b4", "\U0001d173", "😀"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_FEW_PIECES), max_size=60).map("".join), st.integers(0, 8))
def test_strip_found_is_the_substitution_or_gives_up_past_its_limit(text: str, found_max: int) -> None:
    """Cut around each character of the presence class (tags kept), or None past FOUND_MAX of them."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(formatchars, "FOUND_MAX", found_max)
        got = formatchars.strip_found(text, text.encode())
    present = len(formatchars._maybe_format().findall(text.encode()))
    if present > found_max:
        assert got is None
    else:
        assert got == old_strip(text) and (present or got is text)


def test_a_large_text_of_many_distinct_format_characters_a_few_times_each() -> None:
    """Decoded escapes of every code point: dozens of distinct ones (past DISTINCT_MAX), cut out
    by `strip_found`; past FOUND_MAX of them `strip_each` and the substitution still strip it."""
    fmt = sorted(_format_set())[:200]
    text = "".join(f"word{i} {c} " for i, c in enumerate(fmt * 2)) * 5
    assert len(text) >= formatchars.STRIP_EACH_MIN and len(set(text) & _format_set()) > formatchars.DISTINCT_MAX
    textmemo.clear_memo()
    assert transforms.strip_format_chars(text) == old_strip(text)
    assert formatchars.strip_found(text, text.encode()) is None  # 2,000 of them: past FOUND_MAX
    fewer = text[: len(text) // 5]
    assert formatchars.strip_found(fewer, fewer.encode()) == old_strip(fewer)
