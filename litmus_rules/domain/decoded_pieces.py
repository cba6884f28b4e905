"""What the decoders make of a text, as the joined haystack (joined.py) joins it: the outputs of
`normalize.decoder_outputs` on the text and on its cleaned text, kept by text, or None when the
text is to be tested on its own. The decoders a hint of the haystack ruled out on a text are
skipped: they make nothing of it, so the outputs are the same and the memo is keyed by text."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.joins import SEP
from litmus_rules.domain.normalize import Undecodable, decoder_outputs
from litmus_rules.domain.probes import _has_surrogate

# The decoders each hint of `joined.Haystack._hinted` (runs, groups, markup) is needed by
HINTED_DECODERS = (("base64", "hex"), ("grouped encodings",), ("markup removed",))

# What the decoders make of a text, kept by text: an episode's haystacks share texts (its injected
# surfaces are some of its surfaces), and so do a batch's episodes (a tool manifest). A memo of a
# pure function (as textchecks' is), bounded by entries and by characters; scan-resistant, as the
# texts of a large manifest are asked for in turn, once per haystack.
DECODER_MEMO_ENTRIES = 32768
DECODER_MEMO_CHARS = 4 << 20
_decoder_memo: BoundedCache[tuple[str, ...] | None] = BoundedCache(DECODER_MEMO_ENTRIES, DECODER_MEMO_CHARS,
                                                                   scan_resistant=True)


@functools.lru_cache(maxsize=None)
def skipped(hinted: tuple[bool, ...]) -> frozenset[str]:
    """The decoders to skip on a text where the hints of `HINTED_DECODERS` matched or not."""
    return frozenset(name for hit, names in zip(hinted, HINTED_DECODERS) if not hit for name in names)


def decoder_pieces(text: str, cleaned: str | None, skips: Sequence[frozenset[str]]) -> tuple[str, ...] | None:
    """What the decoders make of `text` and of its cleaned text when that differs (None: the same
    text), but the decoders of `skips` (per source: the text, then the cleaned text); or None when
    the text is to be tested on its own: a decoder met a limit, or an output holds a NUL or a lone
    surrogate (it cannot be joined)."""
    return _decoder_memo.get_or_make(text, lambda: _made(text, cleaned, skips),
                                     lambda made: 64 + len(text) + sum(map(len, made or ())))


def _made(text: str, cleaned: str | None, skips: Sequence[frozenset[str]]) -> tuple[str, ...] | None:
    outputs: list[str] = []
    for source, skip in zip((text,) if cleaned is None or cleaned == text else (text, cleaned), skips):
        for output in decoder_outputs(source, skip=skip):
            if output.__class__ is Undecodable:
                return None
            decoded = output[1]  # type: ignore[index]
            if SEP in decoded or (not decoded.isascii() and _has_surrogate(decoded)):
                return None
            outputs.append(decoded)
    return tuple(outputs)
