"""Traces recorded alike, built once: their JSON shared between the verdicts of a run, their blame
(the facts an insufficient-evidence reason names) between all evaluations.

A batch from one benchmark repeats its traces. On the 949 AgentDojo episodes of the corpus, seven
of the nine rules that reject every episode give the very same trace each time (the facts they need
are missing alike), and the other two 6 and 21 different ones. A trace's JSON is a function of the
rule's AST and of what its recording run stored (`RuleTrace`'s `rec`, that run's alone): which nodes
were evaluated, their values, errors, missing facts and quantifier witnesses. So the records make
the key, and the JSON (and blame) built for an earlier episode with the same records is this one's:
- a scalar (a bool, an int, a string of at most TRACE_STRING characters, None, unknown) is its own
  key, with its kind beside it: `True == 1` in a tuple, but they print apart;
- a short list of scalars is the tuple of them, with their kinds;
- a value `marshal` writes (a tool list, a float: built-in types alone, subclasses refused) is its
  marshal bytes, up to REPR_MAX of them: an exact encoding, read back as the very value with its
  types (`True` apart from `1`, `1.0` from `1`, `-0.0` from `0.0`), and 7x cheaper than `repr` on
  the tool lists of imported corpora, which most of their traces show. Equal bytes are an equal
  value, so the same trace; an equal value written apart (its objects shared otherwise) only misses;
- anything else (a built-in's record, a list holding one) is its `repr`, up to REPR_MAX
  characters. What a trace shows of a value is a function of its repr for every value a trace
  holds: built-in types as JSON or YAML are read (`repr` tells `1` from `1.0` and `-0.0` from `0.0`,
  and a float's or a container's repr gives back the value), and the built-ins' records, which a
  trace shows by their repr. No value is a subclass of str, int, float, list or dict with a repr of
  its own (the batch writer, which alone shares JSON, reads files). A blame does not depend on
  what a value holds, only on which values are unknown.

A condition whose traces keep missing (their records cannot be a key, or no earlier trace had
them: a tool list that differs episode after episode) is tried once in RETRY traces only, so it
costs next to nothing. The memo holds at most `WEIGHT_LIMIT` records in its keys, and is emptied
when full.

Shared JSON must not be changed by its reader: only the batch writer, which dumps each verdict's
JSON and drops it, asks for it (`Verdict.to_json(shared=...)`).
"""

from __future__ import annotations

import marshal
from itertools import compress, repeat
from operator import eq
from typing import Any, Callable, Mapping

from litmus_rules.lang import ast
from litmus_rules.lang.values import TRACE_ITEMS, TRACE_STRING, UNKNOWN


# A record's kind, one character per record: the key tells `True` from `1` (equal in a tuple), and
# '!' marks a record that cannot be part of a key as it is.
_KIND: dict[type, str] = {bool: "b", int: "i", str: "s", type(None): "n", type(UNKNOWN): "u"}
_NOT_A_KEY = "!"

REPR_MAX = 1 << 14  # characters of a record's repr in a key, or bytes of its marshal form

# id(condition) -> how many of its traces in a row missed (see the module's doc). (A heuristic: an
# id that names another condition later only retries early.)
_MISSES: dict[int, int] = {}
_MISSES_LIMIT = 10_000
RETRY = 16


def records_key(condition: ast.Expr, rec: Mapping[Any, Any]) -> tuple[Any, ...] | None:
    """What a trace of `condition` was recorded as, as a hashable key: which nodes have records (the
    recording run's `rec` holds that one run's records only, and nothing is recorded for a node it
    did not evaluate), their kinds and their values. None when one of them cannot be part of a key,
    or when the condition's recent traces missed (see RETRY)."""
    misses = _MISSES.get(id(condition), 0)
    if misses >= RETRY and misses % RETRY:
        _MISSES[id(condition)] = misses + 1
        return None
    key = _key(rec)
    if key is None:
        looked_up(condition, False)
    return key


def looked_up(condition: ast.Expr, found: bool) -> None:
    """Whether a trace of `condition` was found in a memo (or could not be looked up at all)."""
    if found:
        if _MISSES.get(id(condition)):
            _MISSES[id(condition)] = 0
        return
    if len(_MISSES) >= _MISSES_LIMIT:
        _MISSES.clear()
    _MISSES[id(condition)] = _MISSES.get(id(condition), 0) + 1


