"""ASCII stand-ins for the non-ASCII characters of a text, by the part each plays in a path token.

The path-token pattern (`paths._PATH_PATTERN`, for RE2) reads a non-ASCII character in one of
two ways: as a segment character (`\\p{L}` or `\\p{N}`: a letter or a number of any script) or as
any other character that is not a token boundary. RE2's `\\b` is ASCII, so neither is a word
character. Put '@' for the first and '!' for the second (neither a word character; '@' a segment
character, '!' not) and the ASCII pattern finds every token of the stand-in text at the place
RE2 finds it in the original: so the tokens of many short non-ASCII runs are found by `re` in one
pass in C, and canonicalised from the original text (`paths._canonical_ascii`), where RE2
would be called, and call back into Python, once per run and per token.

Which characters are letters or numbers is what RE2 says (its Unicode tables are not Python's):
asked once, for every code point, in a few thousand anchored matches (sorted by code point,
characters alternate between the two kinds in runs; a match finds the end of each: ~65 ms), and
kept as a 1.1 MB `str.translate` table. Its ~750 ranges of letters and numbers are kept in the
user's cache (usercache.py), keyed by the RE2 module the process loads, so that later processes
read them back (~4 ms) instead.

`stand_ins` gives None (the caller keeps RE2) for a text with a lone surrogate: RE2 reads UTF-8,
and `paths._canonical_sub` replaces them first. (RE2's case-insensitive `localhost` matches
U+017F "ſ" as an "s", the stand-in '@' does not; but the token is the same either way: the
optional prefix that holds `localhost` ends where a separator and a segment go on, which take
"ſ" as the prefix would: tests/test_path_roles13.py tries it.)
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from array import array
from itertools import accumulate
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from litmus_rules import usercache
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


def role_table() -> str:
    """The stand-in of every code point (`stand_ins` without the surrogate check)."""
    return _table()


def table_loaded() -> bool:
    """Whether this process has the table already (building it again costs nothing)."""
    return _table.cache_info().currsize > 0


_TABLE_FORMAT = 1  # bump when what the table says changes


@functools.cache
def _table() -> str:
    """Every code point's stand-in (ASCII characters stand for themselves): read back from the
    user's cache when this google-re2 built it before, else asked of RE2 (`_build_table`)."""
    path = _table_file()
    if path is not None:
        raw = usercache.read_bytes(path)
        table = None if raw is None else _from_ranges(raw)
        if table is not None:
            return table
    table = _build_table()
    if path is not None:
        usercache.write_text(path, json.dumps({"format": _TABLE_FORMAT, "segments": _segment_ranges(table)},
                                              separators=(",", ":")))
    return table


def _table_file() -> Path | None:
    """The cache file of the table for the RE2 this process loads (its compiled module's path,
    size and time: what RE2 says could change only with it), None: no cache."""
    import os

    folder = usercache.cache_dir()
    if folder is None:
        return None
    try:
        module = re2_module()._re2.__file__
        st = os.stat(module)
    except (AttributeError, TypeError, OSError):  # pragma: no cover - another google-re2 layout
        return None
    key = json.dumps([_TABLE_FORMAT, module, st.st_size, st.st_mtime_ns, sys.version_info[:2], sys.maxunicode])
    return folder / f"path-roles-{hashlib.sha256(key.encode()).hexdigest()[:40]}.json"


def _segment_ranges(table: str) -> list[list[int]]:
    """The [first, last] code points of each run of non-ASCII segment characters."""
    return [[m.start(), m.end() - 1] for m in re.finditer(SEGMENT + "+", table) if m.start() >= 128]


def _from_ranges(raw: bytes) -> str | None:
    """The table from a cache file's ranges; None for a file that is damaged or not of this format."""
    try:
        doc = json.loads(raw)
        ranges = doc["segments"] if isinstance(doc, dict) and doc.get("format") == _TABLE_FORMAT else None
        if not isinstance(ranges, list):
            return None
        out = bytearray(range(128)) + bytearray(OTHER.encode() * (sys.maxunicode + 1 - 128))
        for first, last in ranges:
            if not (type(first) is int and type(last) is int and 128 <= first <= last <= sys.maxunicode):
                return None
            out[first:last + 1] = SEGMENT.encode() * (last + 1 - first)
    except (ValueError, TypeError, KeyError):
        return None
    return out.decode("ascii")


def _build_table() -> str:
    """Every code point's stand-in, asked of RE2."""
    re2 = re2_module()
    letters = re2.compile(r"[\p{L}\p{N}]*", re2_options())
    others = re2.compile(r"[^\p{L}\p{N}]*", re2_options())
    anything = re2.compile(r"[\p{L}\p{N}]", re2_options())
    out = bytearray(range(128)) + bytearray(OTHER.encode() * (sys.maxunicode + 1 - 128))
    for first, last in ((0x80, 0xD800), (0xE000, sys.maxunicode + 1)):  # (no surrogate in a str RE2 reads)
        for base, chars in code_point_blocks(first, last, _CHUNK):
            if anything.search(chars) is None:
                continue  # most of the planes past the third: no letter, no number
            pos, n = 0, len(chars)
            while pos < n:
                end = letters.match(chars, pos).end()
                out[base + pos:base + end] = SEGMENT.encode() * (end - pos)
                pos = end if end == n else others.match(chars, end).end()
    return out.decode("ascii")


def code_points(first: int, last: int) -> str:
    """The characters U+first to U+last - 1 in one string, lone surrogates included (built in C)."""
    return array("I", range(first, last)).tobytes().decode(_UTF32, "surrogatepass")


def code_point_blocks(first: int, last: int, size: int = 1 << 8) -> Iterator[tuple[int, str]]:
    """(first code point, its characters) of each block of `size` from U+first to U+last - 1: the
    tables built from every code point ask a block at once and one character at a time only in
    the blocks that hold an answer."""
    chars = code_points(first, last)
    for base in range(first, last, size):
        yield base, chars[base - first : base - first + size]


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
