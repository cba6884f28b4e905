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

    Keys are compared by value. To key by an object's identity (a list a rule reads, an episode's
    `context`), use `id(obj)` as the key and keep `obj` in the value, checking `held is obj` on a
    hit: an object the cache holds cannot be collected, so its id is not reused while it is here.
    """

    def __init__(self, max_entries: int, max_weight: int | None = None) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._data: collections.OrderedDict[Hashable, tuple[V, int]] = collections.OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

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
        past either bound, but never the newest."""
        with self._lock:
            held = self._data.pop(key, _MISSING)
            if held is not _MISSING:
                self._weight -= held[1]
            self._data[key] = (value, weight)
            self._weight += weight
            while len(self._data) > 1 and (
                len(self._data) > self.max_entries
                or (self.max_weight is not None and self._weight > self.max_weight)
            ):
                _, (_, dropped) = self._data.popitem(last=False)
                self._weight -= dropped
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
