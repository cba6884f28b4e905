"""Faster scans of large texts (issue 13) find what the former ones found. The decoders' patterns,
and a name's word-bounded search, are spelt to start with a literal (`re` then scans a large text
for that character instead of trying every alternative, or a look-behind, at every position): they
match where their former spellings matched, to the same decoded text. Base32 runs are decoded as
one number in C: the bytes the stdlib's decoder gives. What NFKC's growers add is counted from
one scan when they are few: what counting each grower gives. The former spellings, the stdlib and
the per-grower count are the oracles."""

from __future__ import annotations

import base64
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoding, grouped, lazyre, markup, nfkc_growth
from litmus_rules.domain.textmemo import re2_compiled

# ---- the former spellings ----------------------------------------------------------------------

_OLD_JSON = re.compile(
    r"((?:\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}){2,})"
    r"|((?:\\x[0-9a-fA-F]{2}){2,})"
    r"|\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u\{([0-9a-fA-F]{1,6})\}"
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\x([0-9a-fA-F]{2})"
    r"|\\([\"\\/bfnrt'])"
)
_OLD_PERCENT_SPLIT = re.compile(r"((?:%[0-9A-Fa-f]{2})+)")
_OLD_OTHER = re.compile(r"\\U([0-9a-fA-F]{8})|\\([0-3][0-7]{2})|%u([0-9a-fA-F]{4})|((?:=[0-9A-F]{2}){2,})")
_OLD_CSS = re.compile(r"(?:\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?){2,}")
_W = markup._W
_OLD_MARKUP = re.compile(f"(?<={_W}){markup._MARK_EXACT}(?={_W})|(?<={_W}-){markup._WRAP}(?={_W})")


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


# ---- texts made of the pieces each pattern tells apart ------------------------------------------

_ESCAPES = ["\\", "\\u", "\\x", "\\U", "u", "x", "U", "{", "}", "d8", "D8", "dc", "DE", "db", "00", "41", "4", "a",
            "F", "0", "7", "\\u0041", "\\x41", "\\ud83d", "\\ude00", "\\uD83D\\uDE00", "\\ud800", "\\u{1F600}",
            "\\u{110000}", "\\n", '\\"', "\\'", "\\/", "\\\\", "\\154", "\\400", "\\0001F600", "%", "%4", "%41",
            "%e9", "%C3%A9", "%u006c", "%u", "=", "=4", "=41", "=C3=A9", "=3D", "=a1", "==", " ", "\t", "\n", "é",
            "\ud800", "😀"]
_MARKUP = ["a", "b", "-", "_", "__", "**", "*", "`", "~~", "~", "<b>", "</b>", "<br/>", "<a href=x>", "<!-- x -->",
           "<!--", "-->", '"', "'", " + ", "+", " ", "\t", "\n", "\r\n", "  ", "0", "é", "<"]
_ESCAPE_TEXT = st.lists(st.sampled_from(_ESCAPES), max_size=25).map("".join)
_MARKUP_TEXT = st.lists(st.sampled_from(_MARKUP), max_size=25).map("".join)


@settings(max_examples=1500, deadline=None)
@given(_ESCAPE_TEXT)
def test_escape_patterns_match_where_their_former_spellings_did(text: str) -> None:
    json_re = decoding._RE.JSON_ESCAPE_RE
    assert _spans(json_re, text) == _spans(_OLD_JSON, text)
    old_json = _OLD_JSON.sub(
        lambda m: decoding._json_escape(json_re.fullmatch(m.group())), text)  # type: ignore[arg-type]
    assert decoding.json_unescape(text) == old_json
    assert decoding._RE.PERCENT_SPLIT.split(text) == _OLD_PERCENT_SPLIT.split(text)
    assert _spans(decoding._RE.OTHER_ESCAPE_RE, text) == _spans(_OLD_OTHER, text)
    assert [m.group(4) is None for m in decoding._RE.OTHER_ESCAPE_RE.finditer(text)] == [
        m.group(4) is None for m in _OLD_OTHER.finditer(text)]
    assert _spans(decoding._RE.CSS_ESCAPES, text) == _spans(_OLD_CSS, text)
    # RE2's reading of the same patterns (the presence tests before `re` substitutes)
    for spec, old in ((decoding._OTHER_ESCAPE_RE_SPEC, _OLD_OTHER), (decoding._CSS_ESCAPES_SPEC, _OLD_CSS)):
        try:
            found = re2_compiled(spec[0]).search(text)
        except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8, and the callers fall back
            continue
        assert (found is not None) == (old.search(text) is not None)


@settings(max_examples=1500, deadline=None)
@given(_MARKUP_TEXT)
def test_the_markup_pattern_matches_where_its_former_spelling_did(text: str) -> None:
    assert _spans(markup._MARKUP_RE, text) == _spans(_OLD_MARKUP, text)


def test_each_kind_of_escape_still_decodes() -> None:
    assert decoding.json_unescape("\\u006c\\u0063-\\x35\\x66 \\ud83d\\ude00 \\u{1F600} \\n") == "lc-5f 😀 😀 \n"
    assert decoding.percent_decode("lc%2D%35f %C3%A9") == "lc-5f é"
    assert decoding.other_escapes("\\154\\143 =6C=63 %u006c \\U0001F600") == "lc lc l 😀"
    assert decoding.css_unescape("\\6c \\63 \\2d") == "lc-"
    assert markup.unwrap_markup("lc-5f**0e9a**3b and lc-\n    5f") == "lc-5f0e9a3b and lc-5f"


_WORDS = ["send", "send_money", "a", "_", "é", "中", "1", "-", ".", " ", "\n", "(", "x.y", "ſ", "\u0301", "$"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map("".join),
       st.lists(st.sampled_from(_WORDS), max_size=25).map("".join))
def test_a_word_bounded_needle_is_found_where_its_former_spelling_found_it(needle: str, text: str) -> None:
    old = re.compile(r"(?<!\w)" + re.escape(needle) + r"(?!\w)")
    assert _spans(lazyre.word_bounded(needle), text) == _spans(old, text)


@settings(max_examples=1000, deadline=None)
@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", max_size=70))
def test_base32_runs_decode_as_the_stdlib_decodes_them(core: str) -> None:
    tail = len(core) % 8
    data = core + "=" * (8 - tail) if tail in (2, 4, 5, 7) else core[: len(core) - tail]
    assert grouped._b32decode(data.rstrip("=")) == base64.b32decode(data)
    assert grouped._base32(core + "===") == base64.b32decode(data).decode("utf-8", "replace")


_GROWERS = sorted(nfkc_growth._growers()[0])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_GROWERS), st.sampled_from(["a", "é", "中", "\ufb01", "😀", " "])),
                max_size=40).map("".join), st.sampled_from([0, 1, 3, nfkc_growth.GROWERS_FOUND_MAX]))
def test_what_the_growers_add_is_counted_either_way(text: str, found_max: int) -> None:
    growers = nfkc_growth._growers()[0]
    saved = nfkc_growth.GROWERS_FOUND_MAX
    nfkc_growth.GROWERS_FOUND_MAX = found_max  # 0: every text with a grower counted grower by grower
    try:
        assert nfkc_growth._growers_add(text) == sum(text.count(c) * added for c, added in growers.items())
    finally:
        nfkc_growth.GROWERS_FOUND_MAX = saved
