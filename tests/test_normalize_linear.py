"""The linear normalisation (issue 13) gives what the former one gave.

The former implementations are kept below as references: format characters stripped with the
`regex` module's class, Unicode tags decoded one character at a time, the confusable skeleton
mapped run by run over RE2 matches, paths canonicalised run by run with the former `_canonical`.
The new ones (one str.translate table, results kept for large texts, no per-match loop over RE2
results, forms of joined texts computed per large text) must agree with them on generated text:
format characters, tags, confusables, mixed scripts, combining marks, paths, base64, and texts past
`textmemo.MEMO_MIN` (where results are kept and shared).
"""

from __future__ import annotations

import base64
import os
import posixpath
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import re2
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import litmus_rules
from litmus_rules.cache import BoundedCache
from litmus_rules.domain import decoding, joined, matching, normalize, paths, regexes, textmemo, transforms

# --- the former implementations ----------------------------------------------------------------

_OLD_FORMAT_RE = regex.compile(
    r"[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}--[\U000E0000-\U000E007F]]+",
    regex.V1,
)
_OLD_TAG_RE = re.compile("[\U000e0000-\U000e007f]+")


def old_strip_format_chars(text: str) -> str:
    return text if text.isascii() else _OLD_FORMAT_RE.sub("", text)


def old_decode_tag_chars(text: str) -> str:
    if text.isascii():
        return text
    return _OLD_TAG_RE.sub(
        lambda m: "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E), text)


def _old_skeleton_parts() -> tuple[bytes, dict[str, str], Any]:
    table = transforms._skeleton_table()
    ascii_map = bytearray(range(256))
    for cp, rep in table.items():
        if cp < 128:
            ascii_map[cp] = ord(rep)
    wide = {chr(cp): rep for cp, rep in table.items() if cp >= 128}
    ranges: list[list[int]] = []
    for cp in sorted(ord(c) for c in wide):
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    cls = "".join(f"\\x{{{a:X}}}" + (f"-\\x{{{b:X}}}" if b > a else "") for a, b in ranges)
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    return bytes(ascii_map), wide, re2.compile(f"[{cls}]+", options)


_OLD_PARTS: list[Any] = []


def old_skeleton(text: str) -> str:
    if not _OLD_PARTS:
        _OLD_PARTS.append(_old_skeleton_parts())
    ascii_map, wide, wide_re = _OLD_PARTS[0]
    text = unicodedata.normalize("NFD", text)
    if text.isascii():
        return text.encode("ascii").translate(ascii_map).decode("ascii")
    try:
        data = text.encode("utf-8").translate(ascii_map)
    except UnicodeEncodeError:
        return unicodedata.normalize("NFD", text.translate(transforms._skeleton_table()))
    pieces = []
    pos = 0
    for m in wide_re.finditer(data):
        start, end = m.span()
        pieces.append(data[pos:start])
        pieces.append("".join(wide.get(c, c) for c in data[start:end].decode("utf-8")).encode("utf-8"))
        pos = end
    if pieces:
        pieces.append(data[pos:])
        data = b"".join(pieces)
    return unicodedata.normalize("NFD", data.decode("utf-8"))


_MULTI_SLASH = re.compile(r"/{2,}")


def _old_canonical(p: str) -> str:
    if p[:5].lower() == "file:":
        p = p[5:]
        if p[:11].lower() == "//localhost":
            p = p[11:]
    p = _MULTI_SLASH.sub("/", p.replace("\\", "/"))
    return posixpath.normpath(p) if p else p


def _old_token(m: Any) -> str:
    p = m.group()
    if m.group(1) is None:
        return _old_canonical(p)
    if p[:5].lower() == "file:":
        return paths._path_res()[1].sub(lambda inner: _old_canonical(inner.group()), p)
    return p


def old_canonical_path(text: str) -> str:
    """The former canonicalisation, all in one RE2 substitution (what the runs add up to)."""
    if "/" not in text and "\\" not in text or paths._PATH_MAY_CHANGE.search(text) is None:
        return text
    try:
        return paths._path_res()[0].sub(_old_token, text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return paths._path_res()[0].sub(_old_token, paths._SURROGATE.sub("\ufffd", text))  # type: ignore[no-any-return]


# --- generated text ----------------------------------------------------------------------------

_PIECES = [
    "a", "e", "o", "p", "I", "l", "0", "O", "rn", "m", "K", "s", "ß", "İ", "ı", "ſ", "K",
    "а", "е", "о", "р", "с", "І", "Ι", "ο", "Ϲ", "ѕ", "ｅｘｆｉｌ", "𝐄𝐗", "ﬁ", "①", "²", "㎏",
    "\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\u202e", "\ufe0f", "\u034f", "\u180e", "\u3164",
    "\U000e0001", "\U000e0041", "\U000e0061", "\U000e007f", "\u0301", "\u0308", "\u0323", "\u0327",
    "é", "e\u0301", "Å", "Å", "한", "\u1100\u1161", "東京", "中", "😀", "🚀", "\u05d0", "\u0627",
    "/", "\\", "./", "../", "//", "file:", "file:///", "C:\\", "~/", "http://x/", ".", " ", "\n", "\t",
    "&amp;", "%41", "%2541", "\\u0041", "\\x41", "QUJD", "ZXhmaWw=", "deadbeef", "etc", "passwd",
]
texts = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=4)), max_size=30).map("".join)
big_texts = st.tuples(texts, st.integers(1, 3)).map(
    lambda t: (t[0] + " ") * (textmemo.MEMO_MIN // max(1, len(t[0]) + 1) + 1) * t[1])


def _no_surrogates(text: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


# --- the transforms agree ----------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(texts)
def test_transforms_agree_with_the_former_ones(text: str) -> None:
    assert transforms.strip_format_chars(text) == old_strip_format_chars(text)
    assert transforms.decode_tag_chars(text) == old_decode_tag_chars(text)
    assert transforms.skeleton(text) == old_skeleton(text)
    assert transforms.unmasked(text) == old_decode_tag_chars(old_strip_format_chars(text))
    assert paths.canonical_path(text) == old_canonical_path(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_transforms_agree_on_any_text(text: str) -> None:
    assert transforms.strip_format_chars(text) == old_strip_format_chars(text)
    assert transforms.decode_tag_chars(text) == old_decode_tag_chars(text)
    assert transforms.skeleton(text) == old_skeleton(text)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(["/usr/../lib//x", "C:\\a\\b", "./a/./b/", "file:///etc//p", "http://h/a/../b",
                                 "x y", "a/b", "~/q/..", "a.a.a", "/", "é/ü//z", " "]), max_size=12))
def test_long_texts_are_canonicalised_as_before(parts: list[str]) -> None:
    # 4 KB and more: many runs at once (dense texts split at once), with runs remembered
    text = " ".join(parts) * (4096 // max(1, len(" ".join(parts))) + 2)
    assert paths.canonical_path(text) == old_canonical_path(text)
    assert paths.path_changes(text) == (old_canonical_path(text) != text)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
@given(big_texts)
def test_large_texts_agree_and_keep_their_results(text: str) -> None:
    # past MEMO_MIN the results are kept: the kept one is the one computed, and asked again it
    # is the same
    for new, old in ((transforms.strip_format_chars, old_strip_format_chars),
                     (transforms.skeleton, old_skeleton), (paths.canonical_path, old_canonical_path)):
        first = new(text)
        assert first == old(text)
        assert new(text) is first


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from(["", "\u200b", "Ａ", "é", "😀"]))
def test_forms_of_large_texts_are_the_forms_without_the_memo(text: str, extra: str) -> None:
    big = (text + extra + " ") * (textmemo.MEMO_MIN // max(1, len(text) + 2) + 1)
    textmemo.clear_memo()
    kept = normalize.forms(big)
    again = normalize.forms(big)  # from the kept results
    try:
        textmemo.MEMO_MIN, saved = 1 << 40, textmemo.MEMO_MIN
        fresh = normalize.forms(big)
    finally:
        textmemo.MEMO_MIN = saved
    assert kept == again == fresh


def test_kept_results_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    bound = 4 * textmemo.MEMO_MIN
    monkeypatch.setattr(textmemo, "_memo", BoundedCache(textmemo.MEMO_ENTRIES, bound))
    texts = [("é" + str(i)) * textmemo.MEMO_MIN for i in range(6)]  # each result: 2 x MEMO_MIN
    results = [transforms.skeleton(t) for t in texts]
    assert textmemo._memo._weight <= bound
    assert len(textmemo._memo) < len(texts)
    assert [transforms.skeleton(t) for t in texts] == results  # an evicted result, made again


# --- whole searches agree ----------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, min_size=1, max_size=6), st.integers(0, 5), texts.filter(lambda t: t.strip()))
def test_joined_search_with_a_large_text_is_the_search_of_each_text(small: list[str], at: int, token: str) -> None:
    # a text past MEMO_MIN is transformed on its own in the join (its results shared with its forms)
    big = ("Ｌorem ipsum \u200bdolor sit аmet " + token + " ") * (textmemo.MEMO_MIN // 40 + 1)
    surfaces = small[:at] + [big] + small[at:]
    joined._haystacks.clear()
    expected = None
    for i, surface in enumerate(surfaces):
        try:
            hit = matching.leaks(token, surface)
        except decoding.LimitUnknown:
            break
        if hit is not None:
            expected = (i, hit)
            break
    else:
        assert matching.first_leak(token, surfaces) is None
        return
    if expected is not None:
        assert matching.first_leak(token, surfaces) == expected


def test_a_large_non_ascii_text_is_searched_for_a_regex_as_before() -> None:
    # the probe that filters long non-ASCII texts never hides a match
    filler = "Привет мир, γειά σου κόσμε, 你好世界. " * 200
    for pattern, flags, text, found in [
        (r"\btransfer_ok_[0-9]{6}\b", ["ignorecase"], filler + " TRANSFER_OK_123456 " + filler, True),
        (r"\btransfer_ok_[0-9]{6}\b", ["ignorecase"], filler + " xtransfer_ok_123456 " + filler, False),
        (r"\bмир\b", [], filler, True),
        (r"κόσμε\s+\d", [], filler, False),
        (r"(?i)ſecret", [], filler + "SECRET", True),  # re: ſ folds to s under ignorecase
        (r"\w{3}界", [], filler, True),
    ]:
        got = regexes.regex_search(pattern, text, flags)
        assert (got is not None) == found, pattern
        if got is not None:
            reference = re.compile(pattern, re.I if flags else 0).search(text)
            assert reference is not None and got == (reference.start(), reference.group())


def test_base64_in_a_large_text_is_decoded_as_before() -> None:
    token = "EXFIL_CANARY_42"
    blob = base64.b64encode(("padding " * 20 + token + " tail").encode()).decode()
    text = ("ordinary words here " * 3000) + blob + " end"
    assert len(text) > textmemo.MEMO_MIN
    hit = matching.leaks(token, text)
    assert hit is not None and hit.transform.startswith("base64")


# --- cold start --------------------------------------------------------------------------------


def test_importing_the_package_loads_no_regex_engine_or_confusables_table() -> None:
    code = ("import sys, litmus_rules, litmus_rules.domain.builtins, litmus_rules.domain.matching\n"
            "print(sorted(m for m in ('re2', 'confusable_homoglyphs', 'confusable_homoglyphs.confusables') "
            "if m in sys.modules))")
    root = str(Path(litmus_rules.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", ["_FORMAT_RE", "_MAYBE_FORMAT"])
def test_former_pattern_names_still_resolve(name: str) -> None:
    assert getattr(transforms, name).search("a\u200bb") is not None
