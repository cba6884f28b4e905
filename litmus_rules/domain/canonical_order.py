"""Unicode normalisation in linear time, whatever the text.

`unicodedata.normalize` puts each stretch of combining marks (non-starters) in canonical order by
insertion sort: quadratic in a long stretch out of order. "a" and 16,000 pairs of U+0301 U+0316
take it 0.8 s to normalise, a tool description of 64 KB of them took 3.3 s to check, and 1 MB
would take hours. Real text puts a few marks on a letter (Zalgo text a few dozen).

So `normalize` first puts in order, itself, every run of RUN_MIN or more characters that may
decompose to non-starters only (RE2's `\\p{M}`, and the half-width kana sound marks, which NFKC
makes combining marks; one scan of the UTF-8, 2-4 ms a MB): the run is decomposed in short
pieces (canonical ordering never moves a mark past a starter, so each piece's order is a
stable sort of part of a stretch) and each stretch of non-starters stable-sorted by combining
class, which is what canonical ordering is. `unicodedata` then finds that decomposition in
order (a run's marks move back past, at most, the few the character before it decomposes to)
and composes it: the same text (tests/test_canonical_order18.py: against unicodedata on
generated texts, and the class against every code point), in linear time.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any, Literal

from litmus_rules.domain.textmemo import re2_module, re2_options, utf8

# Runs shorter than this are left to unicodedata: its insertion sort then moves a mark a few dozen
# places at most (28-35 ms for 500,000 characters of runs of 31 marks out of order).
RUN_MIN = 32
_PIECE = 32  # characters of a run decomposed by one call (short: its own ordering stays cheap)

Form = Literal["NFC", "NFD", "NFKC", "NFKD"]
_DECOMPOSITION: dict[Form, Form] = {"NFKC": "NFKD", "NFKD": "NFKD", "NFC": "NFD", "NFD": "NFD"}
_NON_STARTERS = re.compile(rb"[^\x00]{2,}")  # in a run's combining classes, one byte a character


def normalize(form: Form, text: str) -> str:
    """`unicodedata.normalize(form, text)`, in linear time (the module's docstring)."""
    if len(text) < RUN_MIN or text.isascii():
        return unicodedata.normalize(form, text)
    try:
        data = utf8(text)
    except UnicodeEncodeError:  # lone surrogates: encoded as they are, and no run holds one
        data = text.encode("utf-8", "surrogatepass")
    runs = _mark_runs()
    if runs.search(data) is None:
        return unicodedata.normalize(form, text)
    decomposition = _DECOMPOSITION[form]
    pieces = []
    done = 0
    for run in runs.finditer(data):
        start, end = run.span()
        pieces.append(data[done:start].decode("utf-8", "surrogatepass"))
        pieces.append(_in_order(data[start:end].decode("utf-8"), decomposition))
        done = end
    pieces.append(data[done:].decode("utf-8", "surrogatepass"))
    return unicodedata.normalize(form, "".join(pieces))


@functools.cache
def _mark_runs() -> Any:
    """RUN_MIN or more characters in a row that may decompose to non-starters only (RE2, on
    UTF-8): the marks, and U+FF9E and U+FF9F (NFKC makes U+3099 and U+309A of them). A superset
    of those unicodedata knows (tests/test_canonical_order18.py, over every code point): a
    character too many only costs a run sorted here."""
    return re2_module().compile(r"[\p{M}\x{FF9E}\x{FF9F}]{%d,}" % RUN_MIN, re2_options())


def _in_order(run: str, decomposition: Form) -> str:
    """The canonical decomposition of `run` (NFD or NFKD), in canonical order."""
    if unicodedata.is_normalized(decomposition, run):  # (linear for these forms: no "maybe")
        return run  # (a form of a text already normalised: its runs are in order)
    decompose = functools.partial(unicodedata.normalize, decomposition)
    decomposed = "".join(map(decompose, [run[i : i + _PIECE] for i in range(0, len(run), _PIECE)]))
    classes = bytes(map(unicodedata.combining, decomposed))
    pieces = []
    done = 0
    for stretch in _NON_STARTERS.finditer(classes):
        start, end = stretch.span()
        pieces.append(decomposed[done:start])
        pieces.append("".join(sorted(decomposed[start:end], key=unicodedata.combining)))  # stable
        done = end
    pieces.append(decomposed[done:])
    return "".join(pieces)
