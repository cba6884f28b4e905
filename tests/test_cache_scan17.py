"""`BoundedCache(scan_resistant=True)`, the memo of large texts' transforms (issue 13): keys asked
for in turn, more than fit (every transform of a 1 MB text, once per search over its streamed
forms), stay mostly hits instead of each being evicted just before it is asked for again; the
bounds hold and a hit is always the value last put under its key."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.cache import BoundedCache
from litmus_rules.domain import textmemo, transforms


def _turns(cache: BoundedCache[str], keys: list[str], turns: int) -> int:
    """Ask for every key in turn, putting the missing ones; the misses."""
    misses = 0
    for _ in range(turns):
        for key in keys:
            if cache.get(key) is None:
                misses += 1
                cache.put(key, key.upper(), 10)
    return misses


def test_a_scan_larger_than_the_cache_keeps_hitting() -> None:
    keys = [f"k{i}" for i in range(30)]
    lru: BoundedCache[str] = BoundedCache(100, 200)  # 20 entries of weight 10 fit
    assert _turns(lru, keys, 4) == 4 * 30  # plain LRU: every key is a miss on every turn
    resistant: BoundedCache[str] = BoundedCache(100, 200, scan_resistant=True)
    misses = _turns(resistant, keys, 4)
    assert misses <= 30 + 3 * 12  # after the first turn, most of the 20 that fit are hits
    assert len(resistant) <= 20


def test_new_keys_still_push_out_the_least_recent() -> None:
    cache: BoundedCache[str] = BoundedCache(3, scan_resistant=True)
    for key in "abcd":
        cache.put(key, key)
    assert cache.get("a") is None and [cache.get(k) for k in "bcd"] == ["b", "c", "d"]
    cache.clear()
    assert len(cache) == 0 and cache.get("b") is None


_OPS = st.lists(st.tuples(st.sampled_from(["get", "put"]), st.integers(0, 15), st.integers(0, 40)), max_size=200)


@settings(max_examples=300, deadline=None)
@given(_OPS, st.booleans())
def test_bounds_hold_and_a_hit_is_the_last_value_put(ops: list[tuple[str, int, int]], resistant: bool) -> None:
    cache: BoundedCache[tuple[int, int]] = BoundedCache(6, 60, scan_resistant=resistant)
    last: dict[int, tuple[int, int]] = {}
    for step, (op, key, weight) in enumerate(ops):
        if op == "put":
            value = (key, step)
            assert cache.put(key, value, weight) == value
            last[key] = value
            assert cache.get(key) == value  # never the one evicted
        else:
            hit = cache.get(key)
            assert hit is None or hit == last[key]
        assert len(cache) <= 6
        assert len(cache) == 1 or cache._weight <= 60


def test_the_transform_memo_weighs_the_bytes_its_results_hold() -> None:
    text = "中文" * textmemo.MEMO_MIN  # two bytes a character in memory: weighed as such, not as one
    textmemo.clear_memo()
    folded = transforms.casefold(text)
    assert textmemo._memo._weight >= 2 * len(folded)
    assert transforms.casefold(text) is folded  # kept
