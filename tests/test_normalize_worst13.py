"""The worst-case normalisation (issue 13, item 3) gives what the previous one gave.

The previous implementations are kept below, only here, as the oracle: base64 and hex runs decoded
one run and one alignment at a time, dense path texts canonicalised run by run, the confusable
skeleton mapped through its dict table, Unicode tags looked for with the broad format-character
test. The new ones (runs decoded in batches, dense path texts split once and their tokens
canonicalised together, a list table for the skeleton of large texts, an RE2 test for tags) must
agree with them on generated text mixing ASCII, format characters, confusables, fullwidth forms,
combining marks, base64 runs and path-like pieces, and so must the forms built from them.
"""

from __future__ import annotations

import base64
import binascii
import functools
import posixpath
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import decoding, encoded, normalize, paths, textmemo, transforms

# --- the previous implementations (the oracle) ---------------------------------------------------

_NONPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
_URL_TO_STD = str.maketrans("-_", "+/")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{8,}")


def old_printable(raw: bytes) -> str | None:
    text = _old_printable_text(raw.decode("utf-8", "replace"))
    if text is not None or len(raw) < 8:
        return text
    # (since session 15) UTF-16 when 90% of the odd bytes, or else of the even bytes, are NUL
    half = len(raw) // 2
    for order, zeros in (("utf-16-le", raw[1::2]), ("utf-16-be", raw[0::2])):
        if sum(b == 0 for b in zeros) * 10 >= half * 9:
            return _old_printable_text(raw[:2 * half].decode(order, "replace"))
    return None


def _old_printable_text(text: str) -> str | None:
    if not text:
        return None
    if text.isprintable() and "\ufffd" not in text:
        return text
    bad = len(_NONPRINTABLE.findall(text))
    if bad * 5 > len(text):
        return None
    return _NONPRINTABLE.sub(" ", text) if bad else text


def _old_looks_like_word(run: str) -> bool:
    return run[1:].islower() or run.isupper() or run.isdigit()


def old_decode_b64_run(run: str) -> str | None:
    std = run.translate(_URL_TO_STD)
    for align in range(4):
        chunk = std[align:]
        rem = len(chunk) % 4
        if rem == 1:
            chunk = chunk[:-1]
        elif rem:
            chunk += "=" * (4 - rem)
        if len(chunk) < 8:
            return None
        try:
            decoded = old_printable(binascii.a2b_base64(chunk))
        except (binascii.Error, ValueError):
            continue
        if decoded is not None:
            return decoded
    return None


def old_base64_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    for run in runs:
        if "\n" in run:
            lines = run.split()
            joined = "".join(lines)
            decoded = None if _old_looks_like_word(joined) else old_decode_b64_run(joined)
            found = [decoded] if decoded is not None else [
                old_decode_b64_run(line) for line in lines if not _old_looks_like_word(line)]
        elif _old_looks_like_word(run):
            continue
        else:
            found = [old_decode_b64_run(run)]
        for decoded in found:
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
        if max_chars is not None and budget <= 0:
            break
    return out


def old_hex_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    for run in [h for run in runs if len(run) >= 8 for h in _HEX_RUN.findall(run)]:
        for align in (0, 1):
            chunk = run[align:]
            chunk = chunk[: len(chunk) - len(chunk) % 2]
            decoded = old_printable(bytes.fromhex(chunk))
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
                break
        if max_chars is not None and budget <= 0:
            break
    return out


def _old_canonical(p: str) -> str:
    if p[:5].lower() == "file:":
        p = p[5:]
        if p[:11].lower() == "//localhost":
            p = p[11:]
    p = p.replace("\\", "/")
    if p[:2] == "//":
        p = "/" + p.lstrip("/")
    return posixpath.normpath(p) if p else p


def _old_token(m: Any) -> str:
    p = m.group()
    if m.group(1) is None:
        return _old_canonical(p)
    if p[:5].lower() == "file:":
        return paths._path_res()[1].sub(lambda inner: _old_canonical(inner.group()), p)
    return p


