"""Texts a decoder changes are searched in the join (joined.py, session 21): what every decoder
makes of such a text is joined too, in each form of its chain, so such a text is tested on its own
only where the probe finds something in it or in a decoded text of it. The first leak, the first
collision and the ranked witnesses over texts full of escapes, entities, encoded runs, markup and
their fullwidth or zero-width disguises are the ones found text by text.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoded_pieces, joined, joins, textmemo, witnesses
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.joined import Haystack
from litmus_rules.domain.matching import collides, first_collision, first_leak, leaks
from litmus_rules.cache import BoundedCache
from litmus_rules.domain.regexes import RegexUnknown

from _helpers import first_one_by_one, forget_searches, search_outcome

TOKEN = "lc-5f0e9a1d7c3b"
# percent-decoding makes U+FFFD of a byte past ASCII: only the percent-encoded token finds this one
WIDE = "clé-5f0e9a1d"
_WIDE_PERCENT = "".join(f"%{b:02X}" for b in WIDE.encode())
_B64 = base64.b64encode(TOKEN.encode()).decode()
_FULLWIDTH = str.maketrans({c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))})

PIECES = [
    # escapes of every kind the decoders read, whole and cut
    "\\u006c", "\\u0063", "\\x2d", "\\n", "\\\\", "\\", "\\/", "\\ud83d\\ude00", "\\ud800", "\\u0000",
    "&amp;", "&lt;b&gt;", "&#108;", "&#x63;", "&", "&amp;amp;", "&#0;",
    "%6C", "%63", "%2d", "%25", "%", "%00", "%u006c", "=6C", "=63", "=\n", "\\6c ", "\\63",
    # encoded runs and groups, markup inside words
    _B64, _B64[:8], _B64[8:], TOKEN.encode().hex(), "bGMt NWYw", "6c:63:2d", "<b>", "</b>", "-\n",
    # the token and pieces of it, disguised
    TOKEN, TOKEN.upper(), _WIDE_PERCENT, _WIDE_PERCENT[:12], "lc-", "5f0e", "9a1d7c3b", TOKEN.translate(_FULLWIDTH), "\u200b", "\u00ad",
    "\uff3c", "\uff06", "\uff05", "C:\\dir\\file", "/x/../y", " ", "é", "ß", "İ", "a", "Z", "0", "1",
]
TOKENS = [TOKEN, WIDE, "lc-5f0e", "dir/file", "\\", "x/y", "lc-\n5f", "&", "%"]
PATTERNS = [r"lc-[0-9a-f]{12}", r"(?i)LC-5F0E", r"\bdir\b", r"5f0e\w+", r"[\\/]file", r"é+"]

texts_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), min_size=1, max_size=8)
signals_st = st.one_of(
    st.sampled_from(TOKENS).map(lambda v: {"id": "s", "kind": "substring", "value": v}),
    st.sampled_from(TOKENS).map(lambda v: {"id": "s", "kind": "substring", "value": v, "flags": ["ignorecase"]}),
    st.sampled_from(PATTERNS).map(lambda v: {"id": "r", "kind": "regex", "value": v}),
)


@settings(max_examples=400, deadline=None)
@given(texts_st, st.sampled_from(TOKENS))
@example(["plain", "lc\\u002d5f0e9a1d7c3b"], TOKEN)  # only the JSON-unescaped text holds it
@example(["plain", "%6c%63%2d5f0e9a1d7c3b"], TOKEN)  # only the percent-decoded one
@example(["plain", "x " + _B64 + " y"], TOKEN)  # only the base64-decoded one
@example(["plain", "\\u006c\\u0063\\u002d\\u0035\\u0066\\u0030\\u0065\\u0039\\u0061\\u0031\\u0064"
                   "\\u0037\\u0063\\u0033\\u0062"], TOKEN)  # the raw text holds the JSON-escaped token
@example(["plain", "x " + _WIDE_PERCENT], WIDE)  # and the percent-encoded one
def test_the_first_leak_is_the_one_found_text_by_text(texts: list[str], token: str) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(token, t), texts))
    forget_searches()
    assert search_outcome(lambda: first_leak(token, texts)) == expected


@settings(max_examples=400, deadline=None)
@given(texts_st, signals_st, st.sampled_from([3, 6]))
@example(["plain", "see C:\\dir\\file"], {"id": "r", "kind": "regex", "value": r"[\\/]file"}, 6)
def test_the_first_collision_is_the_one_found_text_by_text(texts: list[str], signal: dict[str, Any],
                                                           min_len: int) -> None:
    expected = search_outcome(lambda: first_one_by_one(lambda t: collides(signal, t, min_len), texts))
    forget_searches()
    assert search_outcome(lambda: first_collision(signal, texts, min_len)) == expected


def _every_hit(test: Any, texts: list[str]) -> Any:
    hits = []
    for text in texts:
        try:
            hits.append(test(text))
        except (LimitUnknown, RegexUnknown):
            hits.append("unknown")
    return hits


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map("".join), min_size=17, max_size=30),
       st.sampled_from(TOKENS), signals_st)
def test_ranked_witnesses_are_those_found_text_by_text(texts: list[str], token: str, signal: dict[str, Any]) -> None:
    """Past witnesses.SMALL_TEXTS texts the witnesses are collected from the join: every text
    ranked is one on which the search of that text alone succeeds, with its witness."""
    for ranked, test in ((lambda: witnesses.ranked_leaks(token, texts), lambda t: leaks(token, t)),
                         (lambda: witnesses.ranked_collisions(signal, texts), lambda t: collides(signal, t))):
        each = _every_hit(test, texts)
        forget_searches()
        got = search_outcome(ranked)
        if isinstance(got, tuple):  # raised: as the first text tested on its own raises
            first = next((i for i, hit in enumerate(each) if hit is not None), None)
            assert first is not None and each[first] == "unknown", (got, each)
            continue
        for i, witness in got:
            assert each[i] == witness, (i, texts[i])
        if any(hit is not None for hit in each):
            assert got, each


def test_a_text_a_decoder_changes_is_joined_with_its_decoded_texts() -> None:
    texts = ("plain words", "C:\\dir\\file1.txt", "R&amp;D", "%41", "x " + _B64, "x\x00y", "plain again")
    hay = Haystack(texts)
    assert hay.changed == [1, 2, 3, 4]
    assert hay.decoded == [1, 2, 3, 4]
    assert hay.exact == [5]  # a NUL: tested on its own
    assert first_leak(TOKEN, list(texts)) == (4, leaks(TOKEN, texts[4]))
    assert first_leak("R&D", list(texts)) == (2, leaks("R&D", texts[2]))


def test_a_text_whose_decoded_text_holds_a_nul_is_tested_on_its_own() -> None:
    # (a lone surrogate's escape is left as it is, "&#0;" is U+FFFD: decoders make neither)
    texts = ("plain", "a\\u0000b", "c\\ud800d", "%00", "&#0;", "fine \\n")
    hay = Haystack(texts)
    assert hay.changed == [1, 2, 3, 4, 5]
    assert hay.exact == [1, 3]
    assert hay.decoded == [2, 4, 5]
    for token in ("a\x00b", "a\\u0000b", "\x00", "c\\ud800d", "fine\n"):
        assert first_leak(token, list(texts)) == first_one_by_one(lambda t: leaks(token, t), list(texts))


def test_a_decoder_past_its_limit_makes_its_text_tested_on_its_own() -> None:
    layered = "lc-5f0e9a1d7c3b"
    for _ in range(20):  # past decoding.PERCENT_MAX_LAYERS
        layered = layered.replace("%", "%25").replace("-", "%2D")
    texts = ("plain", layered)
    assert Haystack(texts).exact == [1]
    try:
        expected: Any = leaks(TOKEN, layered)
    except LimitUnknown as exc:
        expected = ("raises", str(exc))
    try:
        got: Any = first_leak(TOKEN, list(texts))
    except LimitUnknown as exc:
        got = ("raises", str(exc))
    else:
        got = got if got is None else got[1]
    assert got == expected


def test_a_raw_literal_no_plain_text_holds_is_looked_for_in_texts_a_decoder_changes() -> None:
    # a probe's raw literals with a backslash or a percent escape are dropped for plain texts
    # (probes._plain_literals); a text a decoder changes may hold one, in its raw form or in a
    # decoded one ("\\\\u0041" is "\\u0041" JSON-unescaped)
    from litmus_rules.domain.probes import Probe

    for literal in ("\\u0041", "%41"):
        probe = Probe.of({"raw": [literal, "unrelated"]})
        assert literal.encode() in probe.escaped
        for text in (f"see {literal}", f"see \\{literal}"):
            texts = ("plain", text, "plain again")
            forget_searches()
            found = joined.first_match(texts, lambda: probe, lambda t: literal in t or None, ("literal", literal))
            assert found == (1, True)


def _joined_state(hay: Haystack) -> Any:
    decoded = hay._decoded
    forms = {name: (f.data, f.starts) if (f := hay.form(name)) is not None else None
             for name in ("path", "path-casefold")}
    if decoded is not None:
        forms.update({"decoded " + name: (f.data, f.starts) if (f := decoded.form(name)) is not None else None
                      for name in ("path", "path-casefold")})
    return (hay.changed, hay.exact, hay.decoded, None if decoded is None else decoded.pieces, hay._owner, forms)


@settings(max_examples=150, deadline=None)
@given(texts_st, st.sampled_from(TOKENS))
def test_kept_decoder_outputs_and_paths_answer_as_fresh_ones(texts: list[str], token: str) -> None:
    """What the decoders make of a text and a short text's canonical path are kept by text
    (`decoded_pieces._decoder_memo`, `joins._path_memo`): a haystack of texts seen before is the one made
    fresh, and so is its search."""
    forget_searches()
    fresh = _joined_state(Haystack(tuple(texts)))
    textmemo.clear_memo()
    kept = _joined_state(Haystack(tuple(texts)))
    assert kept == fresh
    joined._haystacks.clear()
    assert search_outcome(lambda: first_leak(token, texts)) == search_outcome(
        lambda: first_one_by_one(lambda t: leaks(token, t), texts))


def test_kept_decoder_outputs_and_paths_stay_within_their_bounds(monkeypatch: Any) -> None:
    monkeypatch.setattr(decoded_pieces, "_decoder_memo", BoundedCache(8, 4096, scan_resistant=True))
    monkeypatch.setattr(joins, "_path_memo", BoundedCache(8, 4096, scan_resistant=True))
    texts = tuple(f"arg {i} C:\\dir\\file{i}.txt" for i in range(50))
    first = _joined_state(Haystack(texts))
    assert len(decoded_pieces._decoder_memo) <= 8 and len(joins._path_memo) <= 8
    assert decoded_pieces._decoder_memo._weight <= 4096 and joins._path_memo._weight <= 4096
    assert _joined_state(Haystack(texts)) == first  # evicted ones made again
    assert first[0] == first[2] == list(range(50))


def test_decoder_outputs_past_the_budget_make_their_texts_tested_on_their_own(monkeypatch: Any) -> None:
    """The decoded join holds at most as many characters as the join of the texts, and
    DECODED_EXTRA more: the texts whose outputs do not fit are tested on their own, and the
    search answers as before."""
    monkeypatch.setattr(joined, "DECODED_EXTRA", 0)
    forget_searches()
    texts = ["plain words"] * 3 + [f"x {_B64} {i} %6C%63 &amp; \\u006c" for i in range(6)] + ["lc\\u002d5f0e9a1d7c3b"]
    hay = Haystack(tuple(texts))
    assert hay.changed == list(range(3, 10))
    assert hay.exact and set(hay.exact) <= set(hay.changed)  # some past the budget
    assert hay.decoded  # and some within it
    decoded = hay._decoded
    assert decoded is not None and len("".join(decoded.pieces)) <= sum(map(len, texts))
    for token in (TOKEN, "lc-", "R&D", "&"):
        joined._haystacks.clear()
        assert first_leak(token, texts) == first_one_by_one(lambda t: leaks(token, t), texts)


def test_the_joins_of_small_texts_are_not_kept_by_the_memo_of_large_ones() -> None:
    """The memo of large texts' transforms (textmemo) weighs a result, not its key: a join of
    small texts, made for one call, would be held with every transform of it (`transient`)."""
    forget_searches()
    texts = tuple(f"é {i} x{_B64}x &amp; \\u00e9 ﬁ" for i in range(2000))  # joins past MEMO_MIN
    assert sum(map(len, texts)) > textmemo.MEMO_MIN and all(len(t) < textmemo.MEMO_MIN for t in texts)
    hay = Haystack(texts)
    for name in ("normalised", "skeleton", "skeleton-casefold", "path", "path-casefold"):
        hay.form(name)
        assert hay._decoded is not None and hay._decoded.form(name) is not None
    hay._joins.pages("skeleton")
    assert len(textmemo._memo) == 0


def test_the_decoders_a_hint_rules_out_are_decoders() -> None:
    from litmus_rules.domain import normalize

    names = {name for name, _ in normalize._DECODERS}
    assert {name for names_ in decoded_pieces.HINTED_DECODERS for name in names_} <= names
    assert decoded_pieces.skipped((True, False, True)) == {"grouped encodings"}
