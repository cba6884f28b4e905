"""Issue 13, large non-ASCII texts: the faster paths of joined.py, regexes.py and matching.py give
what the slower ones they replace gave (kept here as oracles), on random texts.

- `regexes.utf8_pages` (an RE2 scan of the UTF-8) finds the pages `set(text)` finds;
- `joined._encoded_join` (a large piece's kept UTF-8, runs of small ones encoded together) is the
  join the haystack used to encode whole, with the same segment starts, and the haystack's forms
  are the old ones (the transform of each text, joined);
- `regexes.regex_probe_on` (the probe exact on a text's pages, which non-ASCII joins are searched
  with) matches wherever the pattern does, so the join finds the same first collision;
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import joined, partial, regexes, textmemo
from litmus_rules.domain.joined import SEP, Haystack, _encoded_join
from litmus_rules.domain.probes import FORMS
from litmus_rules.domain.matching import collides, first_collision
from litmus_rules.domain.regexes import RegexUnknown, _hashed_pages, regex_probe_on, regex_search, utf8_pages

from _helpers import first_one_by_one

# characters from many pages, the ones the normalisations change among them (format characters,
# tags, combining marks, fullwidth and mathematical letters, look-alikes, CJK, emoji)
_CHARS = st.one_of(
    st.sampled_from(list("aAeEoOkKsS_0123456789 -/\\%&") + [
        "\u200b", "\u200d", "\u00ad", "\u2060", "\u202e", "\ufe0f", "\u034f", "\U000e0041", "\U000e0020",
        "\u0301", "\u0308", "\u0327", "é", "ß", "İ", "ſ", "K", "ﬁ", "ς", "Σ", "а", "о", "е", "р", "с", "Ι",
        "Ｓ", "ｅ", "１", "𝐚", "𝐒", "的", "是", "😀", "\u3164", "\uffa0", "\u1100", "\u1161", "ㅏ", "\xa0", "´"]),
    st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)),
)
_TEXT = st.text(_CHARS, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_TEXT, min_size=1, max_size=30).map("".join), st.integers(0, 3))
def test_utf8_pages_are_the_pages_of_the_text(text: str, repeat: int) -> None:
    text = text * (1 + repeat * 50)
    assert utf8_pages(text.encode("utf-8")) == _hashed_pages(text)
    assert regexes._pages(text) == _hashed_pages(text)


def test_utf8_pages_past_the_scan_limit() -> None:
    # more pages than PAGE_SCAN_MAX: the rest are hashed
    text = "".join(chr((page << 8) | 0x41) for page in range(1, 3 * regexes.PAGE_SCAN_MAX)) * 50
    assert utf8_pages(text.encode("utf-8")) == _hashed_pages(text) == tuple(range(1, 3 * regexes.PAGE_SCAN_MAX))


def _old_join(pieces: list[str]) -> tuple[bytes, list[int]] | None:
    """How the haystack joined a form before (the oracle): the whole join encoded, each segment's
    start from a split of it; None when a piece holds a NUL."""
    text = SEP + SEP.join(pieces)
    if text.count(SEP) != len(pieces):
        return None
    data = text.encode("utf-8")
    starts = list(itertools.accumulate((len(piece) + 1 for piece in data[1:].split(b"\0")[:-1]), initial=1))
    return data, starts


@pytest.fixture
def small_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts of 8+ characters count as large (their UTF-8 and transforms kept), so that short
    random texts take the paths of large ones."""
    monkeypatch.setattr(textmemo, "MEMO_MIN", 8)
    monkeypatch.setattr(joined, "MEMO_MIN", 8)
    textmemo.clear_memo()


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(_TEXT, st.sampled_from(["", "a\x00b", "\x00"])), min_size=1, max_size=12))
def test_encoded_join_is_the_old_join(small_memo: None, pieces: list[str]) -> None:
    got = _encoded_join(pieces)
    expected = _old_join(pieces)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert (got.data, got.starts) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_TEXT, min_size=1, max_size=8))
def test_haystack_forms_are_the_old_forms(small_memo: None, texts: list[str]) -> None:
    hay = Haystack(tuple(texts))
    for name in FORMS:
        form = hay.form(name)
        pieces = hay._joins.text(name)
        expected = _old_join(pieces)
        assert form is not None and expected is not None
        assert (form.data, form.starts) == expected, name


_REGEXES = [r"\btransfer_ok_[0-9]{6}\b", r"secret\w+", r"[^a-z ]{3}", r"stra(ss|ß)e", r"\w{3}_\d", r"kelvin",
            r"(\w)\1", r"é+", r"[а-я]{2}", r"\bΣ", r"\S+\s\S"]


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_TEXT, min_size=1, max_size=6).map(" ".join), st.sampled_from(_REGEXES),
       st.sampled_from([(), ("ignorecase",)]))
def test_probe_on_pages_matches_wherever_the_pattern_does(text: str, pattern: str, flags: tuple[str, ...]) -> None:
    try:
        found = regex_search(pattern, text, flags)
    except RegexUnknown:
        return
    probe = regex_probe_on(pattern, flags, _hashed_pages(text))
    if found is not None and probe is not None:
        assert probe.search(text.encode("utf-8")) is not None


_SIGNALS = st.one_of(
    st.builds(lambda v, f: {"id": "r", "kind": "regex", "value": v, "flags": f}, st.sampled_from(_REGEXES),
              st.sampled_from([[], ["ignorecase"]])),
    st.builds(lambda v, f: {"id": "s", "kind": "substring", "value": v, "flags": f},
              st.sampled_from(["transfer_ok", "secret_value", "страсе", "ＳＥＣＲＥＴ", "se\u200bcret"]),
              st.sampled_from([[], ["ignorecase"]])),
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(st.one_of(_TEXT, st.sampled_from(["transfer_ok_123456", "secret_value", "SECRET"])),
                         max_size=5).map(" ".join), min_size=1, max_size=8),
       _SIGNALS, st.sampled_from([3, 6]))
def test_first_collision_in_large_non_ascii_texts(small_memo: None, monkeypatch: pytest.MonkeyPatch,
                                                  texts: list[str], signal: dict[str, Any], min_len: int) -> None:
    # every text takes the large-text paths: the grams by one RE2 scan, the pages by RE2
    monkeypatch.setattr(partial, "GRAM_SCAN_RE2_MIN", 0)
    monkeypatch.setattr(regexes, "PAGE_SCAN_MIN", 0)
    try:
        expected: Any = first_one_by_one(lambda text: collides(signal, text, min_len), texts)
    except RegexUnknown as exc:
        expected = ("raises", str(exc))
    textmemo.clear_memo()
    try:
        got: Any = first_collision(signal, texts, min_len)
    except RegexUnknown as exc:
        got = ("raises", str(exc))
    assert got == expected


