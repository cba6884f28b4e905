"""The path canonicalisation of a case-folded text read off that of the text itself.

A text's forms hold two path forms (normalize.py): "path canonicalised", of its case-preserving
clean text, and "normalised > path canonicalised", of that text case-folded (and NFKC'd). On
ASCII the second is the first lower-cased; on a long non-ASCII text dense with separators,
`canonical_path_folded` reads it off the first where case folding provably changes no
character's part in a path token, and canonicalises the folded text again otherwise.
"""

from __future__ import annotations

import functools
import re
import sys

from litmus_rules.domain.path_roles import code_point_blocks, role_table
from litmus_rules.domain import paths  # (as a module: a test's stand-in for canonical_path is seen here too)
from litmus_rules.domain.textmemo import MEMO_MIN, remember


# The texts `canonical_path_folded` reads off their case-preserving form: those from this long
# (a shorter one is canonicalised again in well under a millisecond, and a tool list of a thousand
# such texts would pay for building `_folds_unlike`).
FOLD_MIN = MEMO_MIN


def canonical_path_folded(text: str, canonical: str, folded: str) -> str:
    """`canonical_path(folded)`, where `canonical` is `canonical_path(text)` and `folded` is what
    `text` became after case folding (and NFKC: `transforms._full_from_clean`): `canonical`
    case-folded when `folded` is `text.casefold()` and `text` holds no character whose folding
    changes its part in a path token (`_folds_unlike`), else canonicalised on its own.

    Why the two agree: folding is then one character for one, each playing the same part in every
    pattern of paths.py and in its `_canonical` (an ASCII capital stays an ASCII letter, a
    non-ASCII letter or number one of the same kind for RE2 and `re`, and nothing becomes ASCII,
    a separator or a dot), so the tokens are found at the same places; and canonicalisation only
    drops characters and turns "\\" into "/", which folding leaves alone. Taken only for long
    texts (FOLD_MIN) dense with separators, where canonicalising again costs ~200 ms a MB
    against ~20 ms.
    (ASCII texts need none of it: `normalize` lower-cases their canonical form.)"""
    if (len(text) > FOLD_MIN and paths.dense_with_separators(text)
            and _folds_unlike().search(text) is None and text.casefold() == folded):
        return remember(paths.canonical_path, folded, canonical.casefold())  # (`path_casefold_key` asks too)
    return paths.canonical_path(folded)


@functools.cache
def _folds_unlike() -> re.Pattern[str]:
    """The characters whose case folding is not one character playing the same part in a path
    token (`canonical_path_folded`): "ß" -> "ss", "ﬁ" -> "fi", U+212A KELVIN SIGN -> "k", ...:
    ~100 of the ~1,500 that folding changes, found by asking Python and RE2 (the stand-in table
    of path_roles.py) about every code point of the first two planes (~10 ms, once); and, unasked,
    every one past them (none folds in Unicode 15, and a text holding one is only canonicalised
    again)."""
    table = role_table()
    unlike = []
    for _, block in code_point_blocks(0, _FOLD_ASKED):
        if block.casefold() == block:
            continue  # all but ~25 blocks: nothing folds
        for c in block:
            d = c.casefold()
            if d == c or "A" <= c <= "Z":  # (the only ASCII characters folding changes)
                continue
            if (len(d) != 1 or d.isascii() or table[ord(c)] != table[ord(d)]
                    or c.isalnum() != d.isalnum() or any(x.isascii() for x in c.lower() + d.lower())):
                unlike.append(c)
    return re.compile("[" + "".join(map(re.escape, unlike)) + f"{chr(_FOLD_ASKED)}-{chr(sys.maxunicode)}]")


_FOLD_ASKED = 0x20000
