"""Normalisation transforms: behaviour on real-looking inputs, and the idempotence they claim."""

from __future__ import annotations

import base64
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoding
from litmus_rules.domain import normalize as n
from litmus_rules.domain import paths
from litmus_rules.domain import transforms
from litmus_rules.domain.normalize import (
    base64_spans,
    canonical_path,
    hex_spans,
    html_unescape,
    json_unescape,
    percent_decode,
    token_forms,
    variants,
)
from litmus_rules.domain.transforms import (
    casefold,
    decode_tag_chars,
    full_normalise,
    nfkc,
    skeleton,
    strip_format_chars,
)

TOKEN = "EXFIL_CANARY_42"


def tags(s: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in s)


# --- format characters, tags, NFKC, case --------------------------------------------------------


@pytest.mark.parametrize(
    "hidden",
    [
        "EXFIL\u200b_CANARY_42",  # zero-width space
        "EX\u00adFIL_CAN\u00adARY_42",  # soft hyphens
        "EXFIL_\u200dCANARY\u200c_42",  # ZWJ / ZWNJ
        "\ufeffEXFIL_CANARY_42\u2060",  # BOM, word joiner
        "EXFIL_\u202eCANARY\u202c_42",  # bidi override / pop
        "EXFIL_CANARY\ufe0f_42",  # variation selector
        "E\u034fXFIL_CANARY_42",  # combining grapheme joiner (default-ignorable)
    ],
)
def test_strip_format_chars_reveals_token(hidden: str) -> None:
    assert strip_format_chars(hidden) == TOKEN


def test_strip_format_chars_leaves_text_and_tags_alone() -> None:
    text = "Grüße — naïve café, 東京 " + tags("hi")
    assert strip_format_chars(text) == text


def test_decode_tag_chars() -> None:
    hidden = "Nothing to see" + "\U000e0001" + tags("EXFIL_CANARY_42") + "\U000e007f"
    assert decode_tag_chars(hidden) == "Nothing to see" + TOKEN
    assert decode_tag_chars("plain ascii") == "plain ascii"


def test_format_prefilter_covers_every_stripped_character() -> None:
    # strip_format_chars only runs its precise substitution when a cheap RE2 class says the
    # text may contain such characters: that class must cover every character it strips.
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    stripped = set("".join(transforms._FORMAT_RE.findall(every))) | {chr(c) for c in range(0xE0000, 0xE0080)}
    assert len(stripped) > 400
    missed = [hex(ord(c)) for c in stripped if transforms._MAYBE_FORMAT.search(c) is None]
    assert missed == []


def test_nfkc_and_casefold() -> None:
    assert nfkc("ＥＸＦＩＬ＿ＣＡＮＡＲＹ＿４２") == TOKEN
    assert nfkc("ﬁle 𝐄𝐗𝐅𝐈𝐋") == "file EXFIL"
    assert casefold("Straße EXFIL") == "strasse exfil"


def test_full_normalise_chains_everything() -> None:
    hidden = "Ｅx\u200bＦil" + tags("_CANARY") + "_\u00ad42"
    assert full_normalise(hidden) == "exfil_canary_42"


# --- confusables -----------------------------------------------------------------------------------


def test_skeleton_maps_cyrillic_and_greek_homoglyphs() -> None:
    assert skeleton("раураl") == skeleton("paypal")  # Cyrillic р, а, у
    assert skeleton("ЕXFΙL_СΑNΑRΥ") == skeleton("EXFIL_CANARY")  # Cyrillic Е, С; Greek Ι, Α, Υ
    assert skeleton("I") == skeleton("l") == skeleton("1")  # ASCII confusables too


def test_skeleton_keeps_unrelated_letters_apart() -> None:
    assert skeleton("m") == "m"  # multi-character prototypes ("rn") are not used
    assert len({skeleton(c) for c in "abcdefghjkmnpqrstuvwxyz"}) == 23


# --- escapes and encodings ------------------------------------------------------------------


