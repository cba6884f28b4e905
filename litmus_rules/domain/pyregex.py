"""Python `re` semantics on engines with bounded time: a pattern rewritten for RE2 or `regex`.

A harness scores with Python's `re`, so a regex signal must match what `re` matches (DESIGN,
"Reading the note" 2): Unicode `\\d \\w \\s \\b`, `re`'s case-insensitive matching, `$` before a
final newline. RE2 (linear time) and the `regex` module (with a timeout) each define these
differently (RE2's classes are ASCII; `regex`'s `\\w` includes combining marks, its `\\s` lacks
\\x1c-\\x1f, its Unicode tables are newer). So a pattern is parsed by `re`'s own parser and
written out again with no construct whose meaning depends on the engine:

- every single-character matcher (a literal under ignorecase, a class, `\\d`, `.`, ...) becomes
  an explicit set of the characters `re` itself says it matches (`_members`), over the characters
  that can occur: all of ASCII, plus the non-ASCII characters of the text being searched (so a
  rewritten pattern is exact on that text, by construction);
- `\\b`/`\\B` become lookarounds over the explicit word set (RE2: its ASCII `\\b`, only on texts
  whose characters are all ASCII, where both agree); `^ $ \\A \\Z` are written per `re`'s
  definition with the flags in force at that point;
- groups keep their numbers, so backreferences and conditionals mean the same.

`Plan.of(pattern)` parses once; `plan.rewrite(engine, extra)` writes the pattern for "re2",
"regex" or "probe". A probe is an RE2 pattern that matches wherever the pattern matches in any text
(a superset: assertions dropped, backreferences as any text, non-ASCII characters all admitted):
what a search over many texts joined by NUL may use to find candidates (joined.py). A probe
written with `extra` characters is a superset on texts of ASCII and those characters only (its
classes are exact on them): what a search of one long non-ASCII text is filtered with (regexes.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

try:  # Python 3.11+
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser as P  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

I, A, S, M = C.SRE_FLAG_IGNORECASE, C.SRE_FLAG_ASCII, C.SRE_FLAG_DOTALL, C.SRE_FLAG_MULTILINE
ASCII = tuple(chr(i) for i in range(128))
RE2_MAX_REPEAT = 1000  # RE2 rejects larger counts
_CATEGORY_SRC = {
    C.CATEGORY_DIGIT: r"\d", C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_WORD: r"\w", C.CATEGORY_NOT_WORD: r"\W",
}
_RE2_UNSUPPORTED = {C.GROUPREF, C.GROUPREF_EXISTS, C.ASSERT, C.ASSERT_NOT, C.ATOMIC_GROUP,
                    C.POSSESSIVE_REPEAT}
_WORD = ((C.IN, [(C.CATEGORY, C.CATEGORY_WORD)]),)


def _esc(c: str) -> str:
    return f"\\U{ord(c):08x}"


def _matcher_source(op: Any, av: Any, flags: int) -> str:
    """A Python pattern for one single-character matcher, with the flags in force."""
    prefix = "(?" + "".join(f for f, bit in (("i", I), ("a", A), ("s", S)) if flags & bit) + ")"
    if op is C.LITERAL:
        body = _esc(chr(av))
    elif op is C.NOT_LITERAL:
        body = f"[^{_esc(chr(av))}]"
    elif op is C.ANY:
        body = "."
    else:  # IN
        parts = []
        for iop, iav in av:
            if iop is C.NEGATE:
                parts.insert(0, "^")
            elif iop is C.LITERAL:
                parts.append(_esc(chr(iav)))
            elif iop is C.RANGE:
                parts.append(f"{_esc(chr(iav[0]))}-{_esc(chr(iav[1]))}")
            elif iop is C.CATEGORY:
                parts.append(_CATEGORY_SRC[iav])
            else:  # pragma: no cover - the parser yields nothing else in a class
                raise ValueError(f"unexpected class item {iop}")
        body = "[" + "".join(parts) + "]"
    return (prefix if prefix != "(?)" else "") + body


@functools.lru_cache(maxsize=4096)
def _oracle(source: str) -> Any:
    return re.compile(source)


@functools.lru_cache(maxsize=4096)
def _ascii_members(source: str) -> tuple[str, ...]:
    match = _oracle(source).match
    return tuple(c for c in ASCII if match(c))


def _members(source: str, extra: str) -> list[str]:
    """The characters of ASCII and `extra` that `re` matches with the one-character `source`
    (one C-level scan of `extra`, whatever its size)."""
    found = _oracle(source).findall(extra) if extra else []
    return [*_ascii_members(source), *found]


def _ranges(chars: Sequence[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for o in sorted(map(ord, chars)):
        if out and o == out[-1][1] + 1:
            out[-1] = (out[-1][0], o)
        else:
            out.append((o, o))
    return out


def _set_char(o: int) -> str:
    """A character inside a `regex` class: as itself when that is safe (parsing escapes is slow)."""
    c = chr(o)
    if (c.isascii() and c.isalnum()) or (o > 0xFF and not 0xD800 <= o <= 0xDFFF):
        return c
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


def _set(chars: Sequence[str], engine: str, everything_else: bool = False) -> str:
    """A class of exactly `chars` (plus every non-ASCII character for a probe)."""
    ranges = _ranges(chars)
    if engine == "regex":
        if not ranges:
            return "(?!)"
        return "[" + "".join(_set_char(a) if a == b else f"{_set_char(a)}-{_set_char(b)}"
                             for a, b in ranges) + "]"
    def x(o: int) -> str:
        return f"\\x{{{o:x}}}"
    if everything_else:
        ranges = [r for r in ranges if r[0] < 128] + [(128, 0x10FFFF)]
        ranges = [(a, min(b, 127)) if a < 128 else (a, b) for a, b in ranges]
    if not ranges:
        return r"[^\x00-\x{10ffff}]"
    return "[" + "".join(x(a) if a == b else f"{x(a)}-{x(b)}" for a, b in ranges) + "]"


class Unsupported(Exception):
    """The pattern cannot be written for this engine (or this text) with the same meaning."""


class Plan:
    """A parsed pattern and what it holds, to rewrite it for an engine."""

    __slots__ = ("tree", "flags", "re2_ok", "has_boundary", "has_end", "ignorecase_backref")

    def __init__(self, tree: Any, flags: int) -> None:
        self.tree = tree
        self.flags = flags
        self.re2_ok = True
        self.has_boundary = False  # \b or \B: RE2's are ASCII-only
        self.has_end = False  # `$` without multiline: RE2 has no "before a final newline"
        self.ignorecase_backref = False
        self._scan(tree.data, flags)

    @classmethod
    def of(cls, pattern: str) -> Plan:
        """Parse with `re`'s parser (raises re.error, RecursionError, OverflowError...)."""
        compiled = re.compile(pattern)  # every check `re` makes, not only the parser's
        tree = P.parse(pattern, 0)
        return cls(tree, compiled.flags)

    def _scan(self, items: Any, flags: int) -> None:
        for op, av in items:
            if op in _RE2_UNSUPPORTED:
                self.re2_ok = False
            if op is C.AT:
                if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
                    self.has_boundary = True
                elif av is C.AT_END and not flags & M:
                    self.has_end = True
            elif op is C.GROUPREF and flags & I:
                self.ignorecase_backref = True
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
                if av[0] > RE2_MAX_REPEAT or (av[1] is not C.MAXREPEAT and av[1] > RE2_MAX_REPEAT):
                    self.re2_ok = False
                # A repeated body that can match empty: `re` and RE2 stop its iterations at
                # different points (`(?:\D|.*?)+` on "I0": "I" against "I0"), so RE2 is not exact
                elif av[1] is not C.MAXREPEAT and av[1] <= 1:
                    pass
                elif av[2].getwidth()[0] == 0:
                    self.re2_ok = False
            for sub, sub_flags in _children(op, av, flags):
                self._scan(sub.data if hasattr(sub, "data") else sub, sub_flags)

    def rewrite(self, engine: str, extra: str = "") -> str:
        """The pattern for `engine` ("re2", "regex", "probe"), exact on any text whose characters
        are ASCII or in `extra` (distinct non-ASCII characters; a probe: a superset on every
        text, or with `extra`, on those texts)."""
        return _Writer(engine, extra).sub(self.tree.data, self.flags)


