"""The forms cache under a scan larger than itself: texts asked for in turn, again and again (a
rule's loop over 10,000 schema descriptions, once per signal), stay partly cached instead of each
being evicted just before it is asked for again; new texts still push out the least recent."""

from __future__ import annotations

import pytest

from litmus_rules.domain import formcache
from litmus_rules.domain.normalize import forms


@pytest.fixture
def small_cache(monkeypatch: pytest.MonkeyPatch) -> formcache._FormsCache:
    cache = formcache._FormsCache(max_entries=50)  # (it remembers the last 4 x 50 texts evicted)
    derived: list[str] = []

    def derive(text: str) -> formcache.Forms:
        derived.append(text)
        return forms(text)

    monkeypatch.setattr(cache, "_derive", derive)
    cache.derived = derived  # type: ignore[attr-defined]
    return cache


def test_a_scan_larger_than_the_cache_keeps_hitting(small_cache: formcache._FormsCache) -> None:
    texts = [f"see \\x{i:02x} &#{i}; item {i}" for i in range(80)]
    for _ in range(4):
        for text in texts:
            assert small_cache.get(text) == forms(text)  # the same forms, cached or not
    derived = small_cache.derived  # type: ignore[attr-defined]
    # plain LRU derives all 80 on each of the 4 turns (320); here the turns after the first
    # find 49 of the 80 cached
    assert len(derived) == 80 + 3 * (80 - 49)


def test_new_texts_push_out_the_least_recent(small_cache: formcache._FormsCache) -> None:
    for i in range(50):
        small_cache.get(f"text {i}")
    small_cache.get("text 0")  # used again: the most recent now
    small_cache.get("text 50")  # new: "text 1" goes
    derived = small_cache.derived  # type: ignore[attr-defined]
    before = len(derived)
    small_cache.get("text 0")
    assert len(derived) == before  # kept
    small_cache.get("text 1")
    assert len(derived) == before + 1  # evicted, derived again