def _old_sub(text: str) -> str:
    path_re = paths._path_res()[0]
    try:
        return path_re.sub(_old_token, text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return path_re.sub(_old_token, paths._SURROGATE.sub("\ufffd", text))  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=1 << 12)
def _old_run(run: str) -> str:
    if len(run) <= 64 and run.isascii():
        m = paths._PATH_RE_ASCII.match(run)
        if m is not None and m.end() == len(run):
            return _old_token(m)
        return paths._PATH_RE_ASCII.sub(_old_token, run)
    return _old_sub(run)


_OLD_BOUNDARIES = re.compile("([\t\n\f\r \"'<>`]+)")
_OLD_BOUNDARY = re.compile("[\t\n\f\r \"'<>`]")


def old_canonical_path(text: str) -> str:
    """The previous canonicalisation: short texts in one substitution, dense long ones run by
    run from one split, sparse long ones run by run around each hit."""
    may_change = paths._PATH_MAY_CHANGE
    if len(text) > 4096 and (text.count("/") + text.count("\\")) * 64 > len(text):
        parts = _OLD_BOUNDARIES.split(text)
        parts[::2] = [_old_run(run) if may_change.search(run) else run for run in parts[::2]]
        return "".join(parts)
    if "/" not in text and "\\" not in text or may_change.search(text) is None:
        return text
    if len(text) <= 4096:
        return _old_sub(text)
    pieces, done, n = [], 0, len(text)
    backwards = text[::-1]
    hit = may_change.search(text)
    while hit is not None:
        pos = hit.start()
        before = _OLD_BOUNDARY.search(backwards, n - pos, n - done)
        start = n - before.start() if before is not None else done
        boundary = _OLD_BOUNDARY.search(text, pos)
        end = boundary.start() if boundary is not None else n
        pieces += [text[done:start], _old_run(text[start:end])]
        done = end
        hit = may_change.search(text, end)
    return "".join(pieces) + text[done:]


def old_skeleton(text: str) -> str:
    table = transforms._skeleton_table()
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(table))


_OLD_TAG_RE = re.compile("[\U000e0000-\U000e007f]+")


def old_decode_tag_chars(text: str) -> str:
    if text.isascii():
        return text
    return _OLD_TAG_RE.sub(
        lambda m: "".join(chr(ord(c) - 0xE0000) for c in m.group() if 0xE0020 <= ord(c) <= 0xE007E), text)


# --- generated text ----------------------------------------------------------------------------


def _b64(data: bytes, url: bool, wrap: bool) -> str:
    encoded = (base64.urlsafe_b64encode(data) if url else base64.b64encode(data)).decode()
    return "\n".join(encoded[i: i + 12] for i in range(0, len(encoded), 12)) if wrap else encoded


_PIECES = [
    "a", "e", "o", "p", "I", "l", "0", "rn", "K", "ß", "İ", "ſ", "K", "а", "е", "о", "р", "с", "І", "Ι", "ο", "Ϲ",
    "ｅｘｆｉｌ", "ＡＢＣＤＥＦａｂｃｄｅｆ", "０１２３", "𝐚𝐛𝐜𝐀𝐁𝐂", "ﬁ", "①", "㎏", "\u200b", "\u200c", "\u00ad", "\u2060",
    "\u202e", "\ufe0f", "\u034f", "\u3164", "\uffa0", "\U000e0001", "\U000e0041", "\U000e007f", "\u0301", "\u0308",
    "\u0327", "é", "e\u0301", "Å", "한", "東京", "😀", "/", "\\", "./", "../", "//", "file:", "file:///", "FILE://localhost",
    "C:\\", "~/", "http://x/a/../b", "https://h//", ".", " ", "\n", "\t", "\r\n", '"', "<", "`", "&amp;", "%41",
    "\\u0041", "QUJD", "ZXhmaWw=", "deadbeef", "DEADBEEF00", "etc", "passwd", "usr/lib", "a.a.a", "_-", "+/",
]
_ENCODED = st.builds(_b64, st.one_of(st.binary(max_size=24), st.text(max_size=16).map(str.encode)),
                     st.booleans(), st.booleans())
