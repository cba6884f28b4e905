"""A dense path-like text with a few URLs (issue 13): `_dense_parts` splits it stretch by stretch,
the URL pattern only where "://" is, and gives what one split of the whole text by the URL pattern
gave (the oracle), with or without its cap on stretches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import paths

_PIECES = ["://", ":", ":/", "/", "//", "\\", "a", "b.c", "http", "file:", "x://y", "C:", "..", "~", "-", "@", "%2F",
           "é", "(", ";", "?", "#"]
_DELIMITERS = list(paths._URL_DELIMITERS)
_TEXT = st.lists(st.one_of(st.sampled_from(_PIECES), st.sampled_from(_DELIMITERS)), max_size=40).map(
    lambda pieces: "\n" + "".join(pieces))


@settings(max_examples=1500, deadline=None)
@given(_TEXT)
def test_split_by_stretches_is_the_one_url_split(text: str) -> None:
    assert paths._dense_parts(text) == paths._RE.DENSE_URL_RUN.split(text)


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.integers(min_value=0, max_value=3))
def test_past_the_cap_the_whole_text_is_split_at_once(text: str, cap: int) -> None:
    saved = paths.DENSE_URL_STRETCHES_MAX
    paths.DENSE_URL_STRETCHES_MAX = cap
    try:
        assert paths._dense_parts(text) == paths._RE.DENSE_URL_RUN.split(text)
    finally:
        paths.DENSE_URL_STRETCHES_MAX = saved


@pytest.mark.parametrize("text", [
    "\nsee https://a.b/c/../d and C:\\x\\..\\y then ftp://h/p", "\nhttp://x", "\n://", "\nno url /a/./b",
    '\n"http://a/b"<file:///etc//passwd>`s3://b/k/../l`', "\n" + "a/b " * 50 + "http://z/" + " c\\d" * 50,
])
def test_texts_with_urls(text: str) -> None:
    assert paths._dense_parts(text) == paths._RE.DENSE_URL_RUN.split(text)
    assert paths._canonical_dense(text[1:]) == paths._canonical_dense_runs(text[1:])
