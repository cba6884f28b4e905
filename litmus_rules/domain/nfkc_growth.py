"""NFKC's growth, bounded: a text that NFKC would make too long has an unknown NFKC form.

`transforms.nfkc` asks `check_growth` of a text long enough to pass the limit; `joined_texts` is
the scope in which the text given is many texts joined by NUL (joins.py), each held to its own
limit. Messages and the README's limits table name the limit `transforms.NFKC_MAX_ADDED`, as
before it moved here: `transforms` imports it (its `nfkc` reads it), so that name stands.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import unicodedata
from collections.abc import Iterator
from itertools import islice
from typing import Any

from litmus_rules.domain.decoding import LimitUnknown, size_text
from litmus_rules.domain.path_roles import code_point_blocks
from litmus_rules.domain.textmemo import memo_large, re2_found, re2_options


# NFKC makes a text up to 18 times longer (U+FDFA, an Arabic ligature, becomes 18 characters), and
# every form derived from the NFKC text is as long: 1 M such ligatures made 18 M characters of each
# form, seconds of CPU and half a GB. The characters that NFKC alone turns into four or more
# (`_growers`: 72 in Unicode 14, ligatures and squared words; every other one gives three at most,
# and no character takes more than four under canonical decomposition, whatever follows it) may
# add at most as many characters as the text has, or NFKC_MAX_ADDED if that is more; past it the
# NFKC form is unknown (LimitUnknown), and so is a search that needs it. No text of a real
# benchmark comes near: a few such ligatures in a sentence add a few dozen characters.
NFKC_MAX_ADDED = 1 << 16
_MAX_GROWTH = 18  # the most characters NFKC makes of one (U+FDFA; tests/test_nfkc_growth13.py checks)
_GROWERS_BELOW = 0x30000  # every character that NFKC makes four or more of lies below (same test)


@functools.cache
def _growers() -> tuple[dict[str, int], Any]:
    """{character: how many characters NFKC adds to it} for those it makes four or more of, and an
    RE2 class that finds any of them. Built on the first large non-ASCII text (~20 ms): from the
    running Unicode database, asked character by character only in the blocks of 256 code points
    whose compatibility decompositions add three characters or more (NFKC makes no more of a
    character than NFKD does): a tenth of them."""
    import re2

    normalize = unicodedata.normalize
    added = {}
    for first, last in ((0, 0xD800), (0xE000, _GROWERS_BELOW)):
        for _, block in code_point_blocks(first, last):
            if len(normalize("NFKD", block)) - len(block) < 3:
                continue
            for c in block:
                n = len(normalize("NFKC", c))
                if n >= 4:
                    added[c] = n - 1
    pattern = "[" + "".join(f"\\x{{{ord(c):X}}}" for c in added) + "]"
    return added, re2.compile(pattern, re2_options())


@memo_large
def _growers_add(text: str) -> int:
    """How many characters the growers of `text` add under NFKC (kept for a large text: a text
    past the limit is asked again by every search that reaches it)."""
    growers, pattern = _growers()
    if not re2_found(pattern, text):  # (the common case: one scan of the UTF-8, ~1 ms a MB)
        return 0
    # a few of them (a text with every code point of a range): one `re` scan finds them all
    # (28 -> 5 ms a MB); many (ligatures all along): a scan a grower, in C, where `set(text)` made
    # a string a character (2-10x less)
    few = list(islice(_grower_class().finditer(text), GROWERS_FOUND_MAX + 1))
    if len(few) <= GROWERS_FOUND_MAX:
        return sum(growers[m.group()] for m in few)
    return sum(text.count(c) * added for c, added in growers.items() if c in text)


GROWERS_FOUND_MAX = 1024  # growers found one by one in a text; past it, counted grower by grower


@functools.cache
def _grower_class() -> re.Pattern[str]:
    """`re`'s class of the growers (`finditer` gives each as a match, with no Python per character)."""
    return re.compile("[" + "".join(map(re.escape, _growers()[0])) + "]")


def check_growth(text: str) -> None:
    """Raise LimitUnknown where NFKC would add more to `text` than its limit (inside
    `joined_texts`, where it would add more to one of the texts joined than that text's limit)."""
    added = _growers_add(text)
    if added > NFKC_MAX_ADDED and _joined.get():
        # texts joined by NUL: some may pass their own limits, though the join, longer than any of
        # them, is within its own. Each that may is checked (a text whose growers add at most
        # NFKC_MAX_ADDED cannot pass it), and the error names them all (`pieces`: their places in
        # the join), for the caller to take them apart
        over = [k for k, piece in enumerate(text.split("\0"))
                if len(piece) * (_MAX_GROWTH - 1) > NFKC_MAX_ADDED
                and _growers_add(piece) > max(len(piece), NFKC_MAX_ADDED)]
        if over:
            exc = LimitUnknown(f"{len(over)} of the texts joined would pass their NFKC limit "
                               "(transforms.NFKC_MAX_ADDED)")
            exc.pieces = over  # type: ignore[attr-defined]
            raise exc
    if added > max(len(text), NFKC_MAX_ADDED):
        raise LimitUnknown(
            f"NFKC would add {size_text(added)} to a text of {size_text(len(text))} (ligatures such as "
            f"U+FDFA become up to {_MAX_GROWTH} characters; limit transforms.NFKC_MAX_ADDED: as many "
            f"characters as the text has, at least {NFKC_MAX_ADDED})")


# Set inside `joined_texts()`: the text `nfkc` is given is texts joined by NUL (joins.py).
_joined: contextvars.ContextVar[bool] = contextvars.ContextVar("nfkc_joined_texts", default=False)


@contextlib.contextmanager
def joined_texts() -> Iterator[None]:
    """Within it, the texts `nfkc` is given (and `clean`, `_full_from_clean`, which apply it) are
    texts joined by NUL (joins.py), and the NFKC limit is each text's: it raises LimitUnknown
    when some of them pass their own limits, as each would on its own (`pieces`: which). The
    limit grows with a text's length, so a join within its own may hold a text past its (4,000
    U+FDFA among 90 KB of other texts: its NFKC form would have been searched as if known)."""
    token = _joined.set(True)
    try:
        yield
    finally:
        _joined.reset(token)