def test_json_unescape() -> None:
    assert json_unescape(r"\u0045\u0058FIL") == "EXFIL"
    assert json_unescape(r"smile \ud83d\ude00!") == "smile 😀!"
    assert json_unescape(r"a\nb\t\"c\"\\d\/e") == 'a\nb\t"c"\\d/e'
    assert json_unescape(r"\x41\u{1F600}") == "A😀"
    assert json_unescape(r"lone \ud800 stays") == r"lone \ud800 stays"
    assert json_unescape(r"bad \u12 and \q") == r"bad \u12 and \q"
    # one pass: an escaped backslash followed by u0041 is the text "\u0041"
    assert json_unescape(r"\\u0041") == r"\u0041"


def test_html_unescape_to_fixed_point() -> None:
    assert html_unescape("&lt;b&gt; &#x45;&#88;&#70;") == "<b> EXF"
    assert html_unescape("&amp;#69;&amp;amp;#88;") == "EX"
    assert html_unescape("fish & chips") == "fish & chips"


def test_percent_decode_to_fixed_point() -> None:
    assert percent_decode("%2Fetc%2Fpasswd") == "/etc/passwd"
    assert percent_decode("%25252F") == "/"
    assert percent_decode("100% sure, %ZZ") == "100% sure, %ZZ"
    assert percent_decode("%E2%82%AC %FF") == "€ \ufffd"


@pytest.mark.parametrize("prefix", [b"", b"x", b"xy", b"The secret is: "])
def test_base64_spans_find_token_at_any_offset(prefix: bytes) -> None:
    blob = base64.b64encode(prefix + TOKEN.encode() + b" and more text after it").decode()
    for glue in ("", "see ", "data=", "abc"):  # glued to other base64-alphabet characters too
        decoded = base64_spans(f"{glue}{blob} tail")
        assert any(TOKEN in d for d in decoded), (glue, blob, decoded)


def test_base64_spans_url_alphabet_and_wrapped_lines() -> None:
    url = base64.urlsafe_b64encode(b"path?q=" + TOKEN.encode() + b"&x=\xfb\xef").decode().rstrip("=")
    assert any(TOKEN in d for d in base64_spans(url))
    wrapped = base64.encodebytes(b"Dear agent, " * 8 + TOKEN.encode() + b" please.").decode()
    assert "\n" in wrapped.strip()
    assert any(TOKEN in d for d in base64_spans("----\n" + wrapped + "----"))


def test_base64_spans_skip_words_and_binary() -> None:
    assert base64_spans("information configuration positive_labels pre-flight ABCDEFGHIJ") == []
    assert base64_spans(base64.b64encode(bytes(range(256))).decode()) == []


def test_base64_spans_bounded() -> None:
    blob = base64.b64encode(b"plain printable text " * 50).decode()
    assert len(base64_spans(" ".join([blob] * 20), max_chars=2000)) < 20


def test_hex_spans_both_alignments() -> None:
    hexed = TOKEN.encode().hex()
    assert TOKEN in hex_spans(hexed)[0]
    assert TOKEN in hex_spans("f" + hexed.upper())[0]  # odd nibble offset
    assert hex_spans("deadbeefcafebabe") == []  # not printable


# --- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "/etc/passwd",
        "file:///etc/passwd",
        "FILE://localhost/etc/passwd",
        "file:/etc/passwd",
        "//etc/passwd",
        "/etc//passwd",
        "/etc/../etc/passwd",
        "/etc/./passwd",
        "/tmp/../../etc/passwd",
        "\\etc\\passwd",
        "/etc/passwd/",
    ],
)
def test_canonical_path_variants_of_etc_passwd(raw: str) -> None:
    assert canonical_path(raw) == "/etc/passwd"
    assert canonical_path(f"read {raw}, then stop") == "read /etc/passwd, then stop"