_PIECE = st.one_of(st.sampled_from(_PIECES), _ENCODED, st.text(max_size=3))
texts = st.lists(_PIECE, max_size=40).map("".join)
# path-dense texts of 4 KB and more (many runs at once, `_canonical_dense`)
_PATH_PIECES = ["/usr/../lib//x", "C:\\a\\b", "./a/./b/", "file:///etc//p", "file://LOCALHOST/a/./b", "http://h/a/../b",
                "x y", "a/b", "~/q/..", "a.a.a/b", "/", "é/ü//z", "\\\\srv\\x", "a//b:c/./d", "FILE:x/../y", "q=1&r=/./",
                "u/" + "a." * 40 + "b", "\u200b/./", " ", "\t", '"', "<", "s3://b/k/../j"]
long_path_texts = st.lists(st.sampled_from(_PATH_PIECES), min_size=1, max_size=16).map(
    lambda parts: " ".join(parts) * (4096 // max(1, len(" ".join(parts))) + 2))


@pytest.fixture(autouse=True)
def _restore_thresholds() -> Any:
    saved = encoded.SCALAR_MAX, paths.SCALAR_MAX, transforms.LIST_MIN
    yield
    encoded.SCALAR_MAX, paths.SCALAR_MAX, transforms.LIST_MIN = saved


def _clear() -> None:
    textmemo.clear_memo()
    decoding._decoded_memo.clear()
    paths._canonical_memo.clear()


# --- the decoders agree ------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(texts, st.sampled_from([None, 0, 1, 7, 40]), st.sampled_from([0, encoded.SCALAR_MAX]))
def test_base64_and_hex_runs_are_decoded_as_before(text: str, budget: int | None, scalar_max: int) -> None:
    encoded.SCALAR_MAX = scalar_max  # 0: every run list in batches; restored by the fixture
    _clear()
    for source in (text, transforms.clean(text)):  # fullwidth letters become base64 runs in the cleaned text
        runs = decoding._B64_RUN.findall(source)
        assert decoding._base64_runs(runs, budget) == old_base64_runs(runs, budget)
        assert decoding._hex_runs(runs, budget) == old_hex_runs(runs, budget)
        # and again, the short runs now remembered
        assert decoding._base64_runs(runs, budget) == old_base64_runs(runs, budget)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=12), st.builds(
    lambda t, order, cut: t.encode(order, "surrogatepass")[cut:], st.text(max_size=10),
    st.sampled_from(["utf-16-le", "utf-16-be"]), st.integers(0, 1))), max_size=20))
def test_printable_of_many_is_printable_of_each(raws: list[bytes]) -> None:
    assert decoding._printable_many(raws) == [old_printable(raw) for raw in raws]


@settings(max_examples=200, deadline=None)
@given(texts, st.sampled_from([0, paths.SCALAR_MAX]))
def test_paths_are_canonicalised_as_before(text: str, scalar_max: int) -> None:
    paths.SCALAR_MAX = scalar_max  # 0: even one run through the joined pass; restored by the fixture
    _clear()
    assert paths.canonical_path(text) == old_canonical_path(text)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_path_texts)
def test_dense_path_texts_are_canonicalised_as_before(text: str) -> None:
    _clear()
    assert paths.canonical_path(text) == old_canonical_path(text)
    upper = text.upper()  # FILE:, and other runs, not remembered
    assert paths.canonical_path(upper) == old_canonical_path(upper)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["file://", "FiLe:", "localhost", "/", "//", "\\", "a", "./", "../", "C:", "~",
                                 "-", "é", "x.y", "%20", "@"]), min_size=1, max_size=14).map("".join))
def test_file_urls_are_canonicalised_as_by_re2(url: str) -> None:
    """The path tokens of an ASCII file: URL, found by `re` as RE2 finds them."""
    url = url.replace("é", "e")
    expected = paths._path_res()[1].sub(lambda m: _old_canonical(m.group()), url)
    assert paths._canonical_urls([url]) == [expected]
    m = paths._PATH_RE_ASCII.match("file:///" + url)
    if m is not None:
        assert paths._canonical_token(m) == _old_token(m)


