"""Base64 and hex: the base64-alphabet runs of a text (`candidate_runs`, with the linear-time scan
that proves most texts hold none that decodes), and what they decode to (`base64_spans`,
`hex_spans`, and `_base64_runs` / `_hex_runs` from a text's runs). decoding.py re-exports them.

A long text can hold 100k runs that only look like base64 (NFKC of fullwidth letters makes them):
the runs are decoded in batches, a few calls into C per alignment for all of them
(`_decode_b64_many`), and random bytes are rejected from counts made in C (`_printable_many`).
"""

from __future__ import annotations

import binascii
import functools
import re
from bisect import bisect_right
from collections.abc import Iterator
from itertools import accumulate, compress, islice, repeat
from operator import getitem, is_, le, mod, not_, or_, sub
from typing import Any

from litmus_rules.domain.printable import (  # noqa: F401 - _printable_text: decoding.py re-exports it
    NONPRINTABLE_PATTERN,
    _printable,
    _printable_many,
    _printable_text,
)
from litmus_rules.domain.re2calls import search_span
from litmus_rules.domain.textmemo import MEMO_MIN, memo_large, re2_in, re2_module, re2_options, utf8

# --- base64 / hex spans ---------------------------------------------------------------------

# MIME and PEM wrap base64 at 64/76 columns: a run may continue on the next line.
_RUN_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")
_URL_TO_STD = str.maketrans("-_", "+/")

# The patterns are compiled on first use, not on import (cold start); the former module-level
# names (_B64_RUN, _HEX_RUN, _NONPRINTABLE, _H_RUN, _BLOCK) still resolve, by `__getattr__`.
_PATTERNS = {
    "_B64_RUN": r"[A-Za-z0-9+/_-]{8,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*",
    "_HEX_RUN": r"[0-9A-Fa-f]{8,}",
    "_NONPRINTABLE": NONPRINTABLE_PATTERN,
    # a run of hex digits once `_HEX_TO_H` has made each one an "h" (below)
    "_H_RUN": "(hhhhhhhh+)",
    # `_B64_RUN.findall` finds in a block alone the runs it finds there in the whole text (below)
    "_BLOCK": r"[A-Za-z0-9+/_\r\n-]*",
}


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


