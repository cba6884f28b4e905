"""Whether a text is changed by a decoder (HTML, percent, the joint escape decoder, base64/hex
runs, grouped encodings, markup inside words), as `joined.Haystack`
asks it before deriving a text's decoded forms: pure functions of the text, their answers kept by
text in a bounded memo."""

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
from litmus_rules.domain.grouped import grouped_text
from litmus_rules.domain.markup import unwrap_markup
from litmus_rules.domain.transforms import clean

__all__ = ["CHECKED_CHARS", "CHECKED_ENTRIES", "checked", "checking"]


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


def checking(texts: Sequence[str], check: str) -> Callable[[int], bool]:
    return lambda i: checked(check, texts[i])
