"""Unicode normalisation in linear time, whatever the text.

`unicodedata.normalize` puts each stretch of combining marks (non-starters) in canonical order by
insertion sort: quadratic in a long stretch out of order. "a" and 16,000 pairs of U+0301 U+0316
take it 0.8 s to normalise; an episode with a tool description of 64 KB of them took 3.2 s to
check, of 512 KB 103 s (of 1 MB, about 7 minutes). Real text puts a few marks on a letter (Zalgo
text a few dozen).

So where a text holds a run of RUN_MIN or more characters that may decompose to non-starters
only (RE2's `\\p{M}`, and the half-width kana sound marks, which NFKC makes combining marks; one
scan of the UTF-8, 2-4 ms a MB, is all other texts pay), `normalize` decomposes the text itself,
in short pieces (each piece's canonical order is a stable sort of parts of its stretches), and
stable-sorts each stretch of RUN_MIN or more non-starters by combining class, which is what
canonical ordering is. `unicodedata` then finds that decomposition in order, but for short
stretches, and composes it: the same text (tests/test_canonical_order18.py: against unicodedata
on generated texts, and the run class against every code point), in linear time: 0.5 s for a
1 MB episode of such marks, whatever their order or the length of their runs.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Literal

from litmus_rules.domain.textmemo import re2_compiled, re2_found

# Runs shorter than this are left to unicodedata: its insertion sort then moves a mark a few dozen
# places at most (28-35 ms for 500,000 characters of runs of 31 marks out of order).
RUN_MIN = 32
_PIECE = 32  # characters of a text decomposed by one call (short: its own ordering stays cheap)

Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_DECOMPOSITION: dict[Form, Form] = {"NFKC": "NFKD", "NFKD": "NFKD", "NFC": "NFD", "NFD": "NFD"}
# RUN_MIN characters in a row that may decompose to non-starters only (RE2, on UTF-8): the marks,
# and U+FF9E and U+FF9F (NFKC makes U+3099 and U+309A of them). A superset of those unicodedata
# knows (tests/test_canonical_order18.py, over every code point): a character too many only costs
# a text put in order here. A fixed count: RE2 finds the span of `{32,}` by a slow path, 2 ms a
# match in a text of such runs.
_MARK_RUN = r"[\p{M}\x{FF9E}\x{FF9F}]{%d}" % RUN_MIN
# RUN_MIN or more non-starters in a row, in a text's combining classes (one byte a character)
_LONG_STRETCH = re.compile(rb"[^\x00]{%d,}" % RUN_MIN)


def normalize(form: Form, text: str) -> str:
    """`unicodedata.normalize(form, text)`, in linear time (the module's docstring)."""
    if len(text) < RUN_MIN or text.isascii():
        return unicodedata.normalize(form, text)
    decomposition = _DECOMPOSITION[form]
    # (the quick check of a decomposition form is linear: no "maybe" answer to settle by normalising)
    if not re2_found(re2_compiled(_MARK_RUN), text) or unicodedata.is_normalized(decomposition, text):
        return unicodedata.normalize(form, text)  # (decomposed and in order already: linear too)
    return unicodedata.normalize(form, _decomposed_in_order(text, decomposition))


def _decomposed_in_order(text: str, decomposition: Form) -> str:
    """The canonical decomposition of `text` (NFD or NFKD), its stretches of RUN_MIN or more
    non-starters in canonical order (shorter ones may not be: unicodedata sorts them cheaply)."""
    decompose = functools.partial(unicodedata.normalize, decomposition)
    decomposed = "".join(map(decompose, [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]))
    classes = bytes(map(unicodedata.combining, decomposed))
    pieces = []
    done = 0
    for stretch in _LONG_STRETCH.finditer(classes):
        start, end = stretch.span()
        pieces.append(decomposed[done:start])
        pieces.append("".join(sorted(decomposed[start:end], key=unicodedata.combining)))  # stable
        done = end
    pieces.append(decomposed[done:])
    return "".join(pieces)
