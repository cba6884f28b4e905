"""Did-you-mean for an unknown key: a suggestion only when it is close enough to be a typo.

`difflib.get_close_matches` with its default cutoff (0.6) offered `description` for MCP's
`execution` and `input_schema` for `outputSchema`: a wrong suggestion misleads more than none.
Case is ignored (`InputSchema` is `input_schema` misspelt); the candidate is returned as written.
Measured, case-folded, on real typos and on real wire keys (tests/test_format11_wire.py keeps both
lists): typos score 0.83 or more (`chanel` 0.92, `extras` 0.91, `inputSchema` 0.96, `scorre`
0.83), foreign keys 0.75 or less (`outputSchema` against `input_schema` 0.75, `execution` against
`description` 0.60, `_meta` 0.44). The cutoff sits between them.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["SUGGEST_CUTOFF", "suggest"]

SUGGEST_CUTOFF = 0.8


def suggest(word: str, candidates: Iterable[str], cutoff: float = SUGGEST_CUTOFF) -> str | None:
    """The candidate most similar to `word` (difflib ratio, case-folded) if it reaches `cutoff`;
    the first of equals in `candidates` order; None when nothing is close."""
    from difflib import SequenceMatcher  # here: only a misspelt key needs it

    folded = word.casefold()
    matcher = SequenceMatcher(b=folded, autojunk=False)
    best: tuple[float, str] | None = None
    for candidate in candidates:
        matcher.set_seq1(candidate.casefold())
        # The cheap upper bounds first, as get_close_matches does: most candidates stop there.
        if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
            continue
        score = matcher.ratio()
        if score >= cutoff and (best is None or score > best[0]):
            best = (score, candidate)
    return None if best is None else best[1]
