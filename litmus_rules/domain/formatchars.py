"""Format characters: which ones `transforms.strip_format_chars` removes, the linear-time RE2
classes that find them, and how a large text is stripped of them.

The set is the `regex` module's (`_FORMAT_PATTERN`): every Cf character, default-ignorable code
point and variation selector, but the tag block (decoded, not removed). Its substitution reads a
text at ~10 us per 100 characters; a large text holds few distinct format characters, so it is
stripped of each one with `str.replace` (C, ~30x faster) once a scan of its UTF-8 by RE2 has found
which ones it holds (`strip_each`); a large text that holds few of them at all (decoded escapes
of every code point hold dozens of distinct ones, a few times each) is cut around each, found by
one RE2 pass (`strip_found`). The result is the substitution's: each character found is checked
against `_FORMAT_PATTERN` itself, and the RE2 class admits every character it removes
(test_normalize, over every code point).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

from litmus_rules.domain.textmemo import re2_options

# Default-ignorable code points and every Cf character (zero-width, soft hyphen, bidi controls,
# variation selectors, CGJ, Hangul fillers, ...) -- but not the tag block, which carries hidden
# ASCII and is decoded by `decode_tag_chars` rather than thrown away.
_FORMAT_PATTERN = r"[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}--[\U000E0000-\U000E007F]]+"

# The cheap linear-time presence test (RE2 scans ~0.5 GB/s; Python's engines ~10x slower): Cf and
# these ranges, a superset of what `_FORMAT_PATTERN` removes (and of the tag block).
_MAYBE_RANGES = (
    (0x034F, 0x034F), (0x2060, 0x206F), (0x115F, 0x115F), (0x1160, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)


def _re2_ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of an RE2 character class holding these code point ranges."""
    return "".join(rf"\x{{{lo:X}}}" if lo == hi else rf"\x{{{lo:X}}}-\x{{{hi:X}}}" for lo, hi in ranges)


_MAYBE_FORMAT_PATTERN = r"[\p{Cf}" + _re2_ranges(_MAYBE_RANGES) + "]"

# Texts from this long are stripped by `strip_each` (shorter ones by the substitution, which costs
# them less than compiling a pattern would).
STRIP_EACH_MIN = 1 << 14
# `strip_each` gives up past this many distinct characters of the presence class in one text
# (the substitution then strips it: the same result at its usual cost).
DISTINCT_MAX = 24
# `strip_found` gives up past this many characters of the presence class in one text (a match
# costs about 2 us: past these, `strip_each`'s one `str.replace` per distinct character is cheaper).
FOUND_MAX = 512


@functools.cache
def _format_re() -> Any:
    import regex

    return regex.compile(_FORMAT_PATTERN, regex.V1)


@functools.cache
def _maybe_format() -> Any:
    import re2

    return re2.compile(_MAYBE_FORMAT_PATTERN, re2_options())


@functools.lru_cache(maxsize=256)
def _next_new(seen: frozenset[int]) -> Any:
    """A character of the presence class but those in `seen` (RE2 has no class difference: a
    negated class takes Cf but `seen`, and `seen` is cut out of the explicit ranges)."""
    import re2

    cut: list[tuple[int, int]] = []
    for lo, hi in _MAYBE_RANGES:
        for cp in sorted(c for c in seen if lo <= c <= hi):
            if lo < cp:
                cut.append((lo, cp - 1))
            lo = cp + 1
        if lo <= hi:
            cut.append((lo, hi))
    cf = r"[^\P{Cf}" + "".join(rf"\x{{{cp:X}}}" for cp in sorted(seen)) + "]"
    return re2.compile(cf + (f"|[{_re2_ranges(tuple(cut))}]" if cut else ""), re2_options())


def strip_found(text: str, data: bytes) -> str | None:
    """`text` (whose UTF-8 is `data`) without the characters of `_FORMAT_PATTERN`, cut out of
    `data` around each character of the presence class found by one RE2 pass, or None when it
    holds more than FOUND_MAX of them. `text` itself when it holds none. For a text with many
    distinct ones: `strip_each` looks for each in turn (20 ms a MB before it gives up at
    DISTINCT_MAX, and the substitution takes as long again), this pass takes 1-3 ms."""
    found = list(itertools.islice(_maybe_format().finditer(data), FOUND_MAX + 1))
    if len(found) > FOUND_MAX:
        return None
    removed: dict[bytes, bool] = {}  # each distinct character: checked once
    pieces = []
    done = 0
    for m in found:
        start, end = m.span()
        char = data[start:end]
        drop = removed.get(char)
        if drop is None:  # (a tag character is in the class, kept)
            drop = removed[char] = _format_re().fullmatch(char.decode("utf-8")) is not None
        if drop:
            pieces.append(data[done:start])
            done = end
    if not pieces:
        return text
    pieces.append(data[done:])
    return b"".join(pieces).decode("utf-8")


def strip_each(text: str, data: bytes) -> str | None:
    """`text` (whose UTF-8 is `data`) without the characters of `_FORMAT_PATTERN`, or None when it
    holds more than DISTINCT_MAX distinct characters of the presence class. One scan of `data`
    finds each distinct one (the next search leaves out those found: it starts past the last
    one), and each is removed by one `str.replace`. `text` itself when it holds none."""
    seen: frozenset[int] = frozenset()
    out = text
    pos = 0
    while True:
        found = _next_new(seen).search(data, pos)
        if found is None:
            return out
        if len(seen) >= DISTINCT_MAX:
            return None
        char = found.group().decode("utf-8")
        seen |= {ord(char)}
        if _format_re().fullmatch(char) is not None:  # (a tag character is in the class, kept)
            out = out.replace(char, "")
        pos = found.end()
