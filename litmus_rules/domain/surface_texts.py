"""The texts of a list of surfaces, read as a rule's loop over `t.text` reads them (which element
is unknown, which fails, where the loop stops), with what a `leak` / `collision` call over them
costs: what builtins.py's surface built-ins decide by. A RuleSet keeps the last few lists read."""

from __future__ import annotations

import itertools
import operator
from typing import Any

from litmus_rules.cache import BoundedCache
from litmus_rules.lang.records import record
from litmus_rules.lang.values import UNKNOWN, type_name

__all__ = ["RECENT_SURFACE_LISTS", "Recent", "SurfaceTexts", "each_surface_text", "plain_surface_texts",
           "surface_texts"]


@record
class SurfaceTexts:
    """The texts of a list of surfaces as a loop reading `t.text` over it sees them, in order.

    Per element, `any t in surfaces: leaks(token, t.text)` (or `collides`) is: an error where `t`
    is neither an object nor null (`t.text` fails); unknown where `t` is null or has no `text`,
    or where another argument is unknown; an error where `text` is not a string (the built-in's
    argument check); else the search. The loop stops at the first true or the first error."""

    texts: tuple[str, ...]  # the string texts before `hard`
    owners: tuple[int, ...]  # index in the list of each text's surface
    unknown: tuple[int, ...]  # elements before `hard` whose text is unknown (null element, no `text`)
    soft: tuple[int, str] | None  # the first element before `hard` whose `text` is not a string
    hard: tuple[int, str] | None  # the first element that is neither an object nor null
    count: int  # elements before `hard`
    cost: int


# The last few lists read, with their texts (a RuleSet's cache, keyed by the list's id): a call's
# cost reads its list, then the call does, then the next call over the same list (rule values are
# never changed in place; the length and end elements are compared all the same).
RECENT_SURFACE_LISTS = 4
Recent = BoundedCache[tuple[list[Any], int, Any, Any, SurfaceTexts]]


def surface_texts(surfaces: Any, recent: Recent | None = None) -> SurfaceTexts:
    if recent is not None and isinstance(surfaces, list):
        hit = recent.get(id(surfaces))
        if hit is not None:
            held, size, first, last, known = hit
            if held is surfaces and len(held) == size and (not size or (held[0] is first and held[-1] is last)):
                return known
    found = plain_surface_texts(surfaces) if isinstance(surfaces, list) else None
    if found is None:
        found = each_surface_text(surfaces)
    if recent is not None and isinstance(surfaces, list):
        ends = (surfaces[0], surfaces[-1]) if surfaces else (None, None)
        recent.put(id(surfaces), (surfaces, len(surfaces), *ends, found))
    return found


_TEXT = operator.itemgetter("text")


def plain_surface_texts(surfaces: list[Any]) -> SurfaceTexts | None:
    """The common case in C-level passes: every element a dict whose `text` is a string (the
    `surfaces` fact, a list made of it); None otherwise (`each_surface_text` tells why)."""
    if not surfaces or {*map(type, surfaces)} != {dict}:
        return None
    try:
        texts = tuple(map(_TEXT, surfaces))
    except KeyError:
        return None
    if {*map(type, texts)} != {str}:
        return None
    n = len(texts)
    cost = 4 * (n + sum(map(operator.rshift, map(len, texts), itertools.repeat(6, n))))  # len // 64 each
    return SurfaceTexts(texts, tuple(range(n)), (), None, None, n, max(cost, 1))


def each_surface_text(surfaces: Any) -> SurfaceTexts:
    texts: list[str] = []
    owners: list[int] = []
    unknown: list[int] = []
    soft = hard = None
    count = 0
    for i, s in enumerate(surfaces if isinstance(surfaces, list) else ()):
        if s is None:
            unknown.append(i)
        elif not isinstance(s, dict):
            hard = (i, f"surface {i} is {_a(type_name(s))}, not an object with a `text`")
            break
        else:
            text = s.get("text", UNKNOWN)
            if isinstance(text, str):
                texts.append(text)
                owners.append(i)
            elif text is UNKNOWN:
                unknown.append(i)
            elif soft is None:
                soft = (i, f"the `text` of surface {i} is {type_name(text)}, not a string")
        count = i + 1
    # what one call of `collides` or `leaks` per text charges (less the token's length)
    cost = 4 * (len(texts) + sum(len(x) // 64 for x in texts))
    return SurfaceTexts(tuple(texts), tuple(owners), tuple(unknown), soft, hard, count, max(cost, 1))


def _a(name: str) -> str:
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"
