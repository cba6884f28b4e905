"""The path forms of a join are canonicalised in one call on the join of its short pieces
(joins._canonical_paths, session 22), not piece by piece: no path token but a URL holds a NUL. The
pieces' canonical paths are the ones `canonical_path` gives each piece on its own, for short lists
(the sparse scan) and long ones (past paths.DENSE_MIN and dense with separators: `_canonical_dense`,
ASCII and not), with URLs, file: schemes, drives, UNC names, dot segments and percent escapes at
the pieces' edges."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import joins, paths, textmemo
from litmus_rules.domain.paths import canonical_path

PIECES = ["/", "\\", "//", "\\\\", ".", "..", "./", "../", ".\\", ":", "C:", "c:\\", "D:/", "file:", "FILE:",
          "file://", "file://localhost", "://", "http://h", "https://x/", "hTtP://", "~", "~/", "%2e", "%2E%2e",
          "%2f", "%5c", " ", "\n", "\t", '"', "'", "<", ">", "`", "=", "&", "?", "#", "@", "$", "+", "-", "_",
          "x", "dir", "file1.txt", "etc", "passwd", "srv", "share", "1", "é", "É", "ﬁ", "Ｃ", "／", "＼", "Σ",
          "ß", "İ", "ǅ", "\u200b", "\u0301", "𝐱"]

texts_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=14).map("".join), min_size=0, max_size=12)
# enough pieces with separators that their join is past DENSE_MIN and dense with separators
many_st = st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join),
                   min_size=60, max_size=400)


def _each(texts: list[str]) -> list[str]:
    return [canonical_path(t) for t in texts]


@settings(max_examples=400, deadline=None)
@given(texts_st)
@example(["http://h", "x/x/../y"])  # a URL at a piece's end runs on past the NUL of a join
@example(["a/b/", "../c"])  # a trailing separator, then a dot segment at the next piece's start
@example(["file:", "//etc/../passwd"])  # a scheme split from its path
@example(["C:", "\\dir\\..\\file"])  # a drive split from its path
def test_short_pieces_are_canonicalised_as_each_on_its_own(texts: list[str]) -> None:
    textmemo.clear_memo()
    assert joins._canonical_paths(texts) == _each(texts)


@settings(max_examples=60, deadline=None)
@given(many_st)
def test_many_pieces_are_canonicalised_as_each_on_its_own(texts: list[str]) -> None:
    textmemo.clear_memo()
    paths._dense_memo.clear()
    assert joins._canonical_paths(texts) == _each(texts)


def test_a_join_of_windows_paths_takes_the_dense_path_and_agrees() -> None:
    texts = [f"arg {i} C:\\dir\\..\\file{i}.txt" for i in range(2_000)] + ["see http://h/a/../b", "x" * 40_000 + "/a/./b"]
    joined = "\0".join(texts[:-2])
    assert len(joined) > paths.DENSE_MIN and paths.dense_with_separators(joined)
    got = joins._canonical_paths(texts)
    assert got == _each(texts)
    assert got[7] == "arg 7 C:/file7.txt"
    assert got[-2] == "see http://h/a/../b"  # a URL that is not file: is left as it is
