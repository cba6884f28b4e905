"""`grouped.nothing_grouped` (session 22): the grouped decoder on texts joined by NUL decodes the
runs it decodes in each text on its own, so it makes the same spans (in another order), and
nothing for all of them exactly where it makes nothing of each. The haystack narrows the texts the
grouped hint matched (20,000 short texts with a four-digit number and a word) by one such call."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import textmemo
from litmus_rules.domain.grouped import grouped_text, nothing_grouped
from litmus_rules.domain.joined import Haystack
from litmus_rules.domain.matching import first_leak, leaks

from _helpers import first_one_by_one, forget_searches, search_outcome

TOKEN = "lc-5f0e9a1d7c3b"
# pieces of every run the decoder reads (base64 and hex groups, decimal codes, base32, spelt-out
# tokens, binary, spaced escapes), their separators, and what stands around them
PIECES = ["bGMt", "NWYw", "ZTlh", "MWQ3", "YzNi", " ", "\t", "6c", "63", "2d", ":", "-", ",", ", ", "0x6c", "108",
          "99", "45", "NRRS2NLGGBSTSYJR", "l", "c", "5", "f", "0", ".", "01101100", "\\x6c", "&#108;", "%6C", "\\154",
          "=", "==", "a", "1000", "say", "é", "\n", "/", "_", "·", "|", "*", "QUJD", "ABCD", "1", "2"]
texts_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=16).map("".join), min_size=1, max_size=6)


@settings(max_examples=500, deadline=None)
@given(texts_st)
@example(["bGMt NWYw", "ZTlh MWQ3 YzNi"])  # a run at a text's start, after the NUL
@example(["6c:63:2d:35:66", "30"])  # a run at a text's end, before the NUL
@example(["1000 say", "x"])  # what the hint takes for groups, and decodes to nothing
def test_the_join_makes_the_spans_of_the_texts(texts: list[str]) -> None:
    with textmemo.transient():
        spans = grouped_text("\0".join(texts))
    each = [span for text in texts for span in grouped_text(text).split("\n") if span]
    assert sorted(filter(None, spans.split("\n"))) == sorted(each)
    assert nothing_grouped(texts) == (not each)


def test_texts_the_hint_takes_for_groups_are_plain_when_the_join_makes_nothing() -> None:
    texts = tuple(f"arg {1000 + i} say" for i in range(50))
    assert all(grouped_text(t) == "" for t in texts)
    hay = Haystack(texts)
    assert hay._hinted(hay._joins.raw)[1] == set()
    assert hay.changed == []


def test_a_grouped_token_among_them_is_found_where_text_by_text_finds_it() -> None:
    texts = [f"arg {1000 + i} say" for i in range(50)] + ["x bGMt NWYw ZTlh MWQ3 YzNi y"] + ["tail"]
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(TOKEN, t), texts))
    assert expected is not None and expected[0] == 50
    forget_searches()
    assert search_outcome(lambda: first_leak(TOKEN, texts)) == expected
