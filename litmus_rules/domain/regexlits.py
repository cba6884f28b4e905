"""The literal text of a regex: the literal runs that every match of it must contain.

DESIGN, "Reading the note" 2: a regex signal partially overlaps a surface through its literal
text, and that text is what *every* match contains, not what some branch or optional group may
contain (`(?:wd)?`, `evil|EXFIL`: neither is required). The pattern is parsed by `re`'s own
parser (the harness's engine), and each piece of it summarised as `_Info`:

- `exact`: the one string it always matches, when it does (a literal, a group of literals, a
  zero-width assertion: ""), else None;
- otherwise `prefix` and `suffix`, the literal text every match starts and ends with, and `runs`,
  the literal runs every match contains in between.

Concatenation glues a suffix to the next prefix; a repeat with a minimum of at least one keeps
its body's runs; an optional piece, a class, `.` or a backreference contributes nothing and ends
a run; an alternation keeps only the runs every branch has.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterable
from typing import Any

from litmus_rules.domain.pyregex import C, P
from litmus_rules.lang.records import record

MAX_LITERALS_PATTERN = 10_000  # regexes.MAX_PATTERN_LEN: a longer pattern is unknown anyway
MAX_EXACT = 1_000  # `x{100000}` is not spelt out: past this, its start and end stand for it


@record
class _Info:
    exact: str | None
    prefix: str = ""
    suffix: str = ""
    runs: frozenset[str] = frozenset()

    def all_runs(self) -> frozenset[str]:
        if self.exact is not None:
            return frozenset({self.exact} - {""})
        return (self.runs | {self.prefix, self.suffix}) - {""}


EMPTY = _Info("")
NOTHING = _Info(None)  # consumes something that is not a known literal


def _concat(a: _Info, b: _Info) -> _Info:
    if a.exact is not None and b.exact is not None:
        return _Info(a.exact + b.exact) if len(a.exact) + len(b.exact) <= MAX_EXACT else _Info(
            None, a.exact, b.exact)
    if a.exact is not None:
        return _Info(None, a.exact + b.prefix, b.suffix, b.runs)
    if b.exact is not None:
        return _Info(None, a.prefix, a.suffix + b.exact, a.runs)
    return _Info(None, a.prefix, b.suffix, a.runs | b.runs | {a.suffix + b.prefix})


def _sequence(items: Iterable[tuple[Any, Any]]) -> _Info:
    info = EMPTY
    for op, av in items:
        info = _concat(info, _item(op, av))
    return info


def _item(op: Any, av: Any) -> _Info:  # noqa: C901 - one branch per node kind
    if op is C.LITERAL:
        return _Info(chr(av))
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return EMPTY  # zero-width: the text on both sides is adjacent in the match
    if op is C.SUBPATTERN:
        return _sequence(av[3])
    if op is C.ATOMIC_GROUP:
        return _sequence(av)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, body = av
        if low < 1:
            return NOTHING
        inner = _sequence(body)
        if inner.exact is not None:
            if low == high and len(inner.exact) * low <= MAX_EXACT:
                return _Info(inner.exact * low)
            edge = inner.exact * min(low, max(1, MAX_EXACT // max(1, len(inner.exact))))
            return _Info(None, edge, edge)
        runs = inner.runs | ({inner.suffix + inner.prefix} if low >= 2 else set())
        return _Info(None, inner.prefix, inner.suffix, frozenset(runs))
    if op is C.BRANCH:
        branches = [_sequence(b) for b in av[1]]
        exacts = {b.exact for b in branches}
        if len(exacts) == 1 and None not in exacts:
            return branches[0]
        common = frozenset.intersection(*(b.all_runs() for b in branches)) if branches else frozenset()
        return _Info(None, "", "", common)
    return NOTHING  # a class, `.`, a backreference, a conditional group...


@functools.lru_cache(maxsize=1024)
def required_literals(pattern: str) -> tuple[str, ...]:
    """The literal runs every match of `pattern` contains, longest first; () when the pattern
    cannot be parsed (its search is unknown then) or nothing literal is required."""
    if len(pattern) > MAX_LITERALS_PATTERN:
        return ()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning on "[[", as regexes.py
            tree = P.parse(pattern, 0)
        runs = _sequence(tree.data).all_runs()
    except (re.error, ValueError, OverflowError, RecursionError, MemoryError):
        return ()
    return tuple(sorted(runs, key=lambda r: (-len(r), r)))
