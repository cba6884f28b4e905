"""One bounded, thread-safe cache class for per-episode work that is worth keeping a little while.

Its instances are state, so each has an owner: the `RuleSet` (through the environment it builds,
domain/environment.py) holds the surface walk's stopping notes, the texts of recent surface lists
and the joined haystacks of recent searches. A cache never changes a result: an evicted entry is
computed again when asked for.

Not state, and so not here: `functools.lru_cache` on pure functions of immutable inputs (a compiled
regex for a pattern string, the parsed episode schema, a grammar). Their value for an input never
changes, whoever asks and whenever, so sharing them across rulesets and threads is memoisation.
"""

from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Generic, Hashable, TypeVar

V = TypeVar("V")
_MISSING: Any = object()


class BoundedCache(Generic[V]):
    """A least-recently-used map bounded by its number of entries and, optionally, by the total
    weight of its values (bytes held). Thread-safe: a RuleSet is shared across threads.

    `scan_resistant`: a key put again soon after its eviction (its hash among the last evicted)
    makes room among the newest entries instead of the oldest. Keys asked for in turn, more than
    fit (every transform of a large text, once per search over its streamed forms), then keep
    most of them hits on each turn, where LRU evicts each one just before it is asked for again.

    Keys are compared by value. To key by an object's identity (a list a rule reads, an episode's
    `context`), use `id(obj)` as the key and keep `obj` in the value, checking `held is obj` on a
    hit: an object the cache holds cannot be collected, so its id is not reused while it is here.
    """

    def __init__(self, max_entries: int, max_weight: int | None = None, *, scan_resistant: bool = False) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._data: collections.OrderedDict[Hashable, tuple[V, int]] = collections.OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()
        # hashes of the keys evicted last, at most 4x max_entries (`scan_resistant`; a hash that
        # collides only chooses which end of the cache makes room)
        self._evicted: collections.OrderedDict[int, bool] | None = (
            collections.OrderedDict() if scan_resistant else None)

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, default: Any = None) -> V | Any:
        with self._lock:
            hit = self._data.get(key, _MISSING)
            if hit is _MISSING:
                return default
            self._data.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: V, weight: int = 0) -> V:
        """Keep `value` under `key` (replacing what was there) and return it. The oldest entries go
        past either bound (the newest others, for a key put again: `scan_resistant`), never this one."""
        with self._lock:
            held = self._data.pop(key, _MISSING)
            if held is not _MISSING:
                self._weight -= held[1]
            evicted = self._evicted
            again = evicted is not None and evicted.pop(hash(key), False)  # (see the class doc)
            self._data[key] = (value, weight)
            self._weight += weight
            if again:
                self._data.move_to_end(key, last=False)
            while len(self._data) > 1 and (
                len(self._data) > self.max_entries
                or (self.max_weight is not None and self._weight > self.max_weight)
            ):
                dropped_key, (_, dropped) = self._data.popitem(last=bool(again))
                self._weight -= dropped
                if evicted is not None:
                    evicted[hash(dropped_key)] = True
                    if len(evicted) > 4 * self.max_entries:
                        evicted.popitem(last=False)
            if again:
                self._data.move_to_end(key)
            return value

    def get_or_make(self, key: Hashable, make: Callable[[], V], weigh: Callable[[V], int] | None = None) -> V:
        """The value under `key`, made (outside the lock: making may be slow) when absent."""
        hit = self.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        made = make()
        return self.put(key, made, weigh(made) if weigh is not None else 0)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._weight = 0
            if self._evicted is not None:
                self._evicted.clear()
