"""A schema value compared with a signal's argument value gives the same transform whether the
comparison is remembered (short texts, `signals._same_text_remembered`) or made afresh."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import signals

_PIECES = ["/srv/data/", "C:\\Users\\x", "..", "%2F", "%2e%2E", "REPORT", "report", "ｒｅｐｏｒｔ", "\u200b", " ",
           "file:///tmp/a", "./", "x", "1", "true", "{\"a\": 1}", "é", "e\u0301"]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join)
_EXPECTED = st.one_of(_TEXTS, st.integers(-2, 2), st.booleans(), st.none(), st.floats(allow_nan=False, width=16))


@settings(max_examples=300, deadline=None)
@given(expected=_EXPECTED, schema_text=_TEXTS)
def test_a_remembered_comparison_is_the_fresh_one(expected: Any, schema_text: str) -> None:
    fresh = signals._same_value(expected, schema_text)
    again = signals._same_value(expected, schema_text)  # a memo hit for short texts
    expected_text = expected if isinstance(expected, str) else None
    assert fresh == again
    if expected_text is not None:
        assert fresh == signals._same_text(expected_text, schema_text)


def test_long_texts_are_compared_afresh_with_the_same_answer() -> None:
    long_path = "/srv/" + "a/" * signals.SAME_TEXT_MEMO_CHARS
    assert signals._same_value(long_path + "b", long_path + "./b") == "path canonicalised"
    assert signals._same_value(long_path + "b", long_path + "c") is None
