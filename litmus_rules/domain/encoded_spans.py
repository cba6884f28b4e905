"""What base64 and hex decode from short texts, kept by text, and found for many texts at once.

`decoded_spans(text)` is (`_base64_runs(candidate_runs(text))`, `_hex_runs(candidate_runs(text))`):
the spans `normalize.forms` decodes, and whether `textchecks` says the run decoders change the
text. For a short text it is kept in a memo, so the check and the two decoders read it once.

`decode_many(texts)` puts in that memo the spans of many short texts, found together. A schema of
20,000 properties each holding a base64-looking token made 20,000 rounds of the decoders'
per-call work (a dozen calls into C each over a handful of runs, ~20 us a text); here the runs
of all the texts go through each step together, each run remembering its text. The same spans,
text by text: a run lies inside one text (none crosses the NUL that joins them), every step
reads each run on its own (`_may_decode_at`, `_base64_found`, `_hex_found`), and a text the
hint rules out keeps no span, as `candidate_runs` gives it none (tests/test_encoded_spans23.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, compress, repeat
from operator import le

from litmus_rules.domain.encoded import (
    _HEX_TO_H,
    _RUN_ALPHABET,
    HINTED_TEXT_MIN,
    _base64_found,
    _base64_runs,
    _hex_found,
    _hex_runs,
    _may_decode_at,
    _pattern,
    candidate_runs,
    may_hold_encoded_runs,
)
from litmus_rules.domain.textmemo import ShortTextMemo

Spans = tuple[tuple[str, ...], tuple[str, ...]]  # (base64 spans, hex spans), in the text's order

# Texts shorter than this are kept (`candidate_runs` reads such a text whole), and decided together.
SHORT_MAX = HINTED_TEXT_MIN
# From this many texts not in the memo on, `decode_many` decodes them together.
MANY_MIN = 8
# A memo of a pure function, emptied when it would hold more than SPANS_MEMO_ENTRIES texts or
# SPANS_MEMO_CHARS characters of them (their spans are shorter still): ~8 MB at most.
SPANS_MEMO_ENTRIES = 1 << 15
SPANS_MEMO_CHARS = 1 << 22
_memo: ShortTextMemo[Spans] = ShortTextMemo(SPANS_MEMO_ENTRIES, SPANS_MEMO_CHARS)

# Every byte outside the base64 alphabet as a space but NUL, which separates the texts.
_NOT_RUN_TO_SPACE_BUT_NUL = bytes.maketrans(
    bytes(b for b in range(1, 256) if chr(b) not in _RUN_ALPHABET), b" " * (255 - len(_RUN_ALPHABET)))
_NUL = b"\0"


def decoded_spans(text: str) -> Spans:
    """What base64 and hex decode from `text`'s candidate runs (a short text's kept)."""
    hit = _memo.get(text)
    if hit is not None:
        return hit
    runs = candidate_runs(text)
    made = (tuple(_base64_runs(runs)), tuple(_hex_runs(runs)))
    if len(text) < SHORT_MAX:
        _memo.keep([text], [made])
    return made


def decode_many(texts: Sequence[str]) -> None:
    """Keep `decoded_spans` of the short texts of `texts` (those without a line break, which
    joins runs across lines, or a NUL), found for all of them together (see the module doc)."""
    todo = [text for text in dict.fromkeys(texts)
            if len(text) < SHORT_MAX and text not in _memo and "\n" not in text and "\0" not in text]
    if len(todo) < MANY_MIN:
        return
    made: list[tuple[list[str], list[str]]] = [([], []) for _ in todo]
    # the base64-alphabet runs of every text (`encoded._all_runs`), with the text of each: NUL
    # words between the texts count them
    data = "\0".join(todo).encode("ascii", "replace").translate(_NOT_RUN_TO_SPACE_BUT_NUL)
    words = data.replace(_NUL, b" \0 ").split()
    owner_of_word = list(accumulate(map(_NUL.__eq__, words)))
    long = list(map(le, repeat(8), map(len, words)))
    runs = list(map(bytes.decode, compress(words, long)))
    owners = list(compress(owner_of_word, long))
    del data, words, owner_of_word, long
    # those of texts the hint rules out are dropped (`candidate_runs` gives them none)
    ruled_out = {k for k, text in enumerate(todo) if not may_hold_encoded_runs(text)}
    kept = _may_decode_at(runs)
    at = range(len(runs)) if kept is None else kept
    if ruled_out:
        at = [k for k in at if owners[k] not in ruled_out]
    runs, owners = [runs[k] for k in at], [owners[k] for k in at]
    for owner, found in zip(owners, _base64_found(runs)):
        if found is not None:
            made[owner][0].extend(decoded for decoded in found if decoded is not None)
    # hex runs lie inside the runs: found in the runs joined by spaces, each in the run it starts in
    joined = " ".join(runs)
    parts = _pattern("_H_RUN").split(joined.translate(_HEX_TO_H))
    if len(parts) > 1:
        ends = list(accumulate(map(len, parts)))
        run_starts = list(accumulate(map((1).__add__, map(len, runs)), initial=0))
        hex_starts = ends[0:-1:2]
        hex_runs = [joined[start:start + len(parts[k])] for start, k in zip(hex_starts, range(1, len(parts), 2))]
        hex_owners = [owners[bisect_right(run_starts, start) - 1] for start in hex_starts]
        for owner, decoded in zip(hex_owners, _hex_found(hex_runs)):
            if decoded is not None:
                made[owner][1].append(decoded)
    _memo.keep(todo, [(tuple(b64), tuple(hexes)) for b64, hexes in made])


def clear_memo() -> None:
    """Forget every kept result (tests, benchmarks)."""
    _memo.clear()