def __getattr__(name: str) -> Any:
    if name in _PATTERNS:
        return _pattern(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
# Not a limit: the decoded spans of a text are at most 3/4 of its length (each run is decoded
# once, at one alignment), so `normalize.forms` decodes every span. Kept as a name for callers
# that pass an explicit bound; `max_chars=None` is unbounded.
MAX_DECODED_CHARS = 1 << 22


def _looks_like_word(run: str) -> bool:
    # Words and identifiers ("information", "Configuration", "positive_labels", "pre-flight")
    # are valid base64 but almost never real encodings; skipping them keeps prose cheap. Real
    # base64 of 6+ bytes practically always has an upper-case letter past its first character.
    return run[1:].islower() or run.isupper() or run.isdigit()


# Runs up to this long are remembered with what they decode to: a text's runs are decoded again
# for its cleaned form, and for the joined surfaces it is one of (joined.py). A memo of a pure
# function: when it holds RUN_MEMO_ENTRIES runs it is emptied, and a run is decoded again.
DECODED_RUN_MEMO_MAX = 256
RUN_MEMO_ENTRIES = 1 << 15
_decoded_memo: dict[str, str | None] = {}
_UNKNOWN: Any = object()
# a run's length mod 4 -> what makes it whole groups (None: drop the last character, which
# carries too few bits for a byte)
_PADDING = ("", None, "==", "=")
# Up to this many runs are decoded one by one (`_decode_b64_one`, `_hex_one`), more in batches:
# the same results (test_normalize_worst13 sets it to 0).
SCALAR_MAX = 8


def _a2b_many(chunks: list[str]) -> list[bytes | None]:
    """binascii.a2b_base64 of each (None where it fails), in one call into C while none fails."""
    try:
        return list(map(binascii.a2b_base64, chunks))
    except (binascii.Error, ValueError):
        out: list[bytes | None] = []
        for chunk in chunks:
            try:
                out.append(binascii.a2b_base64(chunk))
            except (binascii.Error, ValueError):
                out.append(None)
        return out


def _decode_b64_many(runs: list[str]) -> list[str | None]:
    """What each run decodes to: at the first of its 4 alignments whose bytes are mostly printable
    UTF-8 (None: none is). All the runs go through each alignment together: a few calls into C
    per alignment, not a dozen per run (a text can hold 100k runs that only look like base64)."""
    known = list(map(_decoded_memo.get, runs, repeat(_UNKNOWN)))  # (longer runs are never kept)
    todo = list(compress(range(len(runs)), map(is_, known, repeat(_UNKNOWN))))
    out: list[str | None] = known
    for i in todo:
        out[i] = None
    if len(todo) <= SCALAR_MAX:  # a few runs (most texts): one at a time costs less than batching
        for i in todo:
            out[i] = _decode_b64_one(runs[i].translate(_URL_TO_STD))
        _remember(runs, todo, out)
        return out
    joined = "\n".join([runs[i] for i in todo])
    if "-" in joined or "_" in joined:  # base64url: one translation of all the runs, not one each
        std = joined.translate(_URL_TO_STD).split("\n")
        if len(std) != len(todo):  # (a run holding a newline)
            std = [runs[i].translate(_URL_TO_STD) for i in todo]
    else:
        std = [runs[i] for i in todo]
    # runs of one length are cut and padded alike at each alignment: a few calls into C per length
    by_length: dict[int, list[int]] = {}
    for k, run in enumerate(std):
        by_length.setdefault(len(run), []).append(k)
    for align in range(4):
        pending: dict[int, list[int]] = {}
        for length, ks in by_length.items():
            pad = _PADDING[(length - align) % 4]
            end = length - 1 if pad is None else length
            if end - align + len(pad or "") < 8:  # shorter: these runs decode to nothing
                continue
            chunks = list(map(getitem, map(std.__getitem__, ks), repeat(slice(align, end))))
            if pad:
                chunks = list(map(str.__add__, chunks, repeat(pad)))
            texts = _printable_many(_a2b_many(chunks))
            for k, text in zip(compress(ks, texts), filter(None, texts)):  # (a kept text is not empty)
                out[todo[k]] = text
            left = list(compress(ks, map(is_, texts, repeat(None))))
            if left:
                pending[length] = left
        by_length = pending
    _remember(runs, todo, out)
    return out


def _remember(runs: list[str], todo: list[int], out: list[str | None]) -> None:
    if len(_decoded_memo) + len(todo) > RUN_MEMO_ENTRIES:
        _decoded_memo.clear()
    tried = list(map(runs.__getitem__, todo))
    short = list(map(le, map(len, tried), repeat(DECODED_RUN_MEMO_MAX)))
    _decoded_memo.update(zip(compress(tried, short), compress(map(out.__getitem__, todo), short)))


def _decode_b64_one(std: str) -> str | None:
    """`_decode_b64_many` of one run (in the standard alphabet already)."""
    for align in range(4):
        chunk = std[align:]
        pad = _PADDING[len(chunk) % 4]
        chunk = chunk[:-1] if pad is None else chunk + pad
        if len(chunk) < 8:
            return None
        try:
            raw = binascii.a2b_base64(chunk)
        except (binascii.Error, ValueError):
            continue
        text = _printable(raw)
        if text is not None:
            return text
    return None


def base64_spans(text: str, max_chars: int | None = None) -> list[str]:
    """Decode every plausible base64 / base64url run (>= 8 chars) of `text`.

    A run may start mid-group when the blob is glued to other word characters, so each of the 4
    alignments is tried; the first that decodes to mostly printable UTF-8 is kept. A token at any
    byte position inside a longer encoded blob is therefore found (the blob decodes whole).
    Runs wrapped over several lines (MIME/PEM) are joined first; when the joined run does not
    decode, each line is tried on its own (one value per line).
    Decoding stops after `max_chars` decoded characters in total (None: every run is decoded).
    """
    return _base64_runs(_pattern("_B64_RUN").findall(text), max_chars)


# Runs are decoded in batches (`_decode_b64_many`), the first ones small: a search that needs one
# decoded span (joined.py) decodes few runs past it.
_FIRST_BATCH = 16


def _batches(n: int) -> Iterator[tuple[int, int]]:
    start, size = 0, _FIRST_BATCH
    while start < n:
        yield start, min(n, start + size)
        start += size
        size *= 4


def _base64_found(runs: list[str]) -> list[list[str | None] | None]:
    """For each run, what `_base64_runs` decodes from it (None in the list: a part that does not
    decode; None for the list: a word-like run, not tried)."""
    found: list[list[str | None] | None] = [None] * len(runs)
    # The runs to look at, found by calls into C over all of them (a long text has 100k runs, most
    # of them words): the wrapped ones, and those not lower-case past their first character.
    todo = set(compress(range(len(runs)), map(str.__contains__, runs, repeat("\n"))))
    wrapped = bool(todo)
    todo.update(compress(range(len(runs)), map(not_, map(str.islower, map(getitem, runs, repeat(slice(1, None)))))))
    whole: list[str] = []
    whole_of: list[int] = []
    split: list[int] = []  # wrapped runs whose lines are tried one by one
    if wrapped:
        for i in sorted(todo):
            run = runs[i]
            if "\n" in run:
                joined = "".join(run.split())
                if _looks_like_word(joined):
                    split.append(i)
                else:
                    whole.append(joined)
                    whole_of.append(i)
            elif not (run.isupper() or run.isdigit()):  # _looks_like_word; its first test made `todo`
                whole.append(run)
                whole_of.append(i)
    else:  # the same, in calls into C over all the runs (a text of 100k runs, nearly all unwrapped)
        tried = sorted(todo)
        texts = list(map(runs.__getitem__, tried))
        kept = list(map(not_, map(or_, map(str.isupper, texts), map(str.isdigit, texts))))
        whole, whole_of = list(compress(texts, kept)), list(compress(tried, kept))
    decoded_runs = _decode_b64_many(whole)
    if wrapped:
        for i, decoded in zip(whole_of, decoded_runs):
            if decoded is None and "\n" in runs[i]:
                split.append(i)
            else:
                found[i] = [decoded]
    else:
        for i, decoded in zip(whole_of, decoded_runs):
            found[i] = [decoded]
    if split:
        split.sort()
        lines = [[line for line in runs[i].split() if not _looks_like_word(line)] for i in split]
        decoded_lines = iter(_decode_b64_many([line for each in lines for line in each]))
        for i, each in zip(split, lines):
            found[i] = [next(decoded_lines) for _ in each]
    return found


def _base64_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    if not runs:
        return []
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    for start, end in _batches(len(runs)):
        for found in _base64_found(runs[start:end]):
            if found is None:  # a word-like run, not tried
                continue
            for decoded in found:
                if decoded is not None:
                    out.append(decoded)
                    budget -= len(decoded)
            if bounded and budget <= 0:
                return out
    return out


def hex_spans(text: str, max_chars: int | None = None) -> list[str]:
    """Decode every plausible hex run (>= 8 hex digits) at both nibble alignments; keep the
    first alignment that is mostly printable UTF-8. Stops after `max_chars` decoded characters
    (None: every run)."""
    return _hex_runs(_pattern("_B64_RUN").findall(text), max_chars)


def _hex_found(hex_runs: list[str]) -> list[str | None]:
    """What each hex run decodes to, at the first nibble alignment that is mostly printable."""
    if len(hex_runs) <= SCALAR_MAX:
        return [_hex_one(run) for run in hex_runs]
    out: list[str | None] = [None] * len(hex_runs)
    pending = list(range(len(hex_runs)))
    for align in (0, 1):
        # each run from `align` to its last whole byte, cut in calls into C over all of them
        tried = list(map(hex_runs.__getitem__, pending))
        lengths = list(map(len, tried))
        ends = map(sub, lengths, map(mod, map(sub, lengths, repeat(align)), repeat(2)))
        chunks = list(map(getitem, tried, map(slice, repeat(align), ends)))
        texts = _printable_many(list(map(bytes.fromhex, chunks)))
        for k, text in zip(compress(pending, texts), filter(None, texts)):  # (a kept text is not empty)
            out[k] = text
        pending = list(compress(pending, map(is_, texts, repeat(None))))
    return out


def _hex_one(run: str) -> str | None:
    for align in (0, 1):
        chunk = run[align:]
        text = _printable(bytes.fromhex(chunk[: len(chunk) - len(chunk) % 2]))
        if text is not None:
            return text
    return None


# Each hex digit as "h", every other base64-alphabet character (and "h") as a space: `_HEX_RUN`'s
# matches (maximal runs of 8+ hex digits) are the runs of 8+ "h", which `re` finds by searching
# for a literal: not a match attempt at each character (most characters of a text are letters).
_HEX_TO_H = str.maketrans({**{c: " " for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/_-"},
                           **{c: "h" for c in "0123456789ABCDEFabcdef"}})


def _hex_runs_of(text: str) -> list[str]:
    """`_HEX_RUN.findall(text)` of an ASCII text (the base64-alphabet runs joined)."""
    if not text.isascii():  # pragma: no cover - runs are ASCII
        return _pattern("_HEX_RUN").findall(text)
    parts = _pattern("_H_RUN").split(text.translate(_HEX_TO_H))
    if len(parts) == 1:
        return []
    ends = list(accumulate(map(len, parts)))
    return [text[ends[k - 1]:ends[k]] for k in range(1, len(parts), 2)]


def _hex_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    """Hex runs live inside base64-alphabet runs (hex digits are base64 characters)."""
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    # one scan of the runs joined by a space (no hex run crosses it) finds what a scan of each does
    hex_runs = _hex_runs_of(" ".join(runs))
    for start, end in _batches(len(hex_runs)):
        for decoded in _hex_found(hex_runs[start:end]):
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
            if bounded and budget <= 0:
                return out
    return out


# A run can give a decoded span only if `_base64_runs` tries to decode it (it is not word-like) or
# if it holds 8+ hex digits (`_hex_runs`). Each alternative below is implied by one of those:
#   1. a lower-case letter, later an upper-case one, in one run: the run is neither lower-case
#      past its first character nor all upper-case;
#   2. an upper-case letter past a run's first character, later a lower-case one: likewise;
#   3. a run whose characters past the first are digits or +/_- and whose first character is not
#      upper-case (all digits is admitted too: a superset is fine);
#   4. 8 hex digits;
#   5. a run continued on the next line (joined, or tried line by line).
# Single-line runs: not word-like = (an upper-case letter past the start and a lower-case letter:
# 1 or 2) or (no letter past the start, first character not upper-case, not all digits: 3).
# So a text without a match has no run that decodes, and `candidate_runs` skips the `re` scan
# (10-30x slower than this one on prose). test_normalize checks the implication on random text.
_RUN_CHAR = "[A-Za-z0-9+/_-]"
_ENCODED_RUN_HINT_PATTERN = (
    rf"[a-z]{_RUN_CHAR}*[A-Z]"
    rf"|{_RUN_CHAR}[A-Z]{_RUN_CHAR}*[a-z]"
    r"|(?:^|[^A-Za-z0-9+/_-])[a-z0-9+/_-][0-9+/_-]{7}"
    r"|[0-9A-Fa-f]{8}"
    rf"|{_RUN_CHAR}{{8}}\r?\n{_RUN_CHAR}{{4}}"
)


@functools.cache
def encoded_run_hint() -> Any:
    """`_ENCODED_RUN_HINT_PATTERN`, compiled for RE2 on first use."""
    return re2_module().compile(_ENCODED_RUN_HINT_PATTERN, re2_options())


def may_hold_encoded_runs(text: str | bytes) -> bool:
    """False only when no base64-alphabet run of `text` can decode to a base64 or hex span."""
    try:
        if isinstance(text, bytes):
            return search_span(encoded_run_hint(), text) is not None
        return re2_in(encoded_run_hint(), text)
    except UnicodeEncodeError:  # lone surrogates cannot go through RE2's UTF-8: scan with `re`
        return True


# Up to this many matches of the hint, the runs are read only in the blocks that hold one; past
# it (a text of base64), by one `re` scan of the whole text.
HINTED_BLOCKS_MAX = 64
# A text shorter than this is read whole once the hint matches at all (one RE2 search): the
# blocks' reading costs a call through RE2's Python wrapper a match (up to 65 of them, ~5 us each),
# more than all the runs of a short text (a 1 KB text of random characters: 400 to 60 us).
HINTED_TEXT_MIN = 1 << 12
# A block (`_BLOCK`): a stretch of base64-alphabet characters and line breaks. A run lies in one block, and
# `_B64_RUN.findall` finds in a block alone the runs it finds there in the whole text (it looks
# at nothing before a match, and a block ends where no run goes on).


@memo_large
def candidate_runs(text: str) -> list[str]:
    """The base64-alphabet runs of `text` that `_base64_runs` / `_hex_runs` decode from: the runs
    that may give a span (`_runs_that_may_decode`) of the blocks where `encoded_run_hint` matches
    (a run that gives a span holds the end of a match, see above), or [] when it matches nowhere
    (same spans either way). A text of paths or prose has few matches, if any: its runs (30k in
    1 MB of paths) are not all read. A short text's are all read if the hint matches at all."""
    if len(text) < HINTED_TEXT_MIN:
        return _runs_that_may_decode(_all_runs(text)) if may_hold_encoded_runs(text) else []
    try:
        # a large text's are found in its kept UTF-8 (the str would be encoded on each search); its
        # offsets are those of the text when it is ASCII, else the text is searched for them
        hits = list(islice(encoded_run_hint().finditer(utf8(text) if len(text) >= MEMO_MIN else text),
                           HINTED_BLOCKS_MAX + 1))
        if len(hits) <= HINTED_BLOCKS_MAX and len(text) >= MEMO_MIN and not text.isascii():
            hits = list(islice(encoded_run_hint().finditer(text), HINTED_BLOCKS_MAX + 1))
    except UnicodeEncodeError:  # lone surrogates cannot go through RE2's UTF-8: every run
        return _runs_that_may_decode(_all_runs(text))
    if len(hits) > HINTED_BLOCKS_MAX:
        return _runs_that_may_decode(_all_runs(text))
    runs: list[str] = []
    done = 0
    backwards = text[::-1] if hits else ""
    n = len(text)
    for hit in hits:
        last = hit.end() - 1  # a base64-alphabet character (every alternative ends with one)
        if last < done:
            continue  # in the block read last
        start = n - _pattern("_BLOCK").match(backwards, n - 1 - last).end()
        done = _pattern("_BLOCK").match(text, last).end()
        runs += _pattern("_B64_RUN").findall(text, start, done)
    return _runs_that_may_decode(runs)


# Every byte but the base64 alphabet's as a space (bytes.split then cuts at them).
_NOT_RUN_TO_SPACE = bytes.maketrans(
    bytes(b for b in range(256) if chr(b) not in _RUN_ALPHABET), b" " * (256 - len(_RUN_ALPHABET)))


def _all_runs(text: str) -> list[str]:
    """`_B64_RUN.findall(text)`. A text without a line break (no run goes on to the next line) is
    cut in calls into C: each non-ASCII character as "?" (one byte each), every byte outside the
    alphabet as a space, and its words are the maximal runs of the alphabet; those of 8+
    characters are the runs (`re`'s scan costs 3x as much on a large non-ASCII text)."""
    if "\n" in text:
        return _pattern("_B64_RUN").findall(text)
    words = text.encode("ascii", "replace").translate(_NOT_RUN_TO_SPACE).split()
    return list(map(bytes.decode, compress(words, map(le, repeat(8), map(len, words)))))


def _runs_that_may_decode(runs: list[str]) -> list[str]:
    """`runs` but those that give nothing to `_base64_runs` (single-line word-like runs, by its
    first test: lower-case past the first character) nor to `_hex_runs` (no 8 hex digits), in
    order: the same spans from fewer runs (a text of paths has 30k runs, nearly all of them words)."""
    kept = _may_decode_at(runs)
    return runs if kept is None else list(map(runs.__getitem__, kept))


def _may_decode_at(runs: list[str]) -> list[int] | None:
    """Where `_runs_that_may_decode` keeps a run, in order (None: every run). Found by calls into
    C over all the runs (map, compress, one literal search): each run is kept or not on its own."""
    n = len(runs)
    keep = set(compress(range(n), map(str.__contains__, runs, repeat("\n"))))
    keep.update(compress(range(n), map(not_, map(str.islower, map(getitem, runs, repeat(slice(1, None)))))))
    if len(keep) == n:  # (a text of base64: its runs)
        return None
    rest = list(compress(range(n), map(not_, map(keep.__contains__, range(n)))))
    joined = " ".join(map(runs.__getitem__, rest))
    if not joined.isascii():  # pragma: no cover - runs are ASCII
        return None
    parts = _pattern("_H_RUN").split(joined.translate(_HEX_TO_H))
    if len(parts) > 1:  # the other runs where a hex run starts (none crosses the spaces)
        ends = list(accumulate(map(len, parts)))
        starts = list(accumulate(map((1).__add__, map(len, map(runs.__getitem__, rest))), initial=0))
        keep.update(map(rest.__getitem__, map((-1).__add__, map(bisect_right, repeat(starts), ends[0:-1:2]))))
    if len(keep) == n:
        return None
    return sorted(keep)
