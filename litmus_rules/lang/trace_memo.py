"""Traces recorded alike, built once: their JSON shared between the verdicts of a run, their blame
(the facts an insufficient-evidence reason names) between all evaluations.

A batch from one benchmark repeats its traces. On the 949 AgentDojo episodes of the corpus, eight
of the nine rules that reject every episode give the very same trace each time: the facts they need
are missing alike, so every value is unknown or the same few scalars. A trace's JSON is a function
of the rule's AST and of what its recording run stored (`RuleTrace`'s `rec`, that run's alone):
which nodes were evaluated, their values, errors, missing facts and quantifier witnesses. When every
record is a scalar (a bool, an int, a short string, None, unknown) or a short list of them, the
records can be a dict key, and the JSON (and blame) built for an earlier episode is this one's.

A record that is anything else (an object, a long or nested list, a float: `-0.0 == 0.0` but they
print apart, a string longer than a trace shows) makes the trace built as usual. The memo holds at
most `WEIGHT_LIMIT` records in its keys, each small, and is emptied when full.

Shared JSON must not be changed by its reader: only the batch writer, which dumps each verdict's
JSON and drops it, asks for it (`Verdict.to_json(shared=...)`).
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import eq
from typing import Any, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang.values import TRACE_ITEMS, TRACE_STRING, UNKNOWN


# A record's kind, one character per record: the key tells `True` from `1` (equal in a tuple), and
# '!' marks a record that cannot be part of a key as it is.
_KIND: dict[type, str] = {bool: "b", int: "i", str: "s", type(None): "n", type(UNKNOWN): "u"}
_NOT_A_KEY = "!"

# id(condition) -> how many of its traces in a row had a record that cannot be a key. A condition
# that keeps recording lists of objects (a tool list, say) is tried once in RETRY traces only, so it
# costs next to nothing. (A heuristic: an id that names another condition later only retries early.)
_MISSES: dict[int, int] = {}
_MISSES_LIMIT = 10_000
RETRY = 16


def records_key(condition: ast.Expr, rec: Mapping[Any, Any]) -> tuple[Any, ...] | None:
    """What a trace of `condition` was recorded as, as a hashable key: which nodes have records (the
    recording run's `rec` holds that one run's records only, and nothing is recorded for a node it
    did not evaluate), their kinds and their values. None when one of them cannot be part of a key,
    or when the condition's recent traces could not be keyed either (see RETRY)."""
    misses = _MISSES.get(id(condition), 0)
    if misses >= RETRY and misses % RETRY:
        _MISSES[id(condition)] = misses + 1
        return None
    key = _key(rec)
    if key is None:
        if len(_MISSES) >= _MISSES_LIMIT:
            _MISSES.clear()
        _MISSES[id(condition)] = misses + 1
    elif misses:
        _MISSES[id(condition)] = 0
    return key


def _key(rec: Mapping[Any, Any]) -> tuple[Any, ...] | None:
    values = list(rec.values())
    kinds = "".join(map(_KIND.get, map(type, values), repeat(_NOT_A_KEY)))
    if "s" in kinds and max(map(len, compress(values, map(eq, kinds, repeat("s"))))) > TRACE_STRING:
        return None
    at = kinds.find(_NOT_A_KEY)
    if at >= 0:
        chars = list(kinds)
        while at >= 0:  # (few: a list that a `[x]` or a `default(..., [...])` made)
            listed = _list_key(values[at])
            if listed is None:
                return None
            values[at], chars[at] = listed
            at = kinds.find(_NOT_A_KEY, at + 1)
        kinds = "".join(chars)
    return tuple(rec), kinds, tuple(values)


def _list_key(value: Any) -> tuple[tuple[str, tuple[Any, ...]], str] | None:
    """A short list of scalars as (its elements' kinds, its elements), kind 'l'; else None."""
    if value.__class__ is not list or len(value) > TRACE_ITEMS:
        return None
    kinds = "".join(map(_KIND.get, map(type, value), repeat(_NOT_A_KEY)))
    if _NOT_A_KEY in kinds or any(len(v) > TRACE_STRING for v in value if v.__class__ is str):
        return None
    return (kinds, tuple(value)), "l"


class TraceMemo:
    """What was built from a trace (its JSON, its blame), by its condition, the records of its
    recording run (`records_key`) and a variant (compact or not): see the module's doc."""

    __slots__ = ("_entries", "_weight")
    # records held in the keys, all entries together, a list counting as many as it may hold: at
    # most TRACE_STRING characters each, so a few megabytes in all
    WEIGHT_LIMIT = 30_000

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[ast.Expr, Any]] = {}
        self._weight = 0

    def get(self, condition: ast.Expr, records: tuple[Any, ...], variant: Any = None) -> Any:
        hit = self._entries.get((variant, *records))
        return hit[1] if hit is not None and hit[0] is condition else None

    def put(self, condition: ast.Expr, records: tuple[Any, ...], value: Any, variant: Any = None) -> None:
        kinds = records[1]
        weight = len(kinds) + kinds.count("l") * TRACE_ITEMS
        if self._weight + weight > self.WEIGHT_LIMIT:
            self._entries.clear()
            self._weight = 0
        self._entries[(variant, *records)] = (condition, value)
        self._weight += weight

    def __len__(self) -> int:
        return len(self._entries)
