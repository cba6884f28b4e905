"""The derived forms of texts, cached, or streamed when a text's forms are too large to keep.

`text_forms(text)` gives every form of a text (`normalize.forms`), kept in an LRU while they add
up to at most `normalize.forms_budget(text)` characters; past it, a `StreamedForms` that derives
them again, one at a time, on each search (`normalize.derivations`): complete either way, and
memory holds a few forms at a time. `answer` remembers the last few answers about streamed texts
(a rule's trace and message ask its question again). Every bound here is a cache's: an evicted
entry is computed again, so the bounds cost time, never completeness.
"""

from __future__ import annotations

import collections
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.normalize import Form, Undecodable, derivations, forms_budget, forms_within

W = TypeVar("W")


class StreamedForms:
    """The forms of a text too large to keep them all (`normalize.forms_budget`): each
    iteration derives them again, one at a time (`normalize.derivations`), so a search holds a
    few at a time. Complete: the same texts as `forms`, possibly repeated, one view each.
    The first iteration goes on from where `forms_within` stopped (`started`)."""

    __slots__ = ("_lock", "started", "text")

    def __init__(self, text: str, started: tuple[list[Any], Iterator[Any]] | None = None) -> None:
        self.text = text
        self.started = started
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[Form | Undecodable]:
        with self._lock:
            started, self.started = self.started, None
        items: Iterable[Any] = (itertools.chain(started[0], started[1]) if started is not None
                                else derivations(self.text))
        del started
        for item in items:
            if item.__class__ is Undecodable:
                yield item  # type: ignore[misc]
            else:
                name, derived, key = item  # type: ignore[misc]
                yield Form(derived, ((name, key),))


Forms = tuple[Form | Undecodable, ...] | StreamedForms


class _FormsCache:
    """LRU of text -> forms, bounded by entries and by total characters held, resistant to scans
    larger than itself (`cache.BoundedCache`'s `scan_resistant`). A cache: an evicted entry is derived again when asked for, so its
    bounds cost time, never completeness."""

    MAX_ENTRIES = 8192  # tool manifests repeat across a benchmark's episodes
    MAX_CHARS = 8 << 20  # characters of derived forms: enough for a manifest shared by a batch
    MAX_TEXT = 4 << 20  # larger texts, and texts with larger forms than MAX_CHARS / 2, are not kept
    # with the others (they would evict everything)...

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        # A text asked for again after its eviction: the texts asked for in turn (a rule's loop
        # over 10,000 schema descriptions, once per signal) do not all fit, and LRU would evict each
        # one just before it is asked for again; scan-resistant, room is made at the other end
        # (cache.BoundedCache), and the older entries are hits on the next turn.
        self._kept: BoundedCache[Forms] = BoundedCache(max_entries, self.MAX_CHARS, scan_resistant=True)
        # ... but the last one is kept on its own: an episode asks for its forms once per rule
        self._large: tuple[str, Forms] | None = None

    @staticmethod
    def _derive(text: str) -> Forms:
        kept = forms_within(text, forms_budget(text))
        if len(kept) == 2 and isinstance(kept[0], list):
            return StreamedForms(text, kept)  # type: ignore[arg-type]
        return kept  # type: ignore[return-value]

    def get(self, text: str) -> Forms:
        large = self._large
        if large is not None and large[0] == text:
            return large[1]
        if len(text) > self.MAX_TEXT:
            result = self._derive(text)
            self._large = (text, result)
            return result
        hit = self._kept.get(text, _NONE)
        if hit is not _NONE:
            return hit
        result = self._derive(text)
        size = len(text) if isinstance(result, StreamedForms) else sum(
            len(f.text) for f in result if isinstance(f, Form))
        if size > self.MAX_CHARS // 2:
            # kept with the others it would evict them all, itself included
            self._large = (text, result)
            return result
        return self._kept.put(text, result, size)


_forms_cache = _FormsCache()


def forms_cache_in_use() -> object:
    """The cache `text_forms` reads now. A memo of answers derived from forms (witnesses.py)
    compares it with the one it was filled from: a new cache (made to derive forms afresh, under
    other limits) means its answers no longer hold."""
    return _forms_cache


def text_forms(text: str) -> Forms:
    """The (cached) derived forms of `text`: every form, as a tuple, or streamed when they
    would take more than `normalize.forms_budget(text)` characters."""
    return _forms_cache.get(text)


class _StreamedResults:
    """The last few answers about texts whose forms are streamed (each answer derives every
    form again; a rule's trace and message ask the same question again). A cache: bounded by
    entries, a miss recomputes."""

    MAX_ENTRIES = 32

    def __init__(self) -> None:
        self._data: collections.OrderedDict[tuple[Any, str], Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, text: str, compute: Callable[[], W | None]) -> W | None:
        with self._lock:
            hit = self._data.get((key, text), _NONE)
        if hit is _NONE:
            try:
                hit = compute()
            except LimitUnknown as exc:  # deterministic: remembered like an answer
                hit = exc
            with self._lock:
                self._data[(key, text)] = hit
                while len(self._data) > self.MAX_ENTRIES:
                    self._data.popitem(last=False)
        if isinstance(hit, LimitUnknown):
            raise hit
        return hit  # type: ignore[no-any-return]


_NONE: Any = object()
_streamed_results = _StreamedResults()


def answer(key: Any, text: str, derived: Forms, compute: Callable[[Forms], W | None]) -> W | None:
    """compute(derived), remembered for streamed forms (LimitUnknown too: it is deterministic)."""
    if isinstance(derived, StreamedForms):
        return _streamed_results.get(key, text, lambda: compute(derived))
    return compute(derived)
