"""re2calls: the direct calls into RE2 find what the `re2` wrapper finds (search and finditer on
bytes), and fall back to the wrapper's own methods for a pattern that is not RE2's."""

from __future__ import annotations

import re

import re2
from hypothesis import example, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import re2calls

PATTERNS = [r"[A-Za-z0-9+/_-]{8}", r"(?:^|[^a-z])[a-z]{2}", r"x*", r"\x{e9}+|\d", r"(a)(b)?|$", r"^", r"\b"]
ALPHABET = st.sampled_from([b"a", b"b", b"x", b"1", b"\x00", b" ", b"\n", "é".encode(), b"AZ+/", b"-_"])


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map(b"".join), st.sampled_from(PATTERNS),
       st.integers(-3, 45), st.one_of(st.none(), st.integers(-3, 45)))
@example(b"ab", r"x*", 0, -2)  # (bounds clamped as the wrapper clamps them: an empty match at 0)
@example(b"ab", r"x*", 5, None)
def test_search_span_is_the_wrappers(data: bytes, spec: str, pos: int, endpos: int | None) -> None:
    pattern = re2.compile(spec)
    wrapped = pattern.search(data, pos, len(data) if endpos is None else endpos)
    assert re2calls.search_span(pattern, data, pos, endpos) == (None if wrapped is None else wrapped.span())


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=40).map(b"".join), st.sampled_from(PATTERNS))
def test_spans_are_the_wrappers_finditer(data: bytes, spec: str) -> None:
    pattern = re2.compile(spec)
    assert re2calls.spans(pattern, data) == [m.span() for m in pattern.finditer(data)]


def test_the_direct_entry_point_is_used_here() -> None:
    # (the google-re2 this project installs has it: were it missing, every call above would be
    # the wrapper's, and those tests would hold trivially)
    assert re2calls._direct_calls_agree()


def test_a_pattern_that_is_not_re2s_is_searched_by_its_own_methods() -> None:
    pattern = re.compile(rb"b+")
    assert re2calls.search_span(pattern, b"aabbba", 1) == (2, 5)
    assert re2calls.spans(pattern, b"ab abb") == [(1, 2), (4, 6)]
    assert re2calls.found(pattern, b"xyz") is False
