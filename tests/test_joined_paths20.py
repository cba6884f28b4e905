"""Texts that path canonicalisation changes are searched in the join (joined.py, session 20): the
join holds every text's path forms, canonicalised text by text, so such a text is plain when no
decoder changes it. The first leak and the first collision over texts full of paths (ASCII and
not, URLs running up to a text's end, dot segments, drives, file:) are the ones found text by text.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import textmemo
from litmus_rules.domain.joined import Haystack
from litmus_rules.domain.matching import collides, first_collision, first_leak, leaks

from _helpers import first_one_by_one, search_outcome

PIECES = ["/", "//", "..", ".", "./", "../", "x", "y", "Etc", "passwd", "file:", "FILE://", "localhost",
          "C:", "~", "http://h", "https://", "://", " ", "\n", "é", "É", "ﬁ", "／", "ａ", "Σ", "ß", "İ",
          "-", "_", "1", "a/b", "/x/../y", "lc-5f0e", "9a1d"]
TOKENS = ["/y", "x/y", "a/b", "/etc/passwd", "lc-5f0e9a1d", "ETC/PASSWD", "x/../y", "file:///x", "é/x", "http://h/"]
PATTERNS = [r"/etc/\w+", r"\bx/y\b", r"a/b", r"(?i)etc/passwd", r"h/\.\./"]

texts_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=25).map("".join), min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(texts_st, st.sampled_from(TOKENS))
@example(["http://h", "x/x/../y"], "x/y")  # a URL at a text's end ran on past the NUL of a join
def test_the_first_leak_is_the_one_found_text_by_text(texts: list[str], token: str) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(token, t), texts))
    textmemo.clear_memo()
    assert search_outcome(lambda: first_leak(token, texts)) == expected


@settings(max_examples=300, deadline=None)
@given(texts_st, st.one_of(
    st.sampled_from(TOKENS).map(lambda v: {"id": "s", "kind": "substring", "value": v}),
    st.sampled_from(TOKENS).map(lambda v: {"id": "s", "kind": "substring", "value": v, "flags": ["ignorecase"]}),
    st.sampled_from(PATTERNS).map(lambda v: {"id": "r", "kind": "regex", "value": v}),
), st.sampled_from([3, 6]))
def test_the_first_collision_is_the_one_found_text_by_text(texts: list[str], signal: dict[str, Any],
                                                           min_len: int) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: collides(signal, t, min_len), texts))
    textmemo.clear_memo()
    assert search_outcome(lambda: first_collision(signal, texts, min_len)) == expected


def test_a_changed_path_is_plain() -> None:
    texts = ("see /etc/../x", "ａ／／ｂ", "C:/a/./b", "plain", "file:///etc//passwd", "a \\ backslash")
    hay = Haystack(texts)
    assert hay.changed == [5] and hay.exact == []
    assert first_leak("/x", list(texts)) == (0, leaks("/x", texts[0]))
    assert first_leak("/etc/passwd", list(texts)) == (4, leaks("/etc/passwd", texts[4]))
