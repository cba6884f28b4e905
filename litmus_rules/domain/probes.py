"""Probes: where to look for a test's candidates in texts joined by NUL (joined.py), per form of
the join, as literals and compiled RE2 patterns. `matching.py` builds the probes of its tests and
says why each is a superset: whenever the exact test succeeds on a joined text, the probe
matches in the segment of that text (or of one of its decoder outputs) of one of the joined forms
(joined.py's module doc).

A probe's literals are kept lean (`_plain_literals`): in the raw form, those that cannot occur in
a plain text (one no decoder changes) are kept apart (`Probe.escaped`, searched for only when a
decoder changes some text), and in any form those that hold a shorter one are dropped (wherever
they occur, so does the shorter one)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from litmus_rules.lang.records import record

# view key -> the form of a plain text holding it (joined.py)
KEY_FORM = {
    "raw": "raw", "format": "format", "tags": "tags", "nfkc": "nfkc", "casefold": "casefold",
    "normalised": "normalised", "skeleton": "skeleton", "skeleton-casefold": "skeleton-casefold",
    "path": "path", "path-casefold": "path-casefold",
}
FORMS = ("raw", "format", "tags", "nfkc", "casefold", "cleaned", "normalised", "skeleton",
         "skeleton-casefold", "path", "path-casefold")
PROBE_MAX_MEM = 64 << 20  # RE2 memory for alternations of many literals
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def _plain_literals(form: str, lits: Collection[str]) -> tuple[bytes, ...] | None:
    """The literals worth looking for in a form of plain texts, UTF-8 encoded (None: one is
    empty, so every text is a candidate). Dropped: in the raw form, those that cannot occur in a
    plain text (a backslash, a percent escape: such a text is not plain); in any form, those
    that contain another one (wherever they occur, so does the other)."""
    if len(lits) == 1 and form != "raw":  # the common case of a probe's forms
        (lit,) = lits
        if not lit:
            return None
        try:
            return (lit.encode("utf-8"),)
        except UnicodeEncodeError:  # a lone surrogate: texts holding one are never plain
            return ()
    usable = set(lits) if form != "raw" else {
        lit for lit in lits if "\\" not in lit and ("%" not in lit or not _PERCENT_ESCAPE.search(lit))}
    if "" in usable:
        return None
    kept: list[str] = []
    by_length: dict[int, set[str]] = {}  # the kept ones
    # by (length, text); only a shorter literal can be inside one (equal lengths: only equal)
    for length, same_length in itertools.groupby(sorted(sorted(usable), key=len), len):
        group = list(same_length)
        if kept:
            group = [lit for lit in group if not _holds_one(lit, by_length)]
        kept += group
        by_length[length] = set(group)
    try:
        return tuple(map(str.encode, kept))  # UTF-8
    except UnicodeEncodeError:  # a lone surrogate: texts holding one are never plain
        return tuple(lit.encode("utf-8") for lit in kept if not _has_surrogate(lit))


def _escaped_literals(lits: Iterable[str]) -> tuple[bytes, ...]:
    """The raw literals `_plain_literals` drops because no plain text can hold them (a backslash,
    a percent escape), UTF-8 encoded; those with a lone surrogate are left out (a text holding
    one is tested on its own, and a decoded text holding one makes its text so)."""
    out = []
    for lit in lits:
        if "\\" in lit or ("%" in lit and _PERCENT_ESCAPE.search(lit)):
            try:
                out.append(lit.encode("utf-8"))
            except UnicodeEncodeError:
                pass
    return tuple(sorted(out))


def _holds_one(lit: str, by_length: dict[int, set[str]]) -> bool:
    """Whether one of the (shorter) kept literals, by length, occurs in `lit`. For a length with
    few of them: a search for each, in C. With many short ones (the windows of a long token:
    20,000 of them made a signal of 20 KB take seconds, each searched in each long form of the
    token): each substring of `lit` of that length looked up in their set, linear in `lit`."""
    for length, group in by_length.items():
        if len(group) > max(_SEARCHES_PER_LENGTH, length):
            if not group.isdisjoint(lit[i:i + length] for i in range(len(lit) - length + 1)):
                return True
        elif any(map(lit.__contains__, group)):
            return True
    return False


# Past this many literals of one length (and more than their length), a lookup per position of
# the literal searched in costs less than a search per literal.
_SEARCHES_PER_LENGTH = 64


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@record
class Probe:
    """Where to look in the joined texts: per form, literals and compiled RE2 patterns.
    `every_text`: no filter is possible: every text is a candidate."""

    literals: tuple[tuple[str, tuple[bytes, ...]], ...] = ()
    patterns: tuple[tuple[str, Any], ...] = ()
    every_text: bool = False
    # the raw form's literals that no plain text holds (`_escaped_literals`): a text a decoder
    # changes may, and joined.py looks for them where it joins such texts
    escaped: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, literals: Mapping[str, Iterable[str]],
           patterns: Iterable[tuple[str, Any]] = ()) -> Probe:
        """A probe for these literals and compiled patterns, per form (FORMS)."""
        kept_literals = []
        escaped = _escaped_literals(literals.get("raw", ()))
        # forms often share a literal set (the case-preserving transforms of an ASCII token)
        done: dict[tuple[bool, frozenset[str]], tuple[bytes, ...] | None] = {}
        for form, lits in literals.items():
            key = (form == "raw", frozenset(lits))
            kept = done[key] if key in done else done.setdefault(key, _plain_literals(form, key[1]))
            if kept is None:
                return EVERY_TEXT
            if kept:
                kept_literals.append((form, kept))
        probe = cls(tuple(kept_literals), tuple(patterns), escaped=escaped)
        assert all(form in FORMS for form, _ in probe.literals + probe.patterns), probe
        return probe


@record(eq=False)
class PagedPattern:
    """An RE2 probe pattern, and how to get one exact on the characters of given 256-character
    pages (`regexes.regex_probe_on`: None when there is none). A join of non-ASCII texts is
    searched with the one for the pages its form holds: a superset on every text in it, as its
    characters are ASCII or in those pages, where the general pattern (which admits any non-ASCII
    character where a class is) matches almost everywhere in non-ASCII text."""

    pattern: Any
    on_pages: Callable[[tuple[int, ...]], Any]


NEVER = Probe()  # no text can match
EVERY_TEXT = Probe(every_text=True)
