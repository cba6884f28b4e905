"""Whether decoded bytes are text: the test every base64 and hex span passes before it becomes a
form (a run that only looks encoded decodes to random bytes). UTF-8 first, then UTF-16 where nearly
every other byte is NUL; bytes that are neither but start as gzip or zlib data do are inflated (a
payload compressed, then base64-encoded), up to INFLATED_MAX bytes: past that, the form is unknown."""

from __future__ import annotations

import functools
import re
import zlib
from itertools import compress, repeat
from operator import add, le, mul


# what counts against a decoded text: C0 and C1 controls (but tab, newline, carriage return), and
# U+FFFD (one for each invalid UTF-8 sequence)
NONPRINTABLE_PATTERN = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]"


@functools.cache
def _nonprintable() -> re.Pattern[str]:
    return re.compile(NONPRINTABLE_PATTERN)


def _printable(raw: bytes, budget: list[int] | None = None) -> str | None:
    """The UTF-8 text of `raw` if it is mostly (>= 80 %) printable, else its UTF-16 text if that
    is (`_utf16`), else, for compressed data, the text it inflates to (`_inflated`; `budget`: the
    bytes the spans decoded together may still inflate to), else None."""
    text = _printable_text(raw.decode("utf-8", "replace"))
    if text is None and b"\0" in raw:
        text = _utf16(raw)
    wbits = _compressed(raw) if text is None else None
    if wbits is not None:
        budget = [INFLATED_MAX] if budget is None else budget
        inflated = _inflated(raw, wbits, budget)
        if inflated is not None:
            return _printable(inflated, budget)
    return text


# The spans decoded together (a text's runs) inflate to at most this many bytes in all; past it,
# the search is unknown (LimitUnknown): a kilobyte of gzip can hold gigabytes of padding.
INFLATED_MAX = 1 << 22
_GZIP, _ZLIB = 31, 15  # zlib's wbits for each header


def _inflated(raw: bytes, wbits: int, budget: list[int]) -> bytes | None:
    """What gzip or zlib data (`wbits`: which) inflates to (a stream cut short: as far as it goes),
    None if `raw` is not such data after all. Takes what it inflates from `budget`; raises
    LimitUnknown past it."""
    inflater = zlib.decompressobj(wbits)
    try:
        out = inflater.decompress(raw, budget[0] + 1)
    except zlib.error:
        return None
    budget[0] -= len(out)
    if budget[0] < 0:
        from litmus_rules.domain.decoding import LimitUnknown  # (decoding reads this module)

        raise LimitUnknown(f"compressed data inflates to more than {INFLATED_MAX:,} bytes "
                           "(limit printable.INFLATED_MAX)")
    return out or None


def _utf16(raw: bytes) -> str | None:
    """The UTF-16 text of `raw` when nearly every other byte is NUL (ASCII and Latin-1 in UTF-16:
    PowerShell's -EncodedCommand is base64 of UTF-16LE), if mostly printable; else None. NULs
    at the odd bytes read little-endian, at the even ones big-endian (a run decoded from an odd
    byte reads little-endian text so: the same characters)."""
    half = len(raw) // 2
    if half < 4:
        return None
    for order, zeros in (("utf-16-le", raw[1::2]), ("utf-16-be", raw[0::2])):
        if zeros.count(0) * 10 >= half * 9:
            return _printable_text(raw[:2 * half].decode(order, "replace"))
    return None


def _printable_text(text: str) -> str | None:
    """`_printable` of the text `raw` decodes to (with U+FFFD for each invalid sequence)."""
    if not text:
        return None
    if text.isprintable() and "\ufffd" not in text:  # no character of NONPRINTABLE_PATTERN: skip the count
        return text
    # each U+FFFD is one of NONPRINTABLE_PATTERN's: random bytes (a run that only looks like base64) are
    # mostly invalid UTF-8, and rejected here without the count
    if text.count("\ufffd") * 5 > len(text):
        return None
    bad = len(_nonprintable().findall(text))
    if bad * 5 > len(text):
        return None
    return _nonprintable().sub(" ", text) if bad else text


def _printable_many(raws: list[bytes | None]) -> list[str | None]:
    """`_printable` of each (None stays None). A few calls into C for all of them find the texts
    that have too many characters of NONPRINTABLE_PATTERN for sure: a U+FFFD for each invalid UTF-8
    sequence, and the ASCII control bytes (each decodes to itself). Random bytes (a run that
    only looks like base64) are rejected there; `_printable_text` counts exactly in the others."""
    data = raws if None not in raws else [b"" if raw is None else raw for raw in raws]
    texts = list(map(bytes.decode, data, repeat("utf-8"), repeat("replace")))  # type: ignore[arg-type]
    invalid = map(str.count, texts, repeat("\ufffd"))
    controls = map(len, map(bytes.translate, data, repeat(None), repeat(_NOT_CONTROL_BYTES)))  # type: ignore[arg-type]
    # (invalid + controls) * 5 <= len(text): the texts worth counting exactly (most are not)
    worth = map(le, map(mul, map(add, invalid, controls), repeat(5)), map(len, texts))
    out: list[str | None] = [None] * len(texts)
    for i in compress(range(len(texts)), worth):
        out[i] = _printable_text(texts[i])
    # UTF-16 (`_utf16`), for the bytes holding a NUL that are not UTF-8 text (a few: found in C)
    for i in compress(range(len(texts)), map(bytes.__contains__, data, repeat(b"\0"))):  # type: ignore[arg-type]
        if out[i] is None:
            out[i] = _utf16(data[i])  # type: ignore[arg-type]
    # compressed data (`_inflated`): a gzip header, or a zlib one; inflating to INFLATED_MAX in all
    budget = [INFLATED_MAX]
    for i in compress(range(len(texts)), map(_compressed, data)):  # type: ignore[arg-type]
        if out[i] is None:
            out[i] = _printable(data[i], budget)  # type: ignore[arg-type]
    return out


def _compressed(raw: bytes) -> int | None:
    """zlib's wbits for the header `raw` starts with: gzip's, or zlib's (deflate, a window of at
    most 32 KiB, and a check byte); None for neither."""
    if raw[:3] == b"\x1f\x8b\x08":
        return _GZIP
    if len(raw) >= 2 and raw[0] & 0x0F == 8 and raw[0] >> 4 <= 7 and (raw[0] << 8 | raw[1]) % 31 == 0:
        return _ZLIB
    return None


# every byte but the ASCII controls of NONPRINTABLE_PATTERN (deleted: what is left is counted)
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if not (b <= 0x08 or b in (0x0B, 0x0C) or 0x0E <= b <= 0x1F or b == 0x7F))


