"""Argument predicates of episode/1.1 `tool_call` signals: does a value satisfy what a signal expects?

A signal's argument is a plain value (equality, as in episode/1) or a predicate: `{equals}`,
`{contains}`, `{regex}`, `{any_of: [...]}` or `{unordered: [...]}` (`episode_format.as_predicate`
is the one definition of what a predicate is; docs/format.md the reference). In an episode/1
document there are no predicates: an object argument is a literal, whatever its key
(`reading_predicates`).

Equality (a plain value, `equals`, the elements of `unordered` and of a list for `contains`) is the
episode/1 reading of DESIGN Reading 3: values compare raw, normalised or as canonical paths, on
their text, so the string "1200" matches the number 1200 as before; and two numbers compare as
numbers, so 1 matches 1.0 (JSON has one number type). A boolean is not a number: `true` matches
neither 1 nor "1".

`satisfies(expected, actual)` raises RegexUnknown (a regex that cannot be settled in bounded time)
and PredicateError (an operand of the wrong shape; the schema rejects those in documents, so this
is for hand-built facts); the built-ins turn both into fail-closed rejects.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import Any

from litmus_rules.episode_format import PREDICATES, VERSION_1_1, as_predicate  # noqa: F401 - re-exported
from litmus_rules.errors import EvaluationError

# Elements compared pairwise by `unordered`: past this many on either side the match is unknown.
MAX_UNORDERED = 200


class PredicateError(EvaluationError):
    """A predicate whose operand has the wrong shape, or a comparison past a limit."""


# --- which reading: episode/1 (literal objects) or 1.1 (predicates) ---------------------------------

_READING: contextvars.ContextVar[bool] = contextvars.ContextVar("argument_predicates", default=False)


def reads_predicates(document: Any) -> bool:
    """Does this document's format give one-key objects in signal arguments predicate meaning?"""
    return isinstance(document, Mapping) and document.get("litmus") == VERSION_1_1


@contextlib.contextmanager
def episode_scope(document: Any) -> Iterator[None]:
    """Within it, signals are read as `document`'s format says (one evaluation of one episode)."""
    token = open_episode(document)
    try:
        yield
    finally:
        _READING.reset(token)


def open_episode(document: Any) -> contextvars.Token[bool]:
    """`episode_scope` without the context manager, for the per-episode hot path (RuleSet.evaluate):
    the scope lasts until `close_episode(token)`, which the caller must reach (try/finally)."""
    if document.__class__ is dict:  # (the abc check of `reads_predicates` is slow)
        return _READING.set(document.get("litmus") == VERSION_1_1)
    return _READING.set(reads_predicates(document))


# `close_episode(token)` ends the scope `open_episode` opened: the contextvar's own reset (a C
# call, not a Python frame, on the per-episode hot path)
close_episode = _READING.reset


def reading_predicates() -> bool:
    """The reading in force: True inside the scope of a 1.1 episode. Outside any scope, episode/1's."""
    return _READING.get()


def predicate_of(value: Any, predicates: bool | None = None) -> tuple[str, Any] | None:
    """(name, operand) when `value` is a predicate under the reading in force, else None."""
    if predicates is None:
        predicates = _READING.get()
    return as_predicate(value) if predicates else None


# --- equality ------------------------------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_value(expected: Any, actual: Any) -> bool:
    """Plain equality of a signal's value and a call's (see the module doc)."""
    if _number(expected) and _number(actual):
        return bool(expected == actual)
    from litmus_rules.domain.signals import same_argument_value

    return same_argument_value(expected, actual)


# --- predicates ----------------------------------------------------------------------------------


def satisfies(expected: Any, actual: Any, predicates: bool | None = None) -> bool:
    """Does `actual` (a call's argument, or a value the harness fills in) satisfy `expected` (a
    signal's argument: a plain value, or a predicate under the reading in force)?"""
    found = predicate_of(expected, predicates)
    if found is None:
        return same_value(expected, actual)
    name, operand = found
    if name == "equals":
        return same_value(operand, actual)
    if name == "contains":
        return _contains(operand, actual)
    if name == "regex":
        return _regex(operand, actual)
    if name == "any_of":
        if not isinstance(operand, list) or not operand:
            raise PredicateError(f"`any_of` expects a non-empty list of argument values, got {_what(operand)}")
        return any(satisfies(alt, actual, True) for alt in operand)
    return _unordered(operand, actual)


def _what(value: Any) -> str:
    return type(value).__name__ if value is not None else "null"


def _contains(operand: Any, actual: Any) -> bool:
    if operand is None or operand == "":
        raise PredicateError("`contains` expects a non-empty string or a non-null value")
    if isinstance(actual, str):
        if not isinstance(operand, str):
            return False
        if operand in actual:
            return True
        from litmus_rules.domain.transforms import full_normalise

        needle = full_normalise(operand)
        return bool(needle) and needle in full_normalise(actual)
    if isinstance(actual, list):
        return any(same_value(operand, item) for item in actual)
    return False


def _regex(operand: Any, actual: Any) -> bool:
    if not isinstance(operand, str) or not operand:
        raise PredicateError(f"`regex` expects a non-empty pattern, got {_what(operand)}")
    if not isinstance(actual, str):
        return False
    from litmus_rules.domain.regexes import regex_search

    return regex_search(operand, actual) is not None


def _unordered(operand: Any, actual: Any) -> bool:
    if not isinstance(operand, list):
        raise PredicateError(f"`unordered` expects a list, got {_what(operand)}")
    if not isinstance(actual, list) or len(actual) != len(operand):
        return False
    if len(operand) > MAX_UNORDERED:
        raise PredicateError(f"`unordered` compares lists of at most {MAX_UNORDERED} elements "
                             f"(predicates.MAX_UNORDERED); this one has {len(operand)}: unknown")
    # a multiset match: each expected element takes one equal element of the call's list
    # (augmenting paths, so that the order of the elements never decides)
    edges = [[j for j, item in enumerate(actual) if same_value(want, item)] for want in operand]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(place(i, set()) for i in range(len(operand)))
