"""encoded_spans (session 23): what base64 and hex decode from many short texts, found at once,
is what they decode from each text on its own; and the memo that keeps it stays within its bounds."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import encoded_spans
from litmus_rules.domain.encoded import _base64_runs, _hex_runs, candidate_runs
from litmus_rules.domain.textmemo import ShortTextMemo


def one_by_one(text: str) -> encoded_spans.Spans:
    runs = candidate_runs(text)
    return tuple(_base64_runs(runs)), tuple(_hex_runs(runs))


PIECES = st.one_of(
    st.sampled_from(["arg", "see", " ", ", ", "é", "ﬁ", "\u200b", "/", "+", "-", "_", "=", "\r", "\n",
                     "1000", "Hello", "information", "ABCDEFGH", "12345678", "deadbeef", "DEADBEEF0"]),
    st.binary(min_size=3, max_size=24).map(lambda b: base64.b64encode(b).decode()),
    st.binary(min_size=3, max_size=24).map(lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")),
    st.binary(min_size=4, max_size=16).map(bytes.hex),
    st.text(alphabet="aGVsbG8gd29ybGQ0x9+/_-", min_size=1, max_size=30),
    st.text(max_size=6),
)
TEXTS = st.lists(PIECES, max_size=10).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXTS, min_size=encoded_spans.MANY_MIN, max_size=40))
def test_many_texts_decode_as_each_alone(texts: list[str]) -> None:
    expected = [one_by_one(text) for text in texts]
    encoded_spans.clear_memo()
    encoded_spans.decode_many(texts)
    assert [encoded_spans.decoded_spans(text) for text in texts] == expected


def test_the_texts_are_decoded_together() -> None:
    # (so that the test above compares the joint decoding, not each text decoded again)
    texts = [f"arg {i} aGVsbG8gd29ybGQ{i % 10} {f'tok{i:02d}'.encode().hex()}" for i in range(40)]
    encoded_spans.clear_memo()
    encoded_spans.decode_many(texts)
    assert all(text in encoded_spans._memo for text in texts)
    b64, hexes = encoded_spans.decoded_spans(texts[3])
    assert b64[0].startswith("hello world") and hexes == ("tok03",)
    assert (b64, hexes) == one_by_one(texts[3])


def test_what_is_not_decoded_together_is_decoded_alone() -> None:
    texts = ["aGVsbG8gd29ybGQ\naGVsbG8g", "x\0aGVsbG8gd29ybGQ", "y" * encoded_spans.SHORT_MAX] + [f"t{i}" for i in range(8)]
    encoded_spans.clear_memo()
    encoded_spans.decode_many(texts)
    assert texts[0] not in encoded_spans._memo and texts[1] not in encoded_spans._memo
    assert [encoded_spans.decoded_spans(text) for text in texts] == [one_by_one(text) for text in texts]
    assert texts[2] not in encoded_spans._memo  # (long: not kept)


def test_the_memo_stays_within_its_bounds(monkeypatch: Any) -> None:
    monkeypatch.setattr(encoded_spans, "_memo", ShortTextMemo(16, 400))
    texts = [f"arg {i} aGVsbG8gd29ybGQ{i % 10}" for i in range(100)]
    for start in range(0, 100, 10):
        encoded_spans.decode_many(texts[start:start + 10])
        assert len(encoded_spans._memo) <= 16 and encoded_spans._memo._chars <= 400
    encoded_spans.decode_many(texts)  # more than it holds: nothing kept, each made again when asked
    assert len(encoded_spans._memo) <= 16
    assert [encoded_spans.decoded_spans(text) for text in texts] == [one_by_one(text) for text in texts]
