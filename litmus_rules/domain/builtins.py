"""The domain's built-in functions: transcripts, leaks, collisions, tool calls and names.

They register into the domain's table, built on the language's general built-ins
(lang/builtins.py, which also states the contract of a built-in); domain/environment.py makes the
environment the engine checks and evaluates rules in from this table.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from litmus_rules.cache import BoundedCache
from litmus_rules.domain.surface_texts import Recent, surface_texts
from litmus_rules.lang import builtins as lang_builtins
from litmus_rules.lang import types as t
from litmus_rules.lang.builtins import Builtin, Param, registrar, text_cost
from litmus_rules.lang.builtins import need as _need
from litmus_rules.lang.records import replace
from litmus_rules.lang.values import UNKNOWN, EvalFailure, Found, short_repr, type_name

if TYPE_CHECKING:
    from litmus_rules.domain.signals import StoppedWalks

# The language's general built-ins, then the domain's (in this order: the order of `rules info`).
REGISTRY: dict[str, Builtin] = dict(lang_builtins.REGISTRY)
builtin = registrar(REGISTRY)


@builtin(
    "matches",
    [Param("text", t.STR), Param("pattern", t.STR), Param("flags", t.list_of(t.STR), ())],
    t.BOOL,
    "Does the regex match somewhere in the text? Linear-time engine where the pattern allows, "
    "otherwise a time limit; a pattern that cannot be evaluated in bounded time is unknown.",
    cost=text_cost,
)
def _matches(text: Any, pattern: Any, flags: Any = ()) -> Any:
    from litmus_rules.domain.matching import RegexUnknown, regex_search

    _need(text, str, "a string", "matches")
    _need(pattern, str, "a string", "matches")
    try:
        return regex_search(pattern, text, tuple(flags)) is not None
    except RegexUnknown as exc:
        raise EvalFailure(str(exc)) from None


# ---- domain: transcripts, leaks and collisions -----------------------------------------------------
# The matching itself lives in `normalize.py` and `matching.py`; these wrappers give it to rules.

WITNESS = t.union(
    t.obj({"transform": t.STR, "offset": t.NUM, "matched": t.STR}, closed=False), t.BOOL
)
SIGNAL = t.obj({}, closed=False)


def _found(witness: Any) -> Any:
    if witness is None or witness is False:
        return False
    return Found(witness.to_fact() if hasattr(witness, "to_fact") else witness)


@builtin(
    "transcript_text",
    [Param("transcript", t.ANY)],
    t.STR,
    "The text of a transcript: a string as it is, or the contents of a list of messages joined by newlines.",
    cost=lambda args: 1 + sum(len(str(a)) // 256 for a in args),
)
def _transcript_text(transcript: Any) -> str:
    from litmus_rules.domain.records import transcript_text

    return transcript_text(transcript)


@builtin(
    "leaks",
    [Param("token", t.STR), Param("text", t.STR)],
    WITNESS,
    "Does the token occur in the text under any normalisation or decoding (case, zero-width, "
    "confusables, NFKC, base64, hex, percent- and JSON-escapes, HTML entities, paths, encodings "
    "written in groups, escapes nested across kinds, CSS escapes, gzip or zlib data, markup and line "
    "wraps inside a word; a token of 8+ characters backwards or in ROT13 too)? The witness names the "
    "transform that revealed it.",
    cost=lambda args: 4 * text_cost(args),
)
def _leaks(token: Any, text: Any) -> Any:
    from litmus_rules.domain.decoding import LimitUnknown, size_text
    from litmus_rules.domain.matching import leaks

    _need(token, str, "a string", "leaks")
    _need(text, str, "a string", "leaks")
    _visible_token("leaks", token)
    try:
        return _found(leaks(token, text))
    except LimitUnknown as exc:  # a form of the text could not be derived: unknown, not false
        raise _limit("leaks", exc, "the token", f"the text ({size_text(len(text))})") from None


def _visible_token(fn: str, token: Any) -> None:
    """A token that is empty once normalised (only whitespace or invisible characters) is found in
    no text by the search (`matching.leaks`: it would be found in any): asked whether it leaks,
    the answer is unknown, not false, so the rule rejects rather than passing a sentinel that
    cannot be told apart from any text. (A token that cannot be normalised within a limit is left
    to the search, whose message names the limit.)"""
    from litmus_rules.domain.decoding import LimitUnknown
    from litmus_rules.domain.normalize import blank

    if not isinstance(token, str):
        return
    try:
        empty = blank(token)
    except LimitUnknown:
        return
    if empty:
        raise EvalFailure(f"`{fn}`: the token {short_repr(token)} is empty once normalised (only whitespace or "
                          "invisible characters): it would be found in any text, so whether it leaks cannot be "
                          "decided")


# A word is common (its partial overlap does not count) above this Zipf frequency: partial.py.
COMMON_ZIPF = 3.0


@builtin(
    "collides",
    [Param("signal", SIGNAL), Param("text", t.STR), Param("min_len", t.NUM, 6),
     Param("common_zipf", t.NUM, COMMON_ZIPF)],
    WITNESS,
    "Does a substring or regex signal match the text or a decoded form of it (the scorer applied to "
    "what the agent received), or overlap it partially by at least `min_len` characters with a "
    "distinctive shared text (identifier-shaped, two or more words, or a word whose Zipf "
    "frequency is at most `common_zipf`)? The witness's `kind` is `full` or `partial`.",
    cost=lambda args: 4 * text_cost(args),
)
def _collides(signal: Any, text: Any, min_len: Any = 6, common_zipf: Any = COMMON_ZIPF) -> Any:
    from litmus_rules.domain.decoding import LimitUnknown, size_text
    from litmus_rules.domain.matching import RegexUnknown, collides

    _need(signal, dict, "a signal object", "collides")
    _need(text, str, "a string", "collides")
    _need(common_zipf, (int, float), "a number for `common_zipf`", "collides")
    try:
        return _found(collides(signal, text, int(min_len), float(common_zipf)))
    except RegexUnknown as exc:
        raise EvalFailure(str(exc)) from None
    except LimitUnknown as exc:  # a form of the text could not be derived: unknown, not false
        raise _limit("collides", exc, "the signal's value", f"the text ({size_text(len(text))})") from None


SURFACES = t.list_of(t.obj({"text": t.STR, "origin": t.STR}, closed=False))
# The built-ins whose witness carries `witnesses`, ranked: a reject's reason lists them (engine.py).
WITNESS_BUILTINS = frozenset({"leak", "collision"})
LISTED_WITNESS = t.obj({"origin": t.STR, "injected": t.BOOL, "transform": t.STR, "kind": t.STR,
                        "matched": t.STR}, closed=False)
SURFACE_WITNESS = t.union(
    t.obj({"transform": t.STR, "offset": t.NUM, "matched": t.STR, "kind": t.STR, "origin": t.STR,
           "injected": t.BOOL, "witnesses": t.list_of(LISTED_WITNESS)}, closed=False), t.BOOL
)


def _limit(fn: str, exc: Exception, needle: str, text: str) -> EvalFailure:
    """The failure of built-in `fn` whose search met a limit (decoding.LimitUnknown): it names
    the side that met it, what was searched for (`needle`) or the text searched in."""
    return EvalFailure(f"`{fn}`: {needle if getattr(exc, 'needle', False) else text}: {exc}")


def _strongest_surface(fn: str, surfaces: Any, known: bool,
                       search: Callable[[tuple[str, ...], Callable[[], tuple[bool, ...]]], Any],
                       recent: Recent | None, haystacks: BoundedCache[Any] | None, needle: str) -> Any:
    """The strongest witness `search` finds (witnesses.py: ranked, with each surface's `origin`
    and `injected`), decided as `any t in surfaces: <per-text built-in>(..., t.text)` would be
    (see surface_texts.SurfaceTexts): true at the first hit, unless an error comes first; else unknown if an
    element was unknown; else false. `known`: every other argument is known (else `search` is
    not run, as the per-text built-in is not called). Null surfaces are unknown, as the loop
    over them is. The surfaces' `injected` flags are read only when there is a hit to rank.
    `needle`: what is searched for, as a message names it ("the token")."""
    from litmus_rules.domain.decoding import LimitUnknown, size_text

    if surfaces is UNKNOWN or surfaces is None:
        return UNKNOWN
    _need(surfaces, list, "a list of surfaces", fn)
    st = surface_texts(surfaces, recent)
    if not known:
        if st.hard is not None:
            raise EvalFailure(f"`{fn}`: {st.hard[1]}")
        return UNKNOWN if st.count else False
    stop = st.soft if st.soft is not None else st.hard
    texts = st.texts
    if st.soft is not None:  # only the texts before the element the loop fails at
        texts = texts[: bisect.bisect_left(st.owners, st.soft[0])]
    flags: list[tuple[bool, ...]] = []

    def injected() -> tuple[bool, ...]:
        if not flags:
            flags.append(tuple(surfaces[i].get("injected") is True for i in st.owners[: len(texts)]))
        return flags[0]

    try:
        if not texts:
            found = None
        elif haystacks is not None:
            from litmus_rules.domain.joined import using_haystacks

            with using_haystacks(haystacks):
                found = search(texts, injected)
        else:
            found = search(texts, injected)
    except LimitUnknown as exc:  # a form of one text could not be derived: unknown, not false
        index = getattr(exc, "index", None)
        origin = surfaces[st.owners[index]].get("origin") if index is not None else None
        where = origin if isinstance(origin, str) else "the text of a surface"
        size = f" ({size_text(len(texts[index]))})" if index is not None else ""
        raise _limit(fn, exc, needle, where + size) from None
    if found:
        from litmus_rules.domain.witnesses import surface_fact

        return _found(surface_fact(found, [surfaces[i] for i in st.owners], injected()))
    if stop is not None:
        raise EvalFailure(f"`{fn}` expects surfaces (objects with a string `text`): {stop[1]}")
    return UNKNOWN if st.unknown else False


@builtin(
    "leak",
    [Param("token", t.STR), Param("surfaces", SURFACES)],
    SURFACE_WITNESS,
    "Does the token leak into some surface (as `leaks(token, t.text)` for some `t`)? The "
    "strongest witness (verbatim before decoded, injected surfaces first), with the surface's "
    "`origin` and `injected`, and `witnesses`: up to five, strongest first; false when none.",
    sees_unknown=True,  # to decide like the loop it replaces: false on no surfaces, whatever the token
    cost=lambda args, recent=None: surface_texts(args[1], recent).cost + 4 * len(
        surface_texts(args[1], recent).texts) * (len(args[0]) // 64 if isinstance(args[0], str) else 0),
)
def _leak(token: Any, surfaces: Any, *, recent: Recent | None = None, haystacks: BoundedCache[Any] | None = None) -> Any:
    from litmus_rules.domain.witnesses import ranked_leaks

    def search(texts: tuple[str, ...], injected: Callable[[], tuple[bool, ...]]) -> Any:
        _need(token, str, "a string", "leak")
        _visible_token("leak", token)  # (where the loop would call `leaks`: there is a text)
        return ranked_leaks(token, texts, injected)

    return _strongest_surface("leak", surfaces, token is not UNKNOWN, search, recent, haystacks, "the token")


@builtin(
    "collision",
    [Param("signal", SIGNAL), Param("surfaces", SURFACES), Param("min_len", t.NUM, 6),
     Param("common_zipf", t.NUM, COMMON_ZIPF)],
    SURFACE_WITNESS,
    "Does a substring or regex signal collide with some surface (as `collides(signal, t.text, "
    "min_len, common_zipf)` for some `t`)? The strongest witness (verbatim before decoded before "
    "partial, injected surfaces first), with the surface's `origin` and `injected`, and "
    "`witnesses`: up to five, strongest first; false when none.",
    sees_unknown=True,  # to decide like the loop it replaces: false on no surfaces, whatever the signal
    cost=lambda args, recent=None: surface_texts(args[1], recent).cost,
)
def _collision(signal: Any, surfaces: Any, min_len: Any = 6, common_zipf: Any = COMMON_ZIPF, *,
               recent: Recent | None = None, haystacks: BoundedCache[Any] | None = None) -> Any:
    from litmus_rules.domain.matching import RegexUnknown
    from litmus_rules.domain.witnesses import ranked_collisions

    def search(texts: tuple[str, ...], injected: Callable[[], tuple[bool, ...]]) -> Any:
        _need(signal, dict, "a signal object", "collision")
        _need(common_zipf, (int, float), "a number for `common_zipf`", "collision")
        try:
            return ranked_collisions(signal, texts, int(min_len), injected, float(common_zipf))
        except RegexUnknown as exc:
            raise EvalFailure(str(exc)) from None

    known = signal is not UNKNOWN and min_len is not UNKNOWN and common_zipf is not UNKNOWN
    return _strongest_surface("collision", surfaces, known, search, recent, haystacks, "the signal's value")


@builtin(
    "fillable_call",
    [Param("signal", SIGNAL), Param("tools", t.list_of(t.ANY))],
    WITNESS,
    "For a tool_call signal: does the harness fill in every argument value it names by itself (a "
    "default, const or one-value enum of that argument in that tool's schema), so that calling the "
    "tool without choosing anything satisfies it? The witness: argument, expected, value, origin, "
    "transform.",
    cost=lambda args: 1 + sum(len(a) for a in args if isinstance(a, list)),
)
def _fillable_call(signal: Any, tools: Any, *, stopped: StoppedWalks | None = None) -> Any:
    from litmus_rules.domain.decoding import LimitUnknown
    from litmus_rules.domain.signals import fillable_call
    from litmus_rules.errors import EvaluationError

    _need(signal, dict, "a signal object", "fillable_call")
    _need(tools, list, "a list of tools", "fillable_call")
    try:
        return _found(fillable_call(signal, tools, stopped))
    except (LimitUnknown, EvaluationError) as exc:  # a value not decoded, a regex not settled: unknown
        raise EvalFailure(f"`fillable_call`: {exc}") from None


@builtin(
    "call_matches",
    [Param("signal", SIGNAL), Param("record", t.obj({}, closed=False))],
    t.BOOL,
    "Does a dispatch record call the signal's tool with every argument value the signal names "
    "(paths compared canonically, numbers as numbers; in an episode/1.1 episode an argument may be "
    "a predicate: equals, contains, regex, any_of, unordered)? Unknown when the record's "
    "`arguments` stayed an unparsed text.",
)
def _call_matches(signal: Any, record: Any) -> Any:
    from litmus_rules.domain.records import call_matches
    from litmus_rules.errors import EvaluationError

    _need(signal, dict, "a signal object", "call_matches")
    _need(record, dict, "a dispatch record", "call_matches")
    try:
        found = call_matches(signal, record)
    except EvaluationError as exc:  # a value not decoded, a regex not settled: unknown, not false
        raise EvalFailure(f"`call_matches`: {exc}") from None
    return UNKNOWN if found is None else found  # the record's arguments stayed an unparsed text


# ---- episode/1.1: the state channel -------------------------------------------------------------


def _state_failure(fn: str, exc: Exception) -> EvalFailure:
    from litmus_rules.domain.state import StateUnknown

    what = "unknown" if isinstance(exc, StateUnknown) else "cannot be evaluated"
    return EvalFailure(f"`{fn}` ({what}): {exc}")


@builtin(
    "state_holds",
    [Param("query", t.STR), Param("snapshot", t.ANY)],
    t.BOOL,
    "Is the JMESPath query truthy on the state snapshot (JMESPath truthiness: null, false, \"\", [] "
    "and {} are false)? A query or snapshot past its size limit is unknown, naming the limit; a "
    "query that does not parse, fails or runs out of steps cannot be evaluated: both reject.",
    cost=lambda args: 1 + sum(len(str(a)) // 256 for a in args),
)
def _state_holds(query: Any, snapshot: Any) -> bool:
    from litmus_rules.domain.state import state_holds
    from litmus_rules.errors import EvaluationError

    _need(query, str, "a JMESPath query (a string)", "state_holds")
    try:
        return state_holds(query, snapshot)
    except EvaluationError as exc:
        raise _state_failure("state_holds", exc) from None


@builtin(
    "state_query_ok",
    [Param("query", t.STR)],
    t.BOOL,
    "True when the JMESPath query parses and is within the query length limit; otherwise the "
    "call cannot be evaluated (a query past the limit is unknown, naming it), which rejects.",
)
def _state_query_ok(query: Any) -> bool:
    from litmus_rules.domain.state import check_query
    from litmus_rules.errors import EvaluationError

    _need(query, str, "a JMESPath query (a string)", "state_query_ok")
    try:
        check_query(query)
    except EvaluationError as exc:
        raise _state_failure("state_query_ok", exc) from None
    return True


@builtin(
    "fillable_values",
    [Param("values", t.list_of(t.ANY)), Param("tools", t.list_of(t.ANY))],
    WITNESS,
    "For a state signal's `values`: is every one a value the harness fills in by itself (a "
    "default, const or one-value enum of an argument of some tool), so that calling the tool "
    "without choosing anything changes the state as the check expects? The witness: value, "
    "origin, argument, filled, transform, values.",
    cost=lambda args: 1 + sum(len(a) for a in args if isinstance(a, list)),
)
def _fillable_values(values: Any, tools: Any, *, stopped: StoppedWalks | None = None) -> Any:
    from litmus_rules.domain.decoding import LimitUnknown
    from litmus_rules.domain.signals import fillable_values

    _need(values, list, "a list of values", "fillable_values")
    _need(tools, list, "a list of tools", "fillable_values")
    try:
        return _found(fillable_values(values, tools, stopped))
    except LimitUnknown as exc:  # a value could not be decoded: unknown, not false
        raise EvalFailure(f"`fillable_values`: {exc}") from None


@builtin(
    "final_message",
    [Param("transcript", t.ANY)],
    t.STR,
    "What a `scope: final_message` scorer reads: the text of the last assistant message of a list "
    "of messages (\"\" when there is none), or a string transcript whole.",
    cost=lambda args: 1 + sum(len(str(a)) // 256 for a in args),
)
def _final_message(transcript: Any) -> str:
    from litmus_rules.domain.records import final_message_text

    try:
        return final_message_text(transcript)
    except TypeError as exc:
        raise EvalFailure(f"`final_message`: {exc}") from None


@builtin(
    "overlap",
    [Param("a", t.STR), Param("b", t.STR), Param("min_len", t.NUM, 40)],
    WITNESS,
    "Do the two texts share a verbatim run of at least `min_len` characters (after whitespace and case "
    "are normalised)? The witness holds the shared run.",
    cost=lambda args: 2 * text_cost(args),
)
def _overlap(a: Any, b: Any, min_len: Any = 40) -> Any:
    _need(a, str, "a string", "overlap")
    _need(b, str, "a string", "overlap")
    n = max(1, int(min_len))
    x, y = " ".join(a.casefold().split()), " ".join(b.casefold().split())
    if len(x) < n or len(y) < n:
        return False
    # Index every n-character window of the shorter text, then slide over the longer one.
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    windows = {short[i : i + n] for i in range(len(short) - n + 1)}
    for i in range(len(long_) - n + 1):
        window = long_[i : i + n]
        if window in windows:
            return _found({"transform": "whitespace and case normalised", "offset": i, "matched": window})
    return False


@builtin(
    "mentions",
    [Param("name", t.STR), Param("text", t.STR), Param("anywhere", t.BOOL, False)],
    WITNESS,
    "Is a tool or skill name mentioned in the text at identifier boundaries (not preceded or "
    "followed by a letter, digit or `_` in the form where it is found; `-` and `.` are "
    "boundaries), under the normalisations and decodings of `leaks` (not backwards or in ROT13: "
    "what the text says, not what can be derived from it)? `export_calendar` is not mentioned in "
    "`export_calendar_v2`. With `anywhere: true` a canary matches anywhere. The witness names the "
    "transform that revealed it, and `searched` says how: \"as a canary, anywhere\" or \"as a "
    "name, at identifier boundaries\".",
    cost=lambda args: 4 * text_cost(args),
)
def _mentions(name: Any, text: Any, anywhere: Any = False) -> Any:
    from litmus_rules.domain.decoding import LimitUnknown, size_text
    from litmus_rules.domain.names import mentioned

    _need(name, str, "a string", "mentions")
    _need(text, str, "a string", "mentions")
    _need(anywhere, bool, "a boolean", "mentions")
    if anywhere:  # (it is then `leaks`; a blank name is mentioned nowhere)
        _visible_token("mentions", name)
    try:
        witness = mentioned(name, text, anywhere)
    except LimitUnknown as exc:  # a form of the text could not be derived: unknown, not false
        raise _limit("mentions", exc, "the token" if anywhere else "the name",
                     f"the text ({size_text(len(text))})") from None
    if witness is None:
        return False
    searched = "as a canary, anywhere" if anywhere else "as a name, at identifier boundaries"
    return _found({**witness.to_fact(), "searched": searched})


@builtin(
    "declared_unknown",
    [Param("unknowns", t.ANY), Param("pointer", t.STR)],
    t.BOOL,
    "Did the producer declare the fact at this JSON pointer unknown: does an entry of the episode's "
    "`unknowns` name it, a document above it, or a part of it? False when `unknowns` is absent. "
    "For facts whose absence has a meaning (an absent list of `context` is an empty one).",
    sees_unknown=True,
)
def _declared_unknown(unknowns: Any, pointer: Any) -> bool:
    _need(pointer, str, "a JSON pointer", "declared_unknown")
    if unknowns is UNKNOWN:  # no `unknowns`: nothing declared
        return False
    _need(unknowns, list, "a list of {path, note}", "declared_unknown")
    from litmus_rules.domain.unknowns import Declared, parse_pointer, related

    wanted = Declared(pointer, parse_pointer(pointer) or (), "")
    for entry in unknowns:
        path = entry.get("path") if isinstance(entry, Mapping) else None
        if not isinstance(path, str):
            raise EvalFailure(f"`declared_unknown`: an entry of `unknowns` has no path: {type_name(entry)}")
        if path == "":  # the whole document
            return True
        tokens = parse_pointer(path)  # a malformed pointer names nothing, as when the engine masks
        if tokens is not None and related(wanted, tokens):
            return True
    return False


# The built-ins that keep per-episode work in caches their RuleSet owns.
_CACHED = ("leak", "collision")
_WALKING = ("fillable_call", "fillable_values")
STOPPED_TOOLS = 4  # entries of the cache of tool walks that stopped at a limit (signals._walked)


def with_caches(table: Mapping[str, Builtin], recent: Recent, haystacks: BoundedCache[Any],
                stopped: StoppedWalks | None = None) -> dict[str, Builtin]:
    """The table, with the built-ins that cache work bound to these caches (a RuleSet's)."""
    out = dict(table)
    for name in _CACHED:
        b = out.get(name)
        if b is None or b.impl not in (_leak, _collision):  # replaced (a test's stand-in): as it is
            continue
        cost = functools.partial(b.cost, recent=recent) if b.cost is not None else None
        out[name] = replace(b, impl=functools.partial(b.impl, recent=recent, haystacks=haystacks), cost=cost)
    for name in _WALKING if stopped is not None else ():
        b = out.get(name)
        if b is None or b.impl not in (_fillable_call, _fillable_values):
            continue
        out[name] = replace(b, impl=functools.partial(b.impl, stopped=stopped))
    return out
