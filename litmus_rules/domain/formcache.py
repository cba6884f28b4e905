"""The derived forms of texts, cached, or streamed when a text's forms are too large to keep.

`text_forms(text)` gives every form of a text (`normalize.forms`), kept in an LRU while they add
up to at most `normalize.forms_budget(text)` characters; past it, a `StreamedForms` that derives
them one at a time (`normalize.derivations`) and keeps them compressed for the next search, within
REPLAY_BYTES for all such texts (past it, derived again on each search): complete either way, and
memory holds a few uncompressed forms at a time. `answer` remembers the last few answers about
streamed texts (a rule's trace and message ask its question again). Every bound here is a
cache's: an evicted entry is computed again, so the bounds cost time, never completeness.
"""

from __future__ import annotations

import collections
import itertools
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.normalize import Form, Undecodable, derivations, forms_budget, forms_within

W = TypeVar("W")


class StreamedForms:
    """The forms of a text too large to keep them all (`normalize.forms_budget`): derived one at
    a time (`normalize.derivations`), so a search holds a few at a time. Complete: the same texts
    as `forms`, possibly repeated, one view each. The first iteration goes on from where
    `forms_within` stopped (`started`).

    Each form derived is also kept, compressed, so that the next search of the text reads it
    back (about 2 ms a MB) rather than deriving it again (30-200 ms a MB of non-ASCII text: NFKC,
    skeleton, path canonicalisation): the questions about one text (a collision per signal, a
    leak) read its forms in turn. The compressed forms of all streamed texts are bounded together
    (REPLAY_BYTES; the least recently read text's are dropped first); a text whose forms are
    dropped derives them again on each search: a cache, whose bound costs time, never
    completeness."""

    __slots__ = ("__weakref__", "_active", "_complete", "_derived", "_dropped", "_kept", "_lock", "_pulled", "text")

    def __init__(self, text: str, started: tuple[list[Any], Iterator[Any]] | None = None) -> None:
        self.text = text
        self._lock = threading.Lock()
        # The derivations not read yet, shared by the iterations under way (_pulled read so far).
        # Dropped when none is: a suspended derivation holds several derived texts.
        self._derived: Iterator[Any] | None = (
            itertools.chain(started[0], started[1]) if started is not None else None)
        self._pulled = 0
        self._active = 0  # iterations under way
        # the derivations read so far, compressed (`_Store`); rebound to [] when they are dropped
        # (never emptied in place), so that a reader's reference stays whole
        self._kept: list[tuple[str, str, bytes, str] | Undecodable] = []
        self._complete = False  # every derivation is in _kept
        self._dropped = False  # for good: each iteration derives the forms again

    def __iter__(self) -> Iterator[Form | Undecodable]:
        with self._lock:
            self._active += 1
        _store.touch(self)
        try:
            yield from self._iterate()
        finally:
            with self._lock:
                self._active -= 1
                if not self._active:
                    self._derived = None

    def _iterate(self) -> Iterator[Form | Undecodable]:
        position = 0
        # A later search derives the forms again while that is cheap (the transforms' memo holds
        # them still: the very objects, which other memos know by identity), and reads the rest
        # back from the first that is not (REPLAY_AFTER).
        fresh: Iterator[Any] | None = derivations(self.text) if self._kept else None
        while True:
            with self._lock:
                kept = self._kept
                if position < len(kept) and not self._dropped:
                    item: Any = kept[position] if fresh is None else _NONE  # (_NONE: derived below)
                elif self._complete and not self._dropped:
                    return
                else:
                    derived = self._derived
                    if derived is None or self._pulled != position:
                        if self._dropped or position != len(kept):
                            break
                        # (derivations dropped when an earlier search stopped) derived again,
                        # those kept skipped
                        derived = self._derived = (fresh if fresh is not None else
                                                   itertools.islice(derivations(self.text), position, None))
                        fresh = None
                        self._pulled = position
                    item = next(derived, _NONE)
                    self._pulled += 1
                    if item is _NONE:
                        self._derived = None
                        self._complete = True
                        return
                    if not self._dropped and not _store.keep(self, item):
                        _store.drop(self)
                    if self._dropped:  # this iteration goes on with the derivations, alone
                        self._derived = None
                        fresh = itertools.chain((item,), derived)
                        break
                    fresh = None
            if item is _NONE:  # derived again, outside the lock
                began = time.perf_counter()
                item = next(fresh)  # type: ignore[arg-type]  # (deterministic: it derives what was kept)
                if time.perf_counter() - began > REPLAY_AFTER:
                    fresh = None
            position += 1
            yield _form(item)
        # the forms dropped, or those past `position` read by another iteration: derived again (or
        # on, by this iteration's derivations from `position`)
        rest = fresh if fresh is not None else itertools.islice(derivations(self.text), position, None)
        yield from map(_form, rest)

    def _drop(self) -> None:
        """Forget the kept forms (under the store's lock, or this one's)."""
        self._dropped = True
        self._kept = []