def _children(op: Any, av: Any, flags: int) -> list[tuple[Any, int]]:
    if op is C.SUBPATTERN:
        return [(av[3], (flags | av[1]) & ~av[2])]
    if op is C.BRANCH:
        return [(b, flags) for b in av[1]]
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        return [(av[2], flags)]
    if op in (C.ASSERT, C.ASSERT_NOT):
        return [(av[1], flags)]
    if op is C.ATOMIC_GROUP:
        return [(av, flags)]
    if op is C.GROUPREF_EXISTS:
        return [(b, flags) for b in av[1:] if b is not None]
    return []


class _Writer:
    def __init__(self, engine: str, extra: str) -> None:
        self.engine = engine
        self.extra = extra
        self.probe = engine == "probe"
        self.sets: dict[str, str] = {}  # matcher source -> its class: a pattern repeats them

    def chars(self, op: Any, av: Any, flags: int) -> str:
        if op is C.LITERAL and not flags & I:
            c = chr(av)
            if c.isascii() and c.isalnum():
                return c
            return _esc(c) if self.engine == "regex" else _set([c], "re2")
        if op is C.ANY:
            return "(?s:.)" if flags & S else "[^\\n]"
        source = _matcher_source(op, av, flags)
        got = self.sets.get(source)
        if got is None:
            if self.probe and not self.extra:
                got = _set(_ascii_members(source), "re2", everything_else=True)
            elif self.probe:  # a probe for texts of these characters only: exact classes
                got = _set(_members(source, self.extra), "re2")
            else:
                got = _set(_members(source, self.extra), self.engine)
            self.sets[source] = got
        return got

    def word(self, flags: int) -> str:
        return self.chars(C.IN, _WORD[0][1], flags)

    def sub(self, items: Any, flags: int) -> str:
        return "".join(self.item(op, av, flags) for op, av in items)

    def item(self, op: Any, av: Any, flags: int) -> str:
        probe, regex_engine = self.probe, self.engine == "regex"
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return self.chars(op, av, flags)
        if op is C.SUBPATTERN:
            group, add, remove, p = av
            body = self.sub(p.data, (flags | add) & ~remove)
            return f"({body})" if group is not None and not probe else f"(?:{body})"
        if op is C.BRANCH:
            return "(?:" + "|".join(self.sub(b.data, flags) for b in av[1]) + ")"
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi, p = av
            if probe:
                lo, hi = min(lo, RE2_MAX_REPEAT), (hi if hi is C.MAXREPEAT or hi <= RE2_MAX_REPEAT
                                                    else C.MAXREPEAT)
            count = f"{{{lo},}}" if hi is C.MAXREPEAT else f"{{{lo},{hi}}}"
            suffix = "?" if op is C.MIN_REPEAT else ("+" if op is C.POSSESSIVE_REPEAT and not probe else "")
            return f"(?:{self.sub(p.data, flags)}){count}{suffix}"
        if op is C.ATOMIC_GROUP:
            body = self.sub(av.data, flags)
            return f"(?:{body})" if probe else f"(?>{body})"
        if op is C.GROUPREF:
            if probe:
                return "(?s:.*)"
            return f"(?i:\\g<{av}>)" if flags & I else f"\\g<{av}>"
        if op is C.GROUPREF_EXISTS:
            group, yes, no = av
            yes_s = self.sub(yes.data, flags)
            no_s = self.sub(no.data, flags) if no is not None else ""
            return f"(?:{yes_s}|{no_s})" if probe else f"(?({group}){yes_s}|{no_s})"
        if op in (C.ASSERT, C.ASSERT_NOT):
            if probe:
                return ""
            direction, p = av
            kind = ("=" if op is C.ASSERT else "!")
            return f"(?{'<' if direction < 0 else ''}{kind}{self.sub(p.data, flags)})"
        if op is C.AT:
            return "" if probe else self.anchor(av, flags, regex_engine)
        raise Unsupported(f"construct {op}")  # pragma: no cover - FAILURE etc.

    def anchor(self, av: Any, flags: int, regex_engine: bool) -> str:
        if av is C.AT_BEGINNING_STRING or (av is C.AT_BEGINNING and not flags & M):
            return r"\A"
        if av is C.AT_BEGINNING:
            return r"(?:\A|(?<=\n))" if regex_engine else "(?m:^)"
        if av is C.AT_END_STRING:
            return r"\Z" if regex_engine else r"\z"
        if av is C.AT_END:
            if flags & M:
                return r"(?=\n|\Z)" if regex_engine else "(?m:$)"
            return r"(?=\n?\Z)" if regex_engine else r"\z"  # RE2: only on texts not ending in \n
        if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            if not regex_engine:  # RE2: only on ASCII texts, where its \b is `re`'s
                return r"\b" if av is C.AT_BOUNDARY else r"\B"
            w = self.word(flags)
            if av is C.AT_BOUNDARY:
                return f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))"
            # `re` finds no \B in an empty text
            return f"(?!\\A\\Z)(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"
        raise Unsupported(f"anchor {av}")  # pragma: no cover
