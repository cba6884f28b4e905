"""Whether a text is changed by a decoder (HTML, percent, the joint escape decoder, base64/hex
runs, grouped encodings, markup inside words), as `joined.Haystack`
asks it before deriving a text's decoded forms: pure functions of the text, their answers kept by
text in a bounded memo; for HTML and percent escapes, many texts told at once by one call on
their join, and for base64 and hex runs, by decoding the runs of all of them together
(`checked_many`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.decoding import (
    LimitUnknown,
    _base64_runs,
    _hex_runs,
    candidate_runs,
    html_unescape,
    percent_decode,
    unescape_all,
)
from litmus_rules.domain.encoded_spans import SHORT_MAX, decode_many, decoded_spans
from litmus_rules.domain.grouped import grouped_text
from litmus_rules.domain.joins import SEP
from litmus_rules.domain.markup import unwrap_markup
from litmus_rules.domain.textmemo import transient
from litmus_rules.domain.transforms import clean

__all__ = ["CHECKED_CHARS", "CHECKED_ENTRIES", "checked", "checked_many"]


def _limit_is_a_change(check: Callable[[str], bool]) -> Callable[[str], bool]:
    """`check`, true where a decoder meets a limit (LimitUnknown): the text's decoded form is
    unknown, and the exact test says so, naming the text."""
    def guarded(text: str) -> bool:
        try:
            return check(text)
        except LimitUnknown:
            return True
    return guarded


def _changed_by(decode: Callable[[str], str]) -> Callable[[str], bool]:
    # forms() decodes the raw text and, when it differs, its cleaned text
    def differs(text: str) -> bool:
        if decode(text) != text:
            return True
        cleaned = clean(text)
        return cleaned != text and decode(cleaned) != cleaned
    return _limit_is_a_change(differs)


def _decodes_runs(text: str) -> bool:
    if len(text) < SHORT_MAX:  # (what a short text's runs decode to is kept: its forms decode them next)
        return any(decoded_spans(text))
    # the runs `normalize.forms` decodes (kept for a large text, which its forms decode next; [] when
    # a linear-time scan shows that none gives a span)
    runs = candidate_runs(text)
    return bool(_base64_runs(runs, 1) or _hex_runs(runs, 1))  # one decoded span is enough


# Whether a text is changed by a decoder, as the haystack asks it (pure functions of the text).
_CHECKS: dict[str, Callable[[str], bool]] = {
    "html": _changed_by(html_unescape), "percent": _changed_by(percent_decode),
    "runs": _limit_is_a_change(_decodes_runs), "groups": _limit_is_a_change(lambda text: bool(grouped_text(text))),
    "escapes": _changed_by(unescape_all),
    "markup": _changed_by(unwrap_markup),
}
# Their answers, kept by text: an episode's haystacks share texts (its injected surfaces are some
# of its surfaces), and so do the episodes of a batch (a tool manifest, a system prompt). A memo of
# pure functions, bounded by entries and by the characters of the texts it holds; scan-resistant,
# as a large manifest's texts are asked for in turn, once per haystack (20,000 of them: LRU kept
# none of the first haystack's answers for the second).
CHECKED_ENTRIES = 32768
CHECKED_CHARS = 4 << 20
_checked_memo: BoundedCache[bool] = BoundedCache(CHECKED_ENTRIES, CHECKED_CHARS, scan_resistant=True)


def checked(check: str, text: str) -> bool:
    key = (check, text)
    hit = _checked_memo.get(key)
    if hit is None:
        hit = _checked_memo.put(key, _CHECKS[check](text), 64 + len(text))
    return hit


# The checks `checked_many` decides on a join: a decoder to a fixed point that reads each text of
# a join as it reads the text alone (no escape it decodes holds a NUL, a HTML reference that runs
# on past one is decoded by its name, which holds none, and the rest is kept as it is; a text at
# its fixed point stays there while the others are decoded further, so the join meets the layer
# limit exactly where one of its texts does: tests/test_textchecks22.py). Not the joint escape
# decoder: its rounds run on while any text of the join changes, so a text is decoded further
# than on its own, and the join meets the layer limit sooner.
_JOINED: dict[str, Callable[[str], str]] = {"html": html_unescape, "percent": percent_decode}
# Texts from this many on are decided together (`checked_many`)
JOINED_MIN = 8


def checked_many(check: str, texts: Sequence[str]) -> list[bool]:
    """`[checked(check, t) for t in texts]`. For the checks of `_JOINED`, from JOINED_MIN texts on,
    one call of the decoder on their join by NUL tells which it changes (20,000 texts with a
    percent escape: one call, not 40,000 checks, the memo holding fewer than two haystacks'
    texts); the others are plain, but a non-ASCII one, whose cleaned text the check decodes too
    (`checked`). Text by text where the join meets a limit or its NULs do not come back (a "%00"
    decoded). For base64 and hex runs, what the short texts' runs decode to is found for all of
    them at once, and kept (encoded_spans.decode_many: their forms decode them next)."""
    if check == "runs":
        decode_many(texts)
        runs = _CHECKS[check]
        return [runs(text) if len(text) < SHORT_MAX else checked(check, text) for text in texts]
    decode = _JOINED.get(check)
    if decode is None or len(texts) < JOINED_MIN:
        return [checked(check, text) for text in texts]
    try:
        with transient():  # (the join is made for this call)
            decoded = decode(SEP.join(texts)).split(SEP)
    except LimitUnknown:  # (one of them meets the layer limit: which, each check says)
        decoded = []
    if len(decoded) != len(texts):
        return [checked(check, text) for text in texts]
    return [True if out != text else (not text.isascii() and checked(check, text))
            for out, text in zip(decoded, texts)]