def _form(item: Any) -> Form | Undecodable:
    """A derivation (name, text, key), or a kept one (name, key, compressed text, its codec), as a
    Form."""
    if item.__class__ is Undecodable:
        return item
    if len(item) == 4:
        name, key, data, codec = item
        return Form(_zstd()[1].decompress(data).decode(codec, "surrogatepass"), ((name, key),))
    name, text, key = item
    return Form(text, ((name, key),))


def _packed(text: str) -> tuple[bytes, str]:
    """A form's text as bytes, and their codec: the narrowest of Latin-1 and UTF-16 that holds it,
    which copy a text's characters as they are (4-6x faster both ways than UTF-8 on non-ASCII
    text, and as fast on ASCII), else UTF-8, which keeps a lone surrogate (surrogatepass)."""
    try:
        return text.encode("latin-1"), "latin-1"
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-16-le"), "utf-16-le"  # (strict: a lone surrogate raises)
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass"), "utf-8"


# Compressed bytes of the forms kept by all streamed texts together (`_Store`): 60 forms of a MB of
# random non-ASCII text take ~30 MB (zstd at level 1 makes 2.5x less of such text, 4-10x less of
# real text, at ~200 MB/s).
REPLAY_BYTES = 32 << 20
# A later search reads a form back (about 2 ms a MB of text) from the first whose derivation took
# longer than this (seconds); it derives the ones before again (a hit in the transforms' memo: a
# fraction of a millisecond).
REPLAY_AFTER = 0.004


class _Store:
    """Which streamed texts keep their forms, and how many bytes each, least recently read first."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # (a text freed by the garbage collector may re-enter)
        self._held: collections.OrderedDict[int, list[Any]] = collections.OrderedDict()  # [ref, bytes]
        self.total = 0

    def touch(self, forms: StreamedForms) -> None:
        with self._lock:
            if id(forms) in self._held:
                self._held.move_to_end(id(forms))

    def keep(self, forms: StreamedForms, item: Any) -> bool:
        """Keep one derivation of `forms` (under its lock), making room by dropping the forms of
        the texts read least recently; False when it does not fit."""
        if item.__class__ is Undecodable:
            forms._kept.append(item)
            return True
        name, derived, key = item
        packed, codec = _packed(derived)
        data = _zstd()[0].compress(packed)
        del packed
        with self._lock:
            if forms._dropped:  # (by another text's room, while this one compressed)
                return False
            entry = self._held.get(id(forms))
            if entry is None:
                entry = self._held[id(forms)] = [weakref.ref(forms, self._forget(id(forms))), 0]
            if entry[1] + len(data) > REPLAY_BYTES:
                return False
            while self.total + len(data) > REPLAY_BYTES:  # (others hold bytes: this one fits alone)
                oldest = next(iter(self._held))
                if oldest == id(forms):
                    self._held.move_to_end(oldest)
                    continue
                other = self._held[oldest][0]()
                self._release(oldest)
                if other is not None:
                    other._drop()
            entry[1] += len(data)
            self.total += len(data)
            forms._kept.append((name, key, data, codec))
        return True

    def drop(self, forms: StreamedForms) -> None:
        with self._lock:
            self._release(id(forms))
            forms._drop()

    def _forget(self, key: int) -> Callable[[Any], None]:
        return lambda _ref: self._release(key)

    def _release(self, key: int) -> None:
        with self._lock:
            entry = self._held.pop(key, None)
            if entry is not None:
                self.total -= entry[1]


_store = _Store()


_local = threading.local()  # (zstd's compressors are not to be shared between threads)


def _zstd() -> tuple[Any, Any]:
    """This thread's zstd compressor (level 1) and decompressor."""
    codec = getattr(_local, "codec", None)
    if codec is None:
        import zstandard

        codec = _local.codec = (zstandard.ZstdCompressor(level=1), zstandard.ZstdDecompressor())
    return codec


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
