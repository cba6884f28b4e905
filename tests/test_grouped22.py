"""The grouped decoder on texts joined by NUL decodes the runs it decodes in each text on its own,
so it makes the same spans (in another order; session 22), and `grouped.grouped_many` (session
23), which gives each run to its text, makes of each text what `grouped_text` makes of it alone.
The haystack narrows the texts the grouped hint matched (20,000 short texts with a four-digit
number and a word) to those the decoder makes something of, by one such call."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import textmemo
from litmus_rules.domain import grouped
from litmus_rules.domain.grouped import grouped_many, grouped_text
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
    alone = [grouped_text(text) for text in texts]
    each = [span for made in alone for span in made.split("\n") if span]
    assert sorted(filter(None, spans.split("\n"))) == sorted(each)
    grouped.clear_memo()
    assert grouped_many(texts) == alone


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


def test_the_spans_of_a_text_come_kind_by_kind() -> None:
    # hex groups, then decimal codes, then base32, whatever their order in the text (as before
    # session 23's rewrite of grouped_text around the kinds), alone and among other texts
    text = "108, 99, 45, 53, 102, 48 then 6c:63:2d:35:66:30:65 then NRRS2NLGGBSTSYJR"
    grouped.clear_memo()
    assert grouped_text(text) == "lc-5f0e\nlc-5f0\nlc-5f0e9a1"
    grouped.clear_memo()
    assert grouped_many(["x", text, "bGMt NWYw ZTlh MWQ3 YzNi"]) == ["", "lc-5f0e\nlc-5f0\nlc-5f0e9a1", "lc-5f0e9a1d7c3b"]
