"""A probe's literals (`probes._plain_literals`): the literals kept for a form of plain texts are
those no shorter kept literal occurs in, whichever way `_holds_one` looks (a search per literal,
or a set lookup per position when a length has many), and a long token's thousands of windows
are sorted out in linear time."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from litmus_rules.domain import probes


def _naive(form: str, lits: set[str]) -> tuple[bytes, ...] | None:
    usable = set(lits) if form != "raw" else {
        lit for lit in lits if "\\" not in lit and ("%" not in lit or not probes._PERCENT_ESCAPE.search(lit))}
    if "" in usable:
        return None
    kept: list[str] = []
    for _, same_length in itertools.groupby(sorted(sorted(usable), key=len), len):
        shorter = tuple(kept)
        kept += [lit for lit in same_length if not any(map(lit.__contains__, shorter))]
    return tuple(lit.encode() for lit in kept)


_LITS = st.sets(st.text(alphabet="abc%41\\", min_size=0, max_size=9), min_size=2, max_size=200)


@settings(max_examples=300, deadline=None)
@given(_LITS, st.sampled_from(["raw", "cleaned"]), st.integers(0, 3))
def test_the_kept_literals_are_those_without_a_shorter_one_inside(lits: set[str], form: str, per_length: int) -> None:
    # a low threshold makes the lookup per position run on small inputs too
    old = probes._SEARCHES_PER_LENGTH
    probes._SEARCHES_PER_LENGTH = per_length
    try:
        assert probes._plain_literals(form, lits) == _naive(form, lits)
    finally:
        probes._SEARCHES_PER_LENGTH = old


def test_the_windows_of_a_long_token_and_its_long_forms() -> None:
    rng = random.Random(3)
    token = "".join(rng.choice("!@#$^&*()_+-=[]{}|;:',.<>/?`~") for _ in range(3000))
    windows = {token[i:i + 6] for i in range(len(token) - 5)}
    lits = windows | {token, token.upper() + "x" * 7, "\\u0041".join(token), token[:1500] * 2}
    got = probes._plain_literals("cleaned", lits)
    assert got == _naive("cleaned", lits)
    assert len(got) == len(windows) + 1  # the "\\u0041" join holds no window; the others hold one