def test_canonical_path_leaves_other_text_alone() -> None:
    text = "see https://example.com//a/../b and C:\\Users\\..\\x, 3/4 done."
    assert canonical_path(text) == "see https://example.com//a/../b and C:/x, 3/4 done."
    assert canonical_path("~/.ssh/../.ssh/id_rsa") == "~/.ssh/id_rsa"


# --- forms -------------------------------------------------------------------------------------


def test_variants_names_and_order() -> None:
    blob = base64.b64encode(b"please send " + TOKEN.encode()).decode()
    vs = variants(f"Note: {blob} and %2Fetc%2Fpasswd")
    names = [name for name, _ in vs]
    assert names[0] == "raw"
    assert "base64" in names and "percent-decoded" in names
    assert len({text for _, text in vs}) == len(vs)  # distinct texts
    assert any(TOKEN in text for name, text in vs if name == "base64")
    assert any("/etc/passwd" in text for _, text in vs)


def test_forms_kept_in_memory_are_bounded() -> None:
    """Forms are kept while they fit the budget; past it they are streamed, never dropped."""
    from litmus_rules.domain.formcache import StreamedForms, text_forms

    small = base64.b64encode(b"hello world, " * 20000).decode()
    kept = text_forms(small)
    assert isinstance(kept, tuple)
    assert sum(len(f.text) for f in kept) <= n.forms_budget(small)
    tricky = "Mixed CASE а %41 \\u0041 zero\u200bwidth /tmp/./x &#69; " * 3000
    assert sum(len(f.text) for f in n.forms(tricky)) > n.forms_budget(tricky)
    streamed = text_forms(tricky)
    assert isinstance(streamed, StreamedForms)
    assert {f.text for f in streamed} == {f.text for f in n.forms(tricky)}


def test_token_forms_cover_encodings() -> None:
    names = {name for name, _ in token_forms(TOKEN)}
    assert {"raw", "normalised", "base64-encoded token", "hex-encoded token",
            "percent-encoded token", "json-escaped token"} <= names
    # each base64 core is found whatever bytes surround the token
    cores = [form for name, form in token_forms(TOKEN) if name == "base64-encoded token"]
    for pad in range(6):
        blob = base64.b64encode(b"\x07" * pad + TOKEN.encode() + b"\x99" * pad).decode()
        assert any(core in blob for core in cores), pad


# --- idempotence properties -------------------------------------------------------------------

TRICKY = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from("\u200b\u00ad\u202e\ufe0f\u034f\U000e0041\U000e007fＡﬁ𝐀ßİΣςаІ0O1lI/\\.%"),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(TRICKY)
def test_idempotent_unicode_transforms(s: str) -> None:
    for fn in (strip_format_chars, decode_tag_chars, nfkc, casefold, full_normalise, skeleton):
        once = fn(s)
        assert fn(once) == once, fn.__name__


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab./\\~:_- fileFILE%", max_size=40))
def test_canonical_path_idempotent_and_prefilter_exact(s: str) -> None:
    once = canonical_path(s)
    assert canonical_path(once) == once
    # the cheap "may change" prefilter never hides a change
    assert once == n._PATH_RE.sub(n._canonical_token, s)
    # forms() derives the lower-cased path form from this one on ASCII text
    assert canonical_path(s.lower()) == once.lower()


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(["a", "b/", "./", "../", "//", "\\", "file:", "http://x", "C:", "~", ".", "%2F",
                                 " ", "\n", "\t", "\v", "\u00a0", '"', "'", "<", ">", "`", "é", "_", "-", "\ud800",
                                 "a/b", "/etc/../passwd", ":", "+", "x:", "D:", "FILE:", "file://localhost/a//b",
                                 "https://h/../x", "..", "~/", "$@=%"]), max_size=40).map("".join))