# --- the transforms agree ----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(texts)
def test_skeleton_and_tags_as_before(text: str) -> None:
    _clear()
    assert transforms.decode_tag_chars(text) == old_decode_tag_chars(text)
    assert transforms.skeleton(text) == old_skeleton(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_skeleton_through_the_list_table_as_before(text: str) -> None:
    # every text through the list form of the table (LIST_MIN 0), dense in non-ASCII or not
    saved = transforms.LIST_MIN
    transforms.LIST_MIN = 0
    try:
        _clear()
        assert transforms.skeleton(text) == old_skeleton(text)
        assert transforms.skeleton(text + "аΙ") == old_skeleton(text + "аΙ")
    finally:
        transforms.LIST_MIN = saved


def test_the_list_table_maps_what_the_dict_maps_on_nfd_text() -> None:
    table = transforms._skeleton_table()
    listed = transforms._skeleton_list()
    for cp, rep in table.items():
        if unicodedata.normalize("NFD", chr(cp)) == chr(cp):  # what NFD text can hold
            assert listed[cp] == rep
    assert all(listed[cp] == cp for cp in range(len(listed)) if cp not in table)


# --- the forms agree ---------------------------------------------------------------------------


def _old_forms(monkeypatch: pytest.MonkeyPatch, text: str) -> Any:
    with monkeypatch.context() as m:
        for module in (decoding, normalize):
            m.setattr(module, "_base64_runs", old_base64_runs)
            m.setattr(module, "_hex_runs", old_hex_runs)
        for module in (paths, transforms, normalize):
            m.setattr(module, "canonical_path", old_canonical_path)
        for module in (transforms, normalize):
            m.setattr(module, "skeleton", old_skeleton)
            m.setattr(module, "decode_tag_chars", old_decode_tag_chars)
        _clear()
        return normalize.forms(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                               HealthCheck.function_scoped_fixture])
@given(st.one_of(texts, long_path_texts, texts.map(lambda t: (t + " ") * (textmemo.MEMO_MIN // max(1, len(t) + 1) + 1))))
def test_forms_are_the_forms_of_the_previous_transforms(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    expected = _old_forms(monkeypatch, text)
    _clear()
    assert normalize.forms(text) == expected


@pytest.mark.parametrize("text", [
    "ｃａｎａｒｙ-ＡＢＣＤＥＦａｂｃｄｅｆ０１２３ " * 3000,
    " ".join(f"C:\\srv{i}\\..\\x file:///a/./b{i} https://h/{i}//q ./d//e/" for i in range(400)),
    base64.encodebytes(b"the canary is here " * 300).decode(),
])
def test_worst_case_shapes_agree(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    expected = _old_forms(monkeypatch, text)
    _clear()
    assert normalize.forms(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["e\u0301", "é", "а", ":", "/", "I", "ﬁ", "中", " ", "x", "\u200b"]), max_size=40).map("".join))
def test_skeleton_maps_the_non_ascii_runs_of_a_mostly_ascii_text_as_the_whole_table(text: str) -> None:
    """The runs are mapped joined by newlines in one call: the same text as the table applied
    to the whole NFD text; and where a mapping would hold a newline, run by run."""
    text += "x" * 4 * len(text.encode())  # mostly ASCII: its non-ASCII runs are mapped apart
    textmemo.clear_memo()
    nfd = unicodedata.normalize("NFD", text)
    expected = unicodedata.normalize("NFD", nfd.translate(transforms._skeleton_table()))
    assert transforms.skeleton(text) == expected
    ascii_map, wide = transforms._skeleton_parts()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(transforms, "_skeleton_parts", lambda: (ascii_map, {**wide, ord("中"): "a\nb"}))
        textmemo.clear_memo()
        table = {**transforms._skeleton_table(), ord("中"): "a\nb"}
        assert transforms.skeleton(text) == unicodedata.normalize("NFD", nfd.translate(table))
    textmemo.clear_memo()
