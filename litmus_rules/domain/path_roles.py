"""ASCII stand-ins for the non-ASCII characters of a text, by the part each plays in a path token.

The path-token pattern (`decoding._PATH_PATTERN`, for RE2) reads a non-ASCII character in one of
two ways: as a segment character (`\\p{L}` or `\\p{N}`: a letter or a number of any script) or as
any other character that is not a token boundary. RE2's `\\b` is ASCII, so neither is a word
character. Put '@' for the first and '!' for the second (neither a word character; '@' a segment
character, '!' not) and the ASCII pattern finds every token of the stand-in text at the place
RE2 finds it in the original: so the tokens of many short non-ASCII runs are found by `re` in one
pass in C, and canonicalised from the original text (`decoding._canonical_ascii`), where RE2
would be called, and call back into Python, once per run and per token.

Which characters are letters or numbers is what RE2 says (its Unicode tables are not Python's):
asked once per process, for every code point, in a few thousand anchored matches (sorted by code
point, characters alternate between the two kinds in runs; a match finds the end of each), and
kept as a 1.1 MB `str.translate` table.

`stand_ins` gives None (the caller keeps RE2) for a text with a lone surrogate: RE2 reads UTF-8,
and `decoding._canonical_sub` replaces them first. (RE2's case-insensitive `localhost` matches
U+017F "ſ" as an "s", the stand-in '@' does not; but the token is the same either way: the
optional prefix that holds `localhost` ends where a separator and a segment go on, which take
"ſ" as the prefix would: tests/test_path_roles13.py tries it.)
"""

from __future__ import annotations

import functools
import re
import sys
from array import array
from itertools import accumulate
from typing import Any

from litmus_rules.domain.textmemo import re2_module, re2_options

SEGMENT, OTHER = "@", "!"
_SURROGATE = re.compile("[\ud800-\udfff]")
_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"  # (array("I") is native)
_CHUNK = 1 << 8  # code points per RE2 call: the wrapper encodes the whole string each time


def stand_ins(text: str) -> str | None:
    """A `str.translate` table that makes `text` ASCII, each non-ASCII character '@' (a letter or a
    number, for RE2) or '!' (anything else); None for a text with a lone surrogate."""
    if _SURROGATE.search(text) is not None:
        return None
    return _table()


@functools.cache
def _table() -> str:
    """Every code point's stand-in (ASCII characters stand for themselves)."""
    re2 = re2_module()
    letters = re2.compile(r"[\p{L}\p{N}]*", re2_options())
    others = re2.compile(r"[^\p{L}\p{N}]*", re2_options())
    anything = re2.compile(r"[\p{L}\p{N}]", re2_options())
    out = bytearray(range(128)) + bytearray(OTHER.encode() * (sys.maxunicode + 1 - 128))
    for first, last in ((0x80, 0xD800), (0xE000, sys.maxunicode + 1)):  # (no surrogate in a str RE2 reads)
        for base in range(first, last, _CHUNK):
            chars = array("I", range(base, min(base + _CHUNK, last))).tobytes().decode(_UTF32)
            if anything.search(chars) is None:
                continue  # most of the planes past the third: no letter, no number
            pos, n = 0, len(chars)
            while pos < n:
                end = letters.match(chars, pos).end()
                out[base + pos:base + end] = SEGMENT.encode() * (end - pos)
                pos = end if end == n else others.match(chars, end).end()
    return out.decode("ascii")


def originals(parts: list[Any], original: str, stride: int) -> list[Any]:
    """The pieces of a `split` by a pattern whose group 1 is the whole match (`stride`: the groups
    plus one), made on a stand-in of `original`: each piece between matches and each match taken
    from `original` at the same place; the other groups are left as the stand-in's."""
    out = list(parts)
    flat: list[str] = [""] * (len(parts[0::stride]) + len(parts[1::stride]))
    flat[0::2], flat[1::2] = parts[0::stride], parts[1::stride]
    pieces = same_places(original, flat)
    out[0::stride], out[1::stride] = pieces[0::2], pieces[1::2]
    return out


def same_places(original: str, pieces: list[str]) -> list[str]:
    """The pieces of `original` as long as each of `pieces`, one after the other: where `pieces`,
    which make up a stand-in of `original`, lie in it."""
    ends = list(accumulate(map(len, pieces)))
    return list(map(original.__getitem__, map(slice, [0, *ends[:-1]], ends)))
