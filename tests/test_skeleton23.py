"""The confusable skeleton of large texts mostly ASCII (session 23): one with many short runs of
non-ASCII is mapped with the list form of the table, one with few by its runs; the same skeleton
either way, that of the plain definition (NFD, the table, NFD)."""

from __future__ import annotations

import random
import re
import unicodedata

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from litmus_rules.domain import textmemo, transforms

NON_ASCII = ["é", "\u0301", "ž", "ﬁ", "ǅ", "а", "Ι", "\u200b", "😀", "ß", "\u0316"]


def plain_skeleton(text: str) -> str:
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(transforms._skeleton_table()))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 80), st.lists(st.sampled_from(NON_ASCII), min_size=1, max_size=3), st.integers(0, 2**32))
def test_large_texts_have_the_plain_skeleton(gap: int, pool: list[str], seed: int) -> None:
    rng = random.Random(seed)
    pieces, n = [], 0
    while n < transforms.LIST_MIN + 500:
        filler = "".join(rng.choice("abcIl0O1 /:=.") for _ in range(rng.randint(0, 2 * gap)))
        piece = filler + "".join(rng.choice(pool) for _ in range(rng.randint(1, 3)))
        pieces.append(piece)
        n += len(piece)
    text = "".join(pieces)
    textmemo.clear_memo()
    assert transforms.skeleton(text) == plain_skeleton(text)


def test_the_runs_decide_the_way() -> None:
    many = ("ab" + "\u0301") * 2000  # a run every 3 characters, a third of the bytes non-ASCII
    few = ("a" * 60 + "\u0301") * 100
    for text, dense in ((many, True), (few, False)):
        data = text.encode()
        assert (len(data) - len(text)) * transforms.DENSE_NON_ASCII <= len(data)  # not dense by its bytes
        assert transforms._dense(text) is dense
        assert transforms.skeleton(text) == plain_skeleton(text)
    for text in (many, few, "\u0301ab", "é", "ab", "ééa😀b\u200bc", "a" + "ﬁ" * 3):
        assert transforms._non_ascii_runs(text.encode()) == len(re.findall("[^\x00-\x7f]+", text))
