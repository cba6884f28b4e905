"""What the text transforms share: results kept for large texts (`memo_large`), and the RE2
engine's options, built on first use (`re2_options`) so that importing the package loads no engine.

A large text goes through the same transforms from several places (its forms, the joined haystack
of the surfaces it is one of, the keys of its decoded texts, a search whose forms are streamed):
each transform of a text of at least MEMO_MIN characters is computed once while its result is
kept (MEMO_BYTES bytes of results in all, as `sys.getsizeof` counts them, MEMO_ENTRIES results).
A memo of pure functions: an evicted result is computed again, never a different one. Its UTF-8
too (`utf8`): the `re2` wrapper encodes a str on every search, and a large text's forms are scanned
by RE2 many times (presence tests, pages, regex probes, the joins of the haystacks it is in).
MEMO_BYTES holds every transform and UTF-8 of a 1 MB text whose every decoder finds something to
decode (1 MB of random printable ASCII: 75 MiB); a search over streamed forms (normalize.forms_budget)
asks for them all in turn, once per question, and the memo resists that scan (cache.BoundedCache's
`scan_resistant`): past its bound, most of them are still hits on the next turn (and from the
first that is not, formcache.StreamedForms reads the forms back from its compressed copies).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.re2calls import found

MEMO_MIN = 1 << 15
MEMO_BYTES = 96 << 20
MEMO_ENTRIES = 256
_memo: BoundedCache[Any] = BoundedCache(MEMO_ENTRIES, MEMO_BYTES, scan_resistant=True)
_MISSING: Any = object()

R = TypeVar("R")


# Set inside `transient()`: the texts transformed are made for the moment and nothing keeps them.
_transient: contextvars.ContextVar[bool] = contextvars.ContextVar("litmus_memo_transient", default=False)


@contextlib.contextmanager
def transient() -> Iterator[None]:
    """Inside this block no result is kept: the texts transformed are made for the moment (a
    join of many small texts, joins.py) and never asked for again, and the memo, which weighs a
    result but not its key, would hold them and their transforms (1,000 texts of 1 KB of random
    printable ASCII, their decoder outputs joined: 110 MiB past the bound)."""
    token = _transient.set(True)
    try:
        yield
    finally:
        _transient.reset(token)


def memo_large(fn: Callable[[str], R]) -> Callable[[str], R]:
    """`fn` (a pure function of one text), its result kept for texts of MEMO_MIN+ characters
    (but inside `transient()`)."""
    name = _memo_name(fn)

    @functools.wraps(fn)
    def memoised(text: str) -> R:
        if len(text) < MEMO_MIN or _transient.get():
            return fn(text)
        key = (name, text)
        hit = _memo.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[no-any-return]
        return _kept(key, fn(text))

    return memoised


def _memo_name(fn: Callable[..., Any]) -> str:
    """What names `fn`'s results in the memo."""
    return f"{fn.__module__}.{fn.__qualname__}"


def _kept(key: tuple[str, str], result: R) -> R:
    # Weighed by what the entry adds: its result. Its key is a text the caller holds (an
    # episode's, or another entry's result), often under several entries.
    weight = 64
    if isinstance(result, (str, bytes)) and result is not key[1]:
        weight += sys.getsizeof(result)
    elif isinstance(result, (list, tuple)):
        weight += sum(sys.getsizeof(x) for x in result if isinstance(x, str))
    return _memo.put(key, result, weight)


class ShortTextMemo(Generic[R]):
    """A memo of a pure function of short texts (encoded_spans.py, grouped.py, the runs of dense
    path texts in paths.py): a dict, emptied when it would hold more than `entries` texts or
    `chars` characters of them (it holds the texts, which their episodes would have let go).
    Filled many texts at a time by the functions that decode many at once; a batch larger than
    the bounds is not kept."""

    def __init__(self, entries: int, chars: int) -> None:
        self.entries, self.chars = entries, chars
        self._data: dict[str, R] = {}
        self._chars = 0
        self.get = self._data.get

    def __contains__(self, text: str) -> bool:
        return text in self._data

    def __len__(self) -> int:
        return len(self._data)

    def keep(self, texts: list[str], values: list[R]) -> None:
        size = sum(map(len, texts))
        if len(self._data) + len(texts) > self.entries or self._chars + size > self.chars:
            self.clear()
        if len(texts) > self.entries or size > self.chars:
            return  # more than the memo holds: not kept
        self._data.update(zip(texts, values))
        self._chars += size

    def clear(self) -> None:
        self._data.clear()
        self._chars = 0


def remember(memoised: Callable[[str], R], text: str, result: R) -> R:
    """Keep `result` as what the `memo_large` function `memoised` gives for `text`, where the
    caller found it another way (path_fold.canonical_path_folded): a later call of `memoised` on
    `text` takes it from the memo. `result` must be the very value `memoised(text)` returns.
    (A function that is not `memo_large`'s, a test's stand-in say, keeps nothing.)"""
    fn = getattr(memoised, "__wrapped__", None)
    if fn is not None and len(text) >= MEMO_MIN:
        return _kept((_memo_name(fn), text), result)
    return result


@memo_large
def utf8(text: str) -> bytes:
    """`text` in UTF-8 (UnicodeEncodeError for a lone surrogate), kept for large texts: an RE2
    search of a str encodes all of it on every call (the `re2` wrapper does), so a large text that
    several scans read (its presence tests, the joined forms of the haystacks it is in) is
    encoded once and they search the bytes."""
    return text.encode("utf-8")


def re2_found(pattern: Any, text: str) -> bool:
    """Whether the compiled RE2 `pattern` matches in `text`, searched in its kept UTF-8 (`utf8`:
    the presence tests of a large text encode it once); a lone surrogate, which UTF-8 cannot
    hold, is read as U+FFFD."""
    try:
        return re2_in(pattern, text)
    except UnicodeEncodeError:
        return pattern.search(_surrogate().sub("\ufffd", text)) is not None


def re2_in(pattern: Any, text: str) -> bool:
    """Whether the compiled RE2 `pattern` matches in `text` read as UTF-8, as the `re2` wrapper
    reads a str (a large text's kept UTF-8: `utf8`); UnicodeEncodeError for a lone surrogate,
    which UTF-8 cannot hold (the caller decides what that means)."""
    return found(pattern, utf8(text) if len(text) >= MEMO_MIN else text.encode("utf-8"))


@functools.cache
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


def clear_memo() -> None:
    """Forget every kept result (tests, benchmarks)."""
    _memo.clear()


@functools.cache
def re2_options(max_mem: int | None = None) -> Any:
    """RE2 options that do not log failures (callers fall back), with this memory limit."""
    import re2

    options = re2.Options()
    options.log_errors = False
    if max_mem is not None:
        options.max_mem = max_mem
    return options


@functools.cache
def re2_compiled(pattern: str) -> Any:
    """A fixed pattern of the domain modules compiled for RE2 (`re2_options()`), once per process,
    on first use (importing the package compiles nothing). Not for patterns made from input: they
    would be kept for ever."""
    return re2_module().compile(pattern, re2_options())


@functools.cache
def re2_module() -> Any:
    import re2

    return re2
