"""RE2 searches of bytes through the engine's own entry point, without the wrapper's Python.

The `re2` wrapper's `search` makes a generator and a match object per call (~2.5 us); the scans
that ask many small questions (is a hint in this segment of a join? in this short text?) make
tens of thousands of calls an episode, and spent more time in the wrapper than in RE2. On bytes,
the wrapper's search is one call of `pattern._regexp.Match(anchor, data, pos, endpos)` with its
bounds clamped (~0.7 us): `search_span` makes that call itself, and `spans` one per match. The
entry point is not public, so it is used only where it gives what the wrapper gives
(`_direct_calls_agree`, asked once per process); elsewhere the wrapper is called, to the same
result.
"""

from __future__ import annotations

import functools
from typing import Any


def search_span(pattern: Any, data: bytes, pos: int = 0, endpos: int | None = None) -> tuple[int, int] | None:
    """The span of `pattern.search(data, pos, endpos)` (a compiled RE2 pattern, `data` bytes), or None."""
    n = len(data)
    pos = 0 if pos < 0 else (n if pos > n else pos)
    endpos = n if endpos is None or endpos > n else (0 if endpos < 0 else endpos)
    if pos > endpos:
        return None
    regexp = getattr(pattern, "_regexp", None)
    if regexp is not None and _direct_calls_agree():
        span = regexp.Match(_unanchored(), data, pos, endpos)[0]
        return None if span[0] < 0 else span
    found = pattern.search(data, pos, endpos)
    return None if found is None else found.span()


def spans(pattern: Any, data: bytes) -> list[tuple[int, int]]:
    """The spans of `pattern.finditer(data)` (a compiled RE2 pattern, `data` bytes), found as the
    wrapper finds them: from the end of each match, one byte further after an empty one."""
    regexp = getattr(pattern, "_regexp", None)
    if regexp is None or not _direct_calls_agree():
        return [m.span() for m in pattern.finditer(data)]
    match, unanchored = regexp.Match, _unanchored()
    out: list[tuple[int, int]] = []
    pos, n = 0, len(data)
    while True:
        span = match(unanchored, data, pos, n)[0]
        if span[0] < 0:
            return out
        out.append(span)
        if pos == n:
            return out
        pos = pos + 1 if pos == span[1] else span[1]


def found(pattern: Any, data: bytes) -> bool:
    """Whether `pattern` (a compiled RE2 pattern) matches anywhere in `data` (bytes)."""
    return search_span(pattern, data) is not None


@functools.cache
def _unanchored() -> Any:
    import re2

    return re2._re2.RE2.Anchor.UNANCHORED


@functools.cache
def _direct_calls_agree() -> bool:
    """Whether the direct call finds what the wrapper's search finds, on a probe with a match at
    the start, in the middle, none in a window, an empty match and a pattern with groups."""
    import re2

    data = b"ab12 cd-34\x00 ef\xc3\xa9 5678 "
    cases = [(r"[a-z]+", 0, None), (r"[0-9]{2}", 3, None), (r"[0-9]{4}", 0, 12), (r"x*", 2, 9),
             (r"(?:^|[^a-z])([a-z])([a-z])", 1, None), (r"\x{e9}", 0, None)]
    try:
        for spec, pos, endpos in cases:
            pattern = re2.compile(spec)
            end = len(data) if endpos is None else endpos
            wrapped = pattern.search(data, pos, end)
            span = pattern._regexp.Match(_unanchored(), data, pos, end)[0]
            if (None if span[0] < 0 else tuple(span)) != (None if wrapped is None else wrapped.span()):
                return False
    except (AttributeError, TypeError, ValueError, IndexError):  # pragma: no cover - another google-re2 layout
        return False
    return True
