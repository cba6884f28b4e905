"""The path forms of a join are canonicalised in one call on the join of its short pieces
(joins._canonical_paths, session 22), not piece by piece: no path token but a URL holds a NUL. The
pieces' canonical paths are the ones `canonical_path` gives each piece on its own, for short lists
(the sparse scan) and long ones (past paths.DENSE_MIN and dense with separators: `_canonical_dense`,
ASCII and not), with URLs, file: schemes, drives, UNC names, dot segments and percent escapes at
the pieces' edges. And a text tested on its own is left out of the forms a haystack derives after
(joins.Joins.left_out): not derived, and the searches answer as text by text."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import joined, joins, paths, textmemo
from litmus_rules.domain.joined import Haystack
from litmus_rules.domain.matching import collides, first_collision, first_leak, leaks
from litmus_rules.domain.paths import canonical_path
from litmus_rules.domain.textmemo import MEMO_MIN

from _helpers import first_one_by_one, forget_searches, search_outcome

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


# ---- a text tested on its own is left out of the forms derived after (joins.Joins.left_out) ----

_LARGE = ("see C:\\dir\\..\\lc-5f0e9a1d7c3b and é " * 1200)  # 40 KB: large, and changed by a decoder


def test_a_large_text_tested_on_its_own_is_left_out_of_the_derived_forms(monkeypatch: Any) -> None:
    """Its transforms are its own forms' (textmemo keeps them while it can, and made them again
    for every haystack once it could not): the haystack neither derives nor searches them."""
    texts = ("plain words", "x/../y and é", _LARGE, "tail é \\u006c")
    assert len(_LARGE) >= MEMO_MIN
    forget_searches()
    canonicalised: list[int] = []
    real = joins.canonical_path
    monkeypatch.setattr(joins, "canonical_path", lambda text: canonicalised.append(len(text)) or real(text))
    hay = Haystack(texts)
    assert 2 in hay.exact
    for name in ("normalised", "skeleton", "path", "path-casefold"):
        form = hay.form(name)
        assert form is not None
        assert form.data.split(b"\0")[1:][2] == b"", name  # its segment is empty (the join starts with a NUL)
    assert len(_LARGE) not in canonicalised and max(canonicalised) < MEMO_MIN


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([0, 1, 2, 3]), st.sampled_from(["lc-5f0e9a1d7c3b", "C:/lc-5f0e9a1d7c3b", "/y", "tail", "zz-none"]))
def test_searches_with_a_text_left_out_answer_as_text_by_text(at: int, token: str) -> None:
    texts = ["plain words", "x/../y and é", "tail é \\u006c"]
    texts.insert(at, _LARGE)
    expected = search_outcome(lambda: first_one_by_one(lambda t: leaks(token, t), texts))
    forget_searches()
    assert search_outcome(lambda: first_leak(token, texts)) == expected
    signal = {"id": "s", "kind": "substring", "value": token}
    expected = search_outcome(lambda: first_one_by_one(lambda t: collides(signal, t), texts))
    joined._haystacks.clear()
    assert search_outcome(lambda: first_collision(signal, texts)) == expected