def _key(rec: Mapping[Any, Any]) -> tuple[Any, ...] | None:
    values = list(rec.values())
    kinds = "".join(map(_KIND.get, map(type, values), repeat(_NOT_A_KEY)))
    if "s" in kinds and max(map(len, compress(values, map(eq, kinds, repeat("s"))))) > TRACE_STRING:
        kinds = "".join(_NOT_A_KEY if k == "s" and len(v) > TRACE_STRING else k for k, v in zip(kinds, values))
    at = kinds.find(_NOT_A_KEY)
    if at >= 0:
        chars = list(kinds)
        shown: dict[int, tuple[Any, str] | None] = {}  # one key per value, however many nodes show it
        while at >= 0:  # (the few records that are not scalars)
            keyed = _list_key(values[at]) or _written_key(values[at], shown)
            if keyed is None:
                return None
            values[at], chars[at] = keyed
            at = kinds.find(_NOT_A_KEY, at + 1)
        kinds = "".join(chars)
    return tuple(rec), kinds, tuple(values)


def _written_key(value: Any, shown: dict[int, tuple[Any, str] | None]) -> tuple[Any, str] | None:
    """Any other record as its marshal bytes, kind 'm', or else its repr, kind 'r' (see the
    module's doc); None past REPR_MAX bytes or characters, or when it has neither (a repr that
    raises, a structure too deep for it)."""
    if id(value) in shown:
        return shown[id(value)]
    keyed: tuple[Any, str] | None
    try:
        keyed = marshal.dumps(value), "m"
    except ValueError:  # not built-in types alone, or too deep
        try:
            keyed = repr(value), "r"
        except Exception:  # noqa: BLE001 - RecursionError, a repr of the caller's own that fails
            keyed = None
    if keyed is not None and len(keyed[0]) > REPR_MAX:
        keyed = None
    shown[id(value)] = keyed
    return keyed


def _list_key(value: Any) -> tuple[tuple[str, tuple[Any, ...]], str] | None:
    """A short list of scalars as (its elements' kinds, its elements), kind 'l'; else None."""
    if value.__class__ is not list or len(value) > TRACE_ITEMS:
        return None
    kinds = ""  # (a loop: most such lists hold none or one element, where map and join cost more)
    for v in value:
        kind = _KIND.get(v.__class__)
        if kind is None or (kind == "s" and len(v) > TRACE_STRING):
            return None
        kinds += kind
    return (kinds, tuple(value)), "l"


class TraceMemo:
    """What was built from a trace (its JSON, its blame), by its condition, the records of its
    recording run (`records_key`) and a variant (compact or not): see the module's doc."""

    __slots__ = ("_entries", "_weight")
    # records held in the keys, all entries together, a list counting as many as it may hold and a
    # repr or marshal form as many as it has TRACE_STRING characters or bytes: a few megabytes in all
    WEIGHT_LIMIT = 30_000

    def __init__(self) -> None:
        self._entries: dict[tuple[Any, ...], tuple[ast.Expr, Any]] = {}
        self._weight = 0

    def get(self, condition: ast.Expr, records: tuple[Any, ...], variant: Any = None) -> Any:
        hit = self._entries.get((variant, *records))
        return hit[1] if hit is not None and hit[0] is condition else None

    def built(self, condition: ast.Expr, records: tuple[Any, ...] | None, build: Callable[[], Any],
              variant: Any = None) -> Any:
        """What `build()` gives for a trace of `condition` recorded as `records` (`records_key`):
        the memo's, if a trace recorded so was built before, else built now and kept. None for
        `records`: built, not kept."""
        if records is None:
            return build()
        found = self.get(condition, records, variant)
        looked_up(condition, found is not None)
        if found is None:
            found = build()
            self.put(condition, records, found, variant)
        return found

    def put(self, condition: ast.Expr, records: tuple[Any, ...], value: Any, variant: Any = None) -> None:
        kinds = records[1]
        weight = len(kinds) + kinds.count("l") * TRACE_ITEMS
        if "r" in kinds or "m" in kinds:  # as many records as it holds TRACE_STRING characters or bytes
            weight += sum(len(v) for v, k in zip(records[2], kinds) if k in "rm") // TRACE_STRING
        if self._weight + weight > self.WEIGHT_LIMIT:
            self._entries.clear()
            self._weight = 0
        key = (variant, *records)
        self._entries[key] = (condition, value)
        self._weight += weight

    def __len__(self) -> int:
        return len(self._entries)
