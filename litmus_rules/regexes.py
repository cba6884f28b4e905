"""Bounded-time regex search, and the literal text of a regex.

`regex_search` runs a pattern in linear time with RE2 when the pattern allows, else with the
`regex` module under a timeout; a pattern that cannot be settled raises `RegexUnknown`, which the
rules treat as unknown (fail closed). `regex_literals` lists the literal runs of a pattern (what a
partial-overlap test compares with a text). `joinable` says when a pattern may be searched in many
texts joined by NUL characters at once without missing a match of any single one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import re2
import regex

from litmus_rules.errors import EvaluationError

REGEX_TIMEOUT = 0.05  # seconds per search with the backtracking engine
MAX_PATTERN_LEN = 10_000


class RegexUnknown(EvaluationError):
    """A regex could not be evaluated (invalid, too long, or not finished in bounded time)."""


_FLAG_LETTERS = {
    "ignorecase": "i", "i": "i", "multiline": "m", "m": "m", "dotall": "s", "s": "s",
}


def _short(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")


@functools.lru_cache(maxsize=256)
def _flag_prefix(pattern: str, flags: tuple[str, ...]) -> str:
    letters = set()
    for f in flags:
        letter = _FLAG_LETTERS.get(str(f).lower())
        if letter is None:
            raise RegexUnknown(f"regex {_short(pattern)} has an unknown flag {f!r} "
                               "(known: ignorecase, multiline, dotall)")
        letters.add(letter)
    return f"(?{''.join(sorted(letters))})" if letters else ""


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # failures fall back to the regex module; don't spam stderr


@functools.lru_cache(maxsize=512)
def _compile(pattern: str, prefix: str) -> tuple[str, Any]:
    """("re2", compiled) | ("regex", compiled) | ("error", message): errors are cached too."""
    if len(pattern) > MAX_PATTERN_LEN:
        return ("error", f"regex pattern is {len(pattern)} characters long "
                         f"(limit {MAX_PATTERN_LEN}); treated as unknown")
    try:
        return ("re2", re2.compile(prefix + pattern, _RE2_OPTIONS))
    except (re2.error, UnicodeEncodeError):
        pass  # backreferences, lookaround, lone surrogates...: try the timed engine
    try:
        return ("regex", regex.compile(prefix + pattern, regex.V0))
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return ("error", f"invalid regex {_short(pattern)}: {exc}")


_SURROGATES = re.compile("[\ud800-\udfff]")


def regex_search(pattern: str, text: str, flags: Sequence[str] = ()) -> tuple[int, str] | None:
    """First match of `pattern` in `text` as (offset, matched text), or None.

    RE2 (linear time) when the pattern compiles there; otherwise the `regex` module with a
    REGEX_TIMEOUT-second limit. Raises RegexUnknown when the pattern is invalid, longer than
    MAX_PATTERN_LEN, or the search does not finish in time.
    Known differences from Python's `re` under RE2: \\w, \\d, \\s, \\b are ASCII-only, and `$`
    without multiline matches only at the very end (not before a final newline).
    """
    engine, compiled = _compile(pattern, _flag_prefix(pattern, tuple(flags)))
    if engine == "error":
        raise RegexUnknown(compiled)
    if engine == "re2":
        try:
            m = compiled.search(text)
        except UnicodeEncodeError:
            # Lone surrogates cannot be UTF-8 encoded for RE2; one-for-one replacement keeps offsets.
            m = compiled.search(_SURROGATES.sub("\ufffd", text))
    else:
        try:
            m = compiled.search(text, timeout=REGEX_TIMEOUT)
        except TimeoutError:
            raise RegexUnknown(
                f"regex {_short(pattern)} did not finish within {REGEX_TIMEOUT} s on "
                f"{len(text)} characters; treated as unknown"
            ) from None
    if m is None:
        return None
    return m.start(), m.group()


def regex_literals(pattern: str) -> list[str]:
    """Literal runs of a regex, longest first: text that a match of (a branch of) it contains.

    Conservative and simple: escaped punctuation is literal; metacharacters, classes, groups
    and escapes like \\d end a run; a character made optional by ?, * or {0,...} is dropped.
    Runs from every alternative and optional group are kept (an overlap with any is suspicious).
    """
    runs: list[str] = []
    cur: list[str] = []

    def flush() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            nxt = pattern[i + 1 : i + 2]
            if nxt and not nxt.isalnum():
                cur.append(nxt)
            else:
                flush()  # \d \w \b \1 \n \x41 ...: not a plain literal character
            i += 2
        elif c == "[":
            flush()
            i = _skip_class(pattern, i)
        elif c in "*?":
            if cur:
                cur.pop()
            flush()
            i += 1
        elif c == "{" and (quant := re.match(r"\{(\d*)(,\d*)?\}", pattern[i:])):
            if quant.group(1) in ("", "0") and cur:
                cur.pop()
            flush()
            i += quant.end()
        elif c == "(":
            flush()
            i = _skip_group_prefix(pattern, i + 1)
        elif c in "+.|^$)":
            flush()
            i += 1
        else:
            cur.append(c)
            i += 1
    flush()
    return sorted({r for r in runs if r}, key=lambda r: (-len(r), r))


@functools.lru_cache(maxsize=1024)
def _regex_literals(pattern: str) -> tuple[str, ...]:
    return tuple(regex_literals(pattern))


def _skip_class(pattern: str, i: int) -> int:
    """Index just past the character class starting at pattern[i] == '['."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1  # a leading ']' is literal
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _skip_group_prefix(pattern: str, i: int) -> int:
    """Index past "(?:", "(?P<name>", "(?i)", "(?<=", ... where pattern[i-1] == '('."""
    if pattern[i : i + 1] != "?":
        return i
    rest = pattern[i + 1 :]
    if rest[:1] in (":", "=", "!", ">", "|"):
        return i + 2
    if rest[:2] in ("<=", "<!"):
        return i + 3
    if rest[:2] == "P<" or (rest[:1] == "<"):
        end = pattern.find(">", i)
        return end + 1 if end >= 0 else len(pattern)
    if rest[:1] in ("#", "(") or rest[:2] == "P=":
        end = pattern.find(")", i)
        return end + 1 if end >= 0 else len(pattern)
    m = re.match(r"[aiLmsux-]*[:)]", rest)  # inline flags
    return i + 1 + m.end() if m else i + 1


def joinable(pattern: str) -> bool:
    """May `pattern` be searched once in many texts joined by NUL characters, finding (at the same
    place of the join) every match it has inside any one of them?

    Yes when its only zero-width assertions are \\b and \\B: RE2 sees a NUL as a non-word
    character, as it sees the outside of a text's edges. Anchors (^, $, \\A, \\z) mean something
    else in the join, so a pattern with one is not joinable. Conservative: any `$`, `\\A` or `\\z`
    counts as an anchor, and a `^` only passes as the negation right after an unescaped `[`.
    A match across a NUL is possible (a false candidate, then tested on its own).
    """
    if "$" in pattern or "\\A" in pattern or "\\z" in pattern:
        return False
    i = pattern.find("^")
    while i >= 0:
        if not (i >= 1 and pattern[i - 1] == "[" and (i < 2 or pattern[i - 2] != "\\")):
            return False
        i = pattern.find("^", i + 1)
    return True