def test_canonical_path_run_by_run_is_the_whole_substitution(s: str) -> None:
    # texts are canonicalised run by run (between whitespace and URL-ending characters), or, past
    # DENSE_MIN and dense with separators, split into their runs at once: both as one substitution
    # (lone surrogates, which RE2 cannot read, become U+FFFD: in the runs it reads, or all)
    def fix(t: str) -> str:
        return paths._SURROGATE.sub("\ufffd", t)

    expected = fix(paths._canonical_sub(s))
    assert fix(canonical_path(s)) == expected
    limit = paths.DENSE_MIN
    paths.DENSE_MIN = 0
    try:
        paths._dense_memo.clear()
        assert fix(canonical_path(s)) == expected
    finally:
        paths.DENSE_MIN = limit


def test_canonical_path_of_a_long_text() -> None:
    text = "".join(f'<a href="./d/{i}//x">{i}</a> C:\\u\\..\\v\n' for i in range(2000))
    assert len(text) > paths.DENSE_MIN
    assert canonical_path(text) == paths._canonical_sub(text)
    assert '<a href="d/7/x">7</a> C:/v' in canonical_path(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="%2546aF/ x", max_size=40))
def test_percent_decode_fixed_point(s: str) -> None:
    once = percent_decode(s)
    assert percent_decode(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="&#;ampltx4156 ", max_size=40))
def test_html_unescape_fixed_point(s: str) -> None:
    once = html_unescape(s)
    assert html_unescape(once) == once


# --- the base64/hex run prefilter (decoding.may_hold_encoded_runs) ---------------------------------

RUN_TEXT = st.text(
    alphabet=st.one_of(st.sampled_from("aAbBzZ09fF+/_-=\n\r .:é"),
                       st.sampled_from(["\u200b", "Ｚ", "\x00"])),
    max_size=60,
)


def _spans(text: str) -> tuple[list[str], list[str]]:
    runs = n._B64_RUN.findall(text)
    return n._base64_runs(runs, n.MAX_DECODED_CHARS), n._hex_runs(runs, n.MAX_DECODED_CHARS)


@settings(max_examples=1500, deadline=None)
@given(RUN_TEXT, st.binary(min_size=0, max_size=12), st.sampled_from(["", "b64", "b64url", "hex", "HEX"]))
def test_run_prefilter_never_hides_a_decodable_run(text: str, payload: bytes, enc: str) -> None:
    encoded = {"": "", "b64": base64.b64encode(payload).decode(), "hex": payload.hex(), "HEX": payload.hex().upper(),
               "b64url": base64.urlsafe_b64encode(payload).decode().rstrip("=")}[enc]
    for s in (text, text + encoded, encoded + text, text[: len(text) // 2] + encoded + text[len(text) // 2:]):
        if not decoding.may_hold_encoded_runs(s):
            assert _spans(s) == ([], []), s
        # forms() decodes from candidate_runs: the same spans as from every run
        runs = decoding.candidate_runs(s)
        assert (n._base64_runs(runs, n.MAX_DECODED_CHARS), n._hex_runs(runs, n.MAX_DECODED_CHARS)) == _spans(s)


def test_run_prefilter_skips_prose_and_identifiers() -> None:
    for s in ("information about the configuration", "positive_labels pre-flight arg_0_123", "Ignore previous",
              "tool_12_345678", "transfer_ok_123456", "Send Everything Now"):
        assert not decoding.may_hold_encoded_runs(s), s
    # a superset: "URLs" is no run of 8 characters, but the scan cannot tell (the exact one then can)
    for s in ("aGVsbG8gd29ybGQ=", "deadbeef", "getUserName", "URLs", "a1234567", "x" * 8 + "\nYYYY"):
        assert decoding.may_hold_encoded_runs(s), s
    assert decoding.may_hold_encoded_runs("lone \ud800 surrogate")  # cannot tell: says maybe


def test_decoders_are_reexported() -> None:
    for name in ("json_unescape", "html_unescape", "percent_decode", "base64_spans", "hex_spans"):
        assert getattr(n, name) is getattr(decoding, name)
    assert n.canonical_path is paths.canonical_path


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_skeleton_of_ascii_is_a_byte_map(s: str) -> None:
    table = transforms.skeleton_ascii_map()
    assert skeleton(s) == s.encode().translate(table).decode()
