"""Short non-ASCII runs of a path-dense text: their tokens found in ASCII stand-ins by `re`, in one
pass, exactly where RE2 finds them in the runs themselves (domain/path_roles.py; issue 13, the
worst single episodes)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import path_roles, paths

# Path syntax, letters and numbers of many scripts and Unicode versions (U+1123F is a letter for
# RE2's tables, unassigned in Python 3.11's), and characters that are neither: combining marks,
# format characters, symbols, emoji, a fullwidth solidus (not a separator). No token boundary: a
# run holds none.
_PIECES = [
    "/", "\\", ".", "..", "./", "../", "//", "~", "~/", ":", "C:", "file:", "FILE://", "file://localhost",
    "file://localho\u017ft", "localho\u017ft", "\u017f",
    "http://h/", "s3://b/", "a", "Z", "0", "_", "-", "+", "%", "$", "@", "=", "!", "?", "&", ";", "#",
    "é", "Ж", "中", "ǅ", "١", "Ⅳ", "½", "²", "\U0001123f", "\U00011f02", "İ", "ı", "\u212a", "ß", "ﬁ", "ｆｉｌｅ",
    "／", "\u0301", "\u200b", "\u2060", "\u202e", "😀", "€", "·", "\u3000", "\u00a0", "\u2028",
]
runs = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=12).map("".join).filter(
    lambda r: len(r) <= paths.ASCII_RUN_MAX and not r.isascii())


@pytest.fixture(autouse=True)
def _fresh_memos() -> None:
    paths._canonical_memo.clear()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(runs, min_size=1, max_size=paths.SCALAR_MAX + 6))
def test_runs_are_canonicalised_as_re2_canonicalises_each(batch: list[str]) -> None:
    expected = [paths._canonical_sub(run) for run in batch]
    table = path_roles.stand_ins("".join(batch))
    assert table is not None
    assert paths._canonical_ascii(batch, "\n".join(batch).translate(table).split("\n")) == expected
    assert paths._canonical_many(batch) == expected  # through the memo's way in as well
    paths._canonical_memo.clear()
    assert paths._canonical_many(batch * 2) == expected * 2


_BOUNDARY = paths._RE.TOKEN_BOUNDARY


def _re2_run_by_run(text: str) -> str:
    """The reference: RE2 on each run between token boundaries (no token crosses one)."""
    parts = _BOUNDARY.split(text)
    gaps = _BOUNDARY.findall(text)
    out = [paths._canonical_sub(parts[0])]
    for gap, run in zip(gaps, parts[1:]):
        out += [gap, paths._canonical_sub(run)]
    return "".join(out)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(runs, st.sampled_from(["a/b", "./x/../y", "C:\\q", "http://h/a/../b", "é" * 70 + "/./x"])),
                min_size=1, max_size=30),
       st.lists(st.sampled_from([" ", "\t", "\n", '"', "<", "`", "'"]), min_size=1, max_size=4))
def test_a_dense_non_ascii_text_is_canonicalised_as_re2_canonicalises_each_run(pieces: list[str], gaps: list[str]) -> None:
    unit = "".join(p + gaps[k % len(gaps)] for k, p in enumerate(pieces))
    text = unit * (4096 // len(unit) + 2)
    paths._dense_memo.clear()
    assert paths.canonical_path(text) == _re2_run_by_run(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["file://", "FiLe:", "localhost", "localho\u017ft", "\u017f", "/", "//", "\\", "./", "../", "é", "Ж", "½",
                                 "\u0301", "😀", "x", "@", "%20"]), min_size=1, max_size=14).map("".join))
def test_the_path_tokens_of_a_non_ascii_file_url_are_re2s(url: str) -> None:
    url = "file://" + url
    expected = paths._path_res()[1].sub(lambda m: paths._canonical(m.group()), url)
    table = path_roles.stand_ins(url)
    assert table is not None
    assert paths._canonical_urls([url], [url.translate(table)]) == [expected]


def test_each_character_plays_the_part_re2_gives_it() -> None:
    import re2

    letters = re2.compile(r"[\p{L}\p{N}]")
    sample = "éЖ中ǅ١Ⅳ½²\U0001123f\U00011f02İı\u212aßﬁ／\u0301\u200b😀€·\u3000\u00a0"
    table = path_roles.stand_ins(sample)
    assert table is not None
    for c in sample:
        assert table[ord(c)] == (path_roles.SEGMENT if letters.fullmatch(c) else path_roles.OTHER), hex(ord(c))
    assert "plain ascii".translate(path_roles.stand_ins("plain ascii")) == "plain ascii"


@pytest.mark.parametrize("text", ["a\ud800/b", "\\a/\udfff" * 30])
def test_a_text_whose_stand_in_would_read_otherwise_keeps_re2(text: str) -> None:
    assert path_roles.stand_ins(text) is None
    runs = [text[i:i + 40] for i in range(0, min(len(text), 800), 40)]
    assert paths._canonical_many(runs) == [paths._canonical_sub(r) for r in runs]


def test_a_dense_text_of_many_distinct_short_non_ascii_runs_is_canonicalised_in_one_pass() -> None:
    """60,000 distinct runs, 20,000 distinct CJK characters: each run by RE2 took ~25 us."""
    text = " ".join(f"\\x{i:x}\\{i % 700}\\u{{{i:x}}}{chr(0x4E00 + i % 20000)};%{i % 256:02X}" for i in range(60_000))
    calls = 0
    real = paths._canonical_sub

    def counted(run: str) -> str:
        nonlocal calls
        calls += 1
        return real(run)

    paths._canonical_sub = counted  # type: ignore[assignment]
    try:
        got = paths.canonical_path(text)
    finally:
        paths._canonical_sub = real  # type: ignore[assignment]
    assert calls == 0  # no run went to RE2 one by one
    sample = text[:5000].rsplit(" ", 1)[0]
    assert got.startswith(real(sample))  # RE2 over the first runs at once, as the reference
