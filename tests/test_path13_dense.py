"""Path-like texts (issue 13): the faster paths give what the former ones gave.

The former implementations are kept here as the oracle:
- path canonicalisation as one RE2 substitution over the whole text, each token through the
  former `_canonical` (what `_canonical_dense`'s runs, memo, whole-token pass and joined steps
  must add up to), and `_canonical` of each path one by one (for `_canonical_paths`);
- a literal's grams looked for one `str` scan each (for the RE2 scan of large texts);
- hex runs found by `re` over the text (for the literal search on its translation).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import encoded, partial, path_roles, paths
from litmus_rules.domain.textmemo import ShortTextMemo

# --- the former implementations (the oracle) -------------------------------------------------


def old_canonical(p: str) -> str:
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
        return old_canonical(p)
    if p[:5].lower() == "file:":
        return paths._path_res()[1].sub(lambda inner: old_canonical(inner.group()), p)  # type: ignore[no-any-return]
    return p  # type: ignore[no-any-return]


def old_canonical_path(text: str) -> str:
    return paths._path_res()[0].sub(_old_token, text)  # type: ignore[no-any-return]


def old_shares_gram(grams: frozenset[str], text: str) -> bool:
    return any(gram in text for gram in grams)


_OLD_HEX_RUN = re.compile(r"[0-9A-Fa-f]{8,}")

# --- generated texts -------------------------------------------------------------------------

_BOUNDARIES = [" ", "\t", "\n", "\r", "\f", '"', "'", "<", ">", "`"]
# every character class the path pattern tells apart, and the prefixes it knows
_PIECES = ["/", "\\", "//", "\\\\", ".", "..", "...", "./", "../", "~", "~/", "a", "Z9", "_", "-", "+", "=", "%",
           "$", "@", ":", "C:", "c:", "C:\\", "c://", "file:", "FILE:", "file://", "fIlE://localhost", "localhost",
           "//localhost", "file:///", "http://", "s3://", "x.y", "?", "#", ",", "&", "(", "\v", "usr", "etc", "f",
           "fi", "file", "0123abcd", "..a", ".a", "a.", "a..", "/.", "/..", "a/", "%2e", "q=1", "[", "]", ";", "!"]
_ASCII_TEXT = st.lists(st.one_of(st.sampled_from(_PIECES), st.sampled_from(_BOUNDARIES)), max_size=30).map("".join)
# non-ASCII: letters and numbers (segment characters for RE2), a format character, a combining mark
# and punctuation (neither: each ends a path token, as an ASCII boundary or "{" does)
_NON_ASCII = ["é", "\u200b", "/é/../x", "中", "\u0301", "٣", "·/x", "\u00a0", "ſ", "ｆile:/x"]
_TEXT = st.one_of(_ASCII_TEXT, st.lists(st.one_of(st.sampled_from(_PIECES + _NON_ASCII),
                                                  st.sampled_from(_BOUNDARIES)), max_size=30).map("".join))


@pytest.fixture(autouse=True)
def _fresh_memos(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(paths, "_dense_memo", ShortTextMemo(paths.DENSE_MEMO_RUNS, paths.DENSE_MEMO_CHARS))
    monkeypatch.setattr(partial, "GRAM_SCAN_RE2_MIN", partial.GRAM_SCAN_RE2_MIN)
    paths._canonical_memo.clear()
    yield


# --- paths -------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_dense_canonicalisation_is_the_whole_text_substitution(text: str) -> None:
    expected = old_canonical_path(text)
    assert paths._canonical_dense(text) == expected
    # again, every run now remembered, and beside a text that shares them
    assert paths._canonical_dense(text) == expected
    other = text + " ./a//b/ " + text[::-1]
    assert paths._canonical_dense(other) == old_canonical_path(other)


@settings(max_examples=20, deadline=None)
@given(st.lists(_ASCII_TEXT, min_size=1, max_size=8))
def test_long_dense_texts_are_canonicalised_as_before(parts: list[str]) -> None:
    text = " ".join(parts + ["/a/../b"])
    text = (text + " ") * (4096 // len(text) + 2)
    assert paths.canonical_path(text) == old_canonical_path(text)


@pytest.mark.parametrize("bound", ["chars", "runs"])
def test_the_memo_is_emptied_past_its_bounds(monkeypatch: pytest.MonkeyPatch, bound: str) -> None:
    memo: ShortTextMemo[str] = ShortTextMemo(5 if bound == "runs" else paths.DENSE_MEMO_RUNS,
                                             40 if bound == "chars" else paths.DENSE_MEMO_CHARS)
    monkeypatch.setattr(paths, "_dense_memo", memo)
    texts = [f"/a{k}/../b{k} ./c{k}//d/ C:\\e{k}" for k in range(6)] + ["x/./y " * 3 + "/z/.. " * 4]
    for text in texts + texts:
        assert paths._canonical_dense(text) == old_canonical_path(text)
        assert sum(map(len, memo._data)) <= memo.chars
        assert len(memo) <= memo.entries


def test_long_runs_are_not_remembered() -> None:
    run = "/x/./" + "a" * (paths.RUN_MEMO_MAX + 1)
    text = f"{run} /y/../z"
    assert paths._canonical_dense(text) == old_canonical_path(text)
    assert run not in paths._dense_memo and "/y/../z" in paths._dense_memo


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["/", "\\", "//", ".", "..", "a", "B_", "file:", "FILE://localhost",
                                          "c:", "~", "%", "-", "localhost"]), min_size=1, max_size=10).map("".join),
                max_size=8))
def test_paths_are_canonicalised_together_as_one_by_one(tokens: list[str]) -> None:
    assert paths._canonical_paths(tokens) == [old_canonical(p) for p in tokens]


# --- grams of large texts ----------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.frozensets(st.text(alphabet="ab/.é\ud800|\\()[]*+?", min_size=2, max_size=2), max_size=20),
       st.text(alphabet="ab/.é\ud800|\\()[]*+? ", max_size=60))
def test_grams_are_found_by_one_scan_as_by_one_each(grams: frozenset[str], text: str) -> None:
    partial.GRAM_SCAN_RE2_MIN = 0  # every text through the RE2 scan (but those it cannot read)
    assert partial._shares_gram(grams, text, 2) == old_shares_gram(grams, text)


def test_no_gram_is_no_overlap() -> None:
    partial.GRAM_SCAN_RE2_MIN = 0
    assert not partial._shares_gram(frozenset(), "x" * 100, 6)
    assert partial.overlap_in("abc", "x" * 100, 6, partial.COMMON_WORD_ZIPF) is None


# --- hex runs ----------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="0123456789abcdefABCDEFghxyzGHXZ+/_-h", max_size=20), max_size=12))
def test_hex_runs_are_found_as_by_re(runs: list[str]) -> None:
    joined = " ".join(runs)
    assert encoded._hex_runs_of(joined) == _OLD_HEX_RUN.findall(joined)


# --- base64 runs -------------------------------------------------------------------------------

_RUN_TEXT = st.lists(st.sampled_from(["usr/lib/etc", "Information", "deadbeef00", "xdeadbeef", "QUJDREVGR0g", "ZXhmaWw=",
                                      "a1234567", "ABCDEFGHIJ", "12345678", "\n", "\r\n", " ", ":", "cafe", "babe",
                                      "Zm9vYmFyYmF6", "-_-_-_-_", "etc/usr/lib.py"]), max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(_RUN_TEXT, st.sampled_from([None, 1, 5]))
def test_runs_that_may_decode_give_the_same_spans(text: str, budget: int | None) -> None:
    runs = encoded._B64_RUN.findall(text)
    kept = encoded._runs_that_may_decode(runs)
    assert set(kept) <= set(runs) and kept == [run for run in runs if run in set(kept)]
    assert encoded._base64_runs(kept, budget) == encoded._base64_runs(runs, budget)
    assert encoded._hex_runs(kept, budget) == encoded._hex_runs(runs, budget)


_BLOCK_TEXT = st.lists(st.one_of(st.sampled_from(["usr/lib/etc", "Information", "deadbeef00", "QUJDREVGR0g", "ZXhmaWw=",
                                                  "a1234567", "ABCDEFGHIJ", "\n", "\r\n", "\r", " ", ":", ".", "é",
                                                  "\ud800", "Zm9vYmFyYmF6", "SGVsbG8gV29y", "bGQh", "-_-_-_-_", "\u200b"]),
                                 st.builds(lambda b: __import__("base64").b64encode(b).decode(), st.binary(max_size=20))),
                       max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(_BLOCK_TEXT, st.sampled_from([0, 1, 2, encoded.HINTED_BLOCKS_MAX]), st.sampled_from([0, 1 << 20]))
def test_candidate_runs_give_the_spans_of_every_run(text: str, blocks_max: int, short: int) -> None:
    from litmus_rules.domain import textmemo

    saved = encoded.HINTED_BLOCKS_MAX, encoded.HINTED_TEXT_MIN
    encoded.HINTED_BLOCKS_MAX = blocks_max  # 0: every text through the whole-text scan
    encoded.HINTED_TEXT_MIN = short  # 0: every text read by blocks; 1 MB: every text read whole
    try:
        textmemo.clear_memo()
        runs = encoded._B64_RUN.findall(text)
        candidates = encoded.candidate_runs(text)
        assert encoded._base64_runs(candidates) == encoded._base64_runs(runs)
        assert encoded._hex_runs(candidates) == encoded._hex_runs(runs)
    finally:
        encoded.HINTED_BLOCKS_MAX, encoded.HINTED_TEXT_MIN = saved


# --- long runs (no token boundary in a whole text) --------------------------------------------

_RUN_PIECES = [p for p in _PIECES if not any(b in p for b in _BOUNDARIES)] + ["a" * 70, "/" * 70, "C:/", "a:/"]
_LONG_RUN = st.one_of(
    st.lists(st.sampled_from(_RUN_PIECES), min_size=20, max_size=90).map("".join),
    st.lists(st.sampled_from(_RUN_PIECES + _NON_ASCII + ["é:/", "中/", "é" * 70]), min_size=20, max_size=90).map("".join))


@settings(max_examples=300, deadline=None)
@given(_LONG_RUN)
def test_long_runs_are_canonicalised_as_by_the_whole_text_substitution(run: str) -> None:
    """A run longer than ASCII_RUN_MAX: by `re` when its runs of segment characters and of
    separators are short (`_re_reads`), else by RE2 called on the bytes (`_ascii_tokens`); a
    non-ASCII run so too, on its ASCII stand-in."""
    expected = old_canonical_path(run)
    assert paths._canonical_many([run]) == [expected]
    assert paths._canonical_sub(run) == expected
    assert paths._canonical_sub(run + "\n" + run) == old_canonical_path(run + "\n" + run)
    paths._canonical_memo.clear()
    assert paths._canonical_many([run, run + "/./x", "x"] * 4) == [expected, old_canonical_path(run + "/./x"), "x"] * 4


@settings(max_examples=150, deadline=None)
@given(_LONG_RUN, st.sampled_from([0, 3, 10**9]))
def test_the_separator_bound_of_the_substitution_changes_no_result(run: str, bound: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(paths, "SUB_SEPARATORS_MAX", bound)
        assert paths._canonical_sub(run) == old_canonical_path(run)


def test_a_sentence_with_a_few_paths_needs_no_stand_in_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_table(text: str) -> None:
        raise AssertionError("the stand-in table was asked for")

    monkeypatch.setattr(paths, "stand_ins", no_table)
    monkeypatch.setattr(paths, "table_loaded", lambda: False)  # a process that has not built it yet
    monkeypatch.setattr(paths, "_sub_chars", 0)
    text = "Lädt /tmp/./données und C:\\Users\\é//x ein, café."
    assert paths._canonical_sub(text) == old_canonical_path(text) == "Lädt /tmp/données und C:/Users/é/x ein, café."


def test_long_texts_with_few_paths_get_the_table_once_their_budget_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """RE2's substitution reads a non-ASCII text in time that grows with its tokens' length: past
    SUB_CHARS_BUDGET characters in a process, such texts are read on their stand-ins."""
    asked: list[int] = []

    def counted(text: str) -> str | None:
        asked.append(len(text))
        return path_roles.stand_ins(text)

    monkeypatch.setattr(paths, "stand_ins", counted)
    monkeypatch.setattr(paths, "table_loaded", lambda: False)
    monkeypatch.setattr(paths, "_sub_chars", 0)
    text = "données\\" * 40 + "é/./x " + "中" * 5000
    for _ in range(2 * paths.SUB_CHARS_BUDGET // len(text) + 2):
        assert paths._canonical_sub(text) == old_canonical_path(text)
    assert asked and paths._sub_chars <= paths.SUB_CHARS_BUDGET
    monkeypatch.setattr(paths, "table_loaded", lambda: True)  # once built, it serves every text
    asked.clear()
    assert paths._canonical_sub("C:\\é\\..\\x") == "C:/x" and asked


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_RUN_PIECES + _NON_ASCII), min_size=1, max_size=8).map("".join),
                min_size=paths.SCALAR_MAX + 1, max_size=30))
def test_many_non_ascii_runs_at_once_are_canonicalised_as_one_by_one(runs: list[str]) -> None:
    """More than SCALAR_MAX runs: the non-ASCII ones found on their stand-ins together, and only
    the tokens whose stand-in changes (and file: URLs) taken from the runs."""
    assert paths._canonical_many(runs) == [old_canonical_path(run) for run in runs]


def test_the_direct_re2_calls_are_used_and_checked_against_the_wrapper(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_ascii_tokens` calls the google-re2 wrapper's compiled pattern directly (not its public
    API): on this install it agrees with the wrapper, and where it would not, `sub` is used."""
    assert paths._direct_calls_agree()
    run = ("C:/" * 50 + "a" * 70 + "/./x ") * 3
    expected = old_canonical_path(run)
    assert paths._canonical_sub(run) == expected
    monkeypatch.setattr(paths, "_direct_calls_agree", lambda: False)
    assert paths._ascii_tokens(paths._path_res()[0], run) is None
    assert paths._canonical_sub(run) == expected


def test_re_reads_only_short_runs_of_segments_and_separators() -> None:
    assert paths._re_reads("C:/" * 1000) and paths._re_reads("a" * 64 + ":" + "/" * 64 + "b")
    assert not paths._re_reads("a." * 40) and not paths._re_reads("x:" + "\\" * 65 + ":")


def test_a_run_of_many_tokens_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """300,000 tokens in one run ("C:/C:/..."): one `re` pass, no RE2 call a token (it took 2 s a MB)."""
    run = "C:/" * 100_000 + "./x/"
    calls: list[str] = []
    real = paths._canonical_sub
    monkeypatch.setattr(paths, "_canonical_sub", lambda text: calls.append(text) or real(text))
    assert paths._canonical_many([run]) == [old_canonical_path(run)]
    assert calls == []
