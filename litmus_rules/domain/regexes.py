"""Bounded-time regex search with Python `re` semantics, and the literal text of a regex.

`regex_search` finds what Python's `re` finds (DESIGN, "Reading the note" 2: Unicode `\\d \\w \\s
\\b`, `re`'s ignorecase, the declared flags), in bounded time: the pattern is rewritten with no
engine-dependent construct (pyregex.py) and run with RE2 (linear time) when it holds nothing RE2
lacks, else with the `regex` module under a timeout. A pattern that cannot be settled raises
`RegexUnknown`, which the rules treat as unknown (fail closed).

Searching is bounded three ways. Each search with the backtracking engine by REGEX_TIMEOUT. And all
the searches of one regex within a `regex_budget()` scope (one evaluation, RuleSet.evaluate, or one
search over many texts, matching.first_collision, when no evaluation is under way) by REGEX_BUDGET,
counted in characters searched: RE2 is linear, so a count of characters bounds its time and, unlike
a clock, gives the same verdict on any machine under any load. A character searched by the
backtracking engine counts BACKTRACK_WEIGHT. Its time is not a function of the text's length,
so its searches also count against REGEX_TIME_LIMIT seconds per scope, a backstop that a
pattern which is not pathological does not reach. Outside any scope only the per-search limit
holds. `name_signal` gives a scope's account the signal's id, for the message.

`regex_probe` gives an RE2 pattern that matches wherever the pattern matches (a superset, for
searching many texts joined by NUL at once); `regex_literals` lists the literal runs every
match of a pattern contains; `joinable` says when a pattern may be searched in texts joined by NUL.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from litmus_rules.errors import EvaluationError
from litmus_rules.domain.lazyre import Patterns
from litmus_rules.domain.pyregex import Plan, Unsupported
from litmus_rules.domain.regexlits import required_literals
from litmus_rules.domain.textmemo import memo_large, re2_module, re2_options, utf8

REGEX_TIMEOUT = 0.05  # seconds per search with the backtracking engine
REGEX_BUDGET = 32_000_000  # characters searched per regex per budget scope (an evaluation, or one search over many texts)
BACKTRACK_WEIGHT = 4  # a character searched by the backtracking engine counts this many
REGEX_TIME_LIMIT = 2.0  # seconds of backtracking searches per regex per budget scope (the backstop)
MAX_PATTERN_LEN = 10_000
# A rewritten pattern spells out its classes; the `regex` module parses some 20-50 KB/s, so a
# rewrite past this many characters is not compiled (unknown) rather than costing a second.
MAX_REWRITTEN_LEN = 20_000
_clock = time.perf_counter  # what REGEX_TIME_LIMIT is measured with


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




@functools.lru_cache(maxsize=512)
def _plan(pattern: str, prefix: str) -> Plan | str:
    """The parsed pattern, or why it cannot be evaluated (cached too)."""
    if len(pattern) > MAX_PATTERN_LEN:
        return (f"regex pattern is {len(pattern)} characters long "
                f"(limit {MAX_PATTERN_LEN}); treated as unknown")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # FutureWarning on "[[": `re` reads it, so do we
            return Plan.of(prefix + pattern)
    except re.error as exc:
        where = f" at position {exc.pos - len(prefix)}" if exc.pos is not None else ""
        return f"invalid regex {_short(pattern)}{where}: {exc.msg}"
    except (ValueError, OverflowError, RecursionError, MemoryError) as exc:
        return f"invalid regex {_short(pattern)}: {type(exc).__name__}: {exc}"


def _get_plan(pattern: str, prefix: str) -> Plan:
    plan = _plan(pattern, prefix)
    if isinstance(plan, str):
        raise RegexUnknown(plan)
    return plan


def _rewritten(pattern: str, prefix: str, engine: str, pages: tuple[int, ...] = ()) -> Any:
    """The compiled rewrite for `engine` ("re2" | "regex" | "probe"), exact on texts whose
    characters are ASCII or in the 256-character `pages` (so texts in the same scripts share
    it); None when RE2 refuses it."""
    if not pages:
        return _rewritten_ascii(pattern, prefix, engine)
    return _rewritten_pages(pattern, prefix, engine, pages)


@functools.lru_cache(maxsize=512)
def _rewritten_ascii(pattern: str, prefix: str, engine: str) -> Any:
    return _compiled(pattern, engine, _source(pattern, prefix, engine, ""))


@functools.lru_cache(maxsize=1024)
def _rewritten_pages(pattern: str, prefix: str, engine: str, pages: tuple[int, ...]) -> Any:
    extra = "".join("".join(map(chr, range(max(page << 8, 0x80), (page + 1) << 8))) for page in pages)
    return _compiled(pattern, engine, _source(pattern, prefix, engine, extra))


def _source(pattern: str, prefix: str, engine: str, extra: str) -> str | None:
    try:
        return _get_plan(pattern, prefix).rewrite(engine, extra)
    except (Unsupported, RecursionError) as exc:
        if engine != "regex":
            return None
        raise RegexUnknown(f"regex {_short(pattern)} cannot be evaluated: {exc}") from None


def _compiled(pattern: str, engine: str, source: str | None) -> Any:
    if source is None:
        return None
    if len(source) > MAX_REWRITTEN_LEN:
        if engine != "regex":
            return None
        raise RegexUnknown(f"regex {_short(pattern)} is {len(source)} characters long once its classes "
                           f"are spelled out for this text (limit {MAX_REWRITTEN_LEN}); treated as unknown")
    if engine == "regex":
        import regex  # loaded on first use: most patterns run on RE2

        try:
            return regex.compile(source, regex.V0)
        except (regex.error, ValueError, OverflowError, RecursionError, MemoryError) as exc:
            raise RegexUnknown(f"regex {_short(pattern)} cannot be evaluated: {exc}") from None
    re2 = re2_module()
    try:
        # failures fall back to the regex module: re2_options logs nothing
        return re2.compile(source, re2_options())
    except (re2.error, UnicodeEncodeError, ValueError, TypeError):
        return None


def _compile(pattern: str, prefix: str) -> tuple[str, Any]:
    """For a search over many joined texts: ("re2", probe) with `regex_probe`'s pattern,
    ("regex", None) when there is none, ("error", message) for a pattern that cannot be
    evaluated. (The probe drops assertions, so it needs no `joinable` test.)"""
    plan = _plan(pattern, prefix)
    if isinstance(plan, str):
        return ("error", plan)
    probe = _rewritten(pattern, prefix, "probe")
    return ("regex", None) if probe is None else ("re2", probe)


def regex_probe(pattern: str, flags: Sequence[str] = ()) -> Any:
    """An RE2 pattern (compiled) that matches in a text wherever `pattern` does under Python's
    `re` (a superset: assertions and anchors dropped, backreferences as any text, every
    non-ASCII character admitted where a class is), or None if there is none. So it may be
    searched in texts joined by any separator: a text it does not match in cannot match.
    Raises RegexUnknown for a pattern that cannot be evaluated."""
    prefix = _flag_prefix(pattern, tuple(flags))
    _get_plan(pattern, prefix)
    return _rewritten(pattern, prefix, "probe")


# Pages past this many are not spelled out in a probe (its rewrite grows with them): the general one is used.
PROBE_PAGES_MAX = 64


def regex_probe_on(pattern: str, flags: Sequence[str], pages: tuple[int, ...]) -> Any:
    """`regex_probe`'s pattern with its classes exact on the characters of the 256-character
    `pages` (the probe `regex_search` tries a long non-ASCII text with first): a superset of the
    matches in any text whose characters are ASCII or in `pages`, which `regex_probe`'s admitting
    every non-ASCII character where a class is makes match almost everywhere in non-ASCII text.
    None when there is none (RE2 refuses it, or more than PROBE_PAGES_MAX pages). Raises
    RegexUnknown for a pattern that cannot be evaluated."""
    if len(pages) > PROBE_PAGES_MAX:
        return None
    prefix = _flag_prefix(pattern, tuple(flags))
    _get_plan(pattern, prefix)
    return _rewritten(pattern, prefix, "probe", pages)


# --- the cumulative budget ------------------------------------------------------------------------


class _Account:
    """What one regex's searches have cost in a scope: characters searched (weighted), and the
    seconds of its backtracking searches."""

    __slots__ = ("signal", "budget", "time_limit", "spent", "seconds", "searches", "texts", "refused")

    def __init__(self, signal: str | None, budget: int, time_limit: float) -> None:
        self.signal = signal
        self.budget = budget
        self.time_limit = time_limit
        self.spent = 0
        self.seconds = 0.0
        self.searches = 0
        self.texts: set[int] = set()
        self.refused: str | None = None  # which limit was reached: no search is made past it

    def charge(self, pattern: str, text: str, weight: int = 1) -> None:
        """Count a search of `text` before it is made; raise RegexUnknown if it would go past the
        budget (so whether a search is made depends on the texts alone, never on the clock)."""
        if self.refused is None and self.spent + (len(text) + 1) * weight > self.budget:
            self.refused = "budget"
        if self.refused is not None:
            raise self.exhausted(pattern)
        self.spent += (len(text) + 1) * weight
        self.searches += 1
        if len(self.texts) < _MAX_COUNTED_TEXTS:
            self.texts.add(hash(text))

    def exhausted(self, pattern: str) -> RegexUnknown:
        who = f"regex signal {self.signal!r} ({_short(pattern)})" if self.signal else f"regex {_short(pattern)}"
        if self.refused == "time":
            spent = (f"its time limit of {self.time_limit:g} s for backtracking searches "
                     "(regexes.REGEX_TIME_LIMIT)")
        else:
            spent = f"its search budget of {self.budget:,} characters (regexes.REGEX_BUDGET)"
        return RegexUnknown(
            f"{who} used up {spent} after {self.searches} searches over {len(self.texts)} texts; "
            "treated as unknown")


class _Ledger(dict):  # type: ignore[type-arg]
    """The accounts of one scope (an evaluation), per (pattern, flags): the dict itself, so that
    opening a scope (once per episode) is a plain dict construction, not a Python call. A scope
    with its own budget or time limit sets them on the instance; None: the module's defaults."""

    budget: int | None = None
    time_limit: float | None = None

    @property
    def accounts(self) -> dict[tuple[str, tuple[str, ...]], _Account]:
        return self

    def account(self, key: tuple[str, tuple[str, ...]], signal: str | None = None) -> _Account:
        got = self.get(key)
        if got is None:
            got = self[key] = _Account(
                signal, REGEX_BUDGET if self.budget is None else self.budget,
                REGEX_TIME_LIMIT if self.time_limit is None else self.time_limit)
        elif signal and not got.signal:
            got.signal = signal
        return got


_scope: contextvars.ContextVar[_Ledger | None] = contextvars.ContextVar("regex_scope", default=None)
@contextlib.contextmanager
def regex_budget(characters: int | None = None, *, seconds: float | None = None) -> Iterator[None]:
    """A scope (one evaluation) in which each regex (pattern, flags) may search at most
    `characters` (default REGEX_BUDGET; a backtracking search's count BACKTRACK_WEIGHT each) and
    spend at most `seconds` (default REGEX_TIME_LIMIT) in backtracking searches, in all; past
    either, a search raises RegexUnknown."""
    token = open_budget(characters, seconds=seconds)
    try:
        yield
    finally:
        _scope.reset(token)


def open_budget(characters: int | None = None, *, seconds: float | None = None) -> contextvars.Token[_Ledger | None]:
    """`regex_budget` without the context manager, for the per-episode hot path (RuleSet.evaluate):
    the scope lasts until `close_budget(token)`, which the caller must reach (try/finally)."""
    ledger = _Ledger()
    if characters is not None:
        ledger.budget = characters
    if seconds is not None:
        ledger.time_limit = seconds
    return _scope.set(ledger)


# `close_budget(token)` ends the scope `open_budget` opened: the contextvar's own reset (a C call,
# not a Python frame, on the per-episode hot path)
close_budget = _scope.reset


@contextlib.contextmanager
def budget_scope() -> Iterator[None]:
    """The scope already under way (an evaluation's), or a new one for the duration."""
    if _scope.get() is not None:
        yield
    else:
        with regex_budget():
            yield


def name_signal(signal_id: Any, pattern: str, flags: Sequence[str]) -> None:
    """Give the current scope's account of this regex the id of the signal it comes from."""
    ledger = _scope.get()
    if ledger is not None and signal_id is not None:
        ledger.account((pattern, tuple(flags)), str(signal_id))


def _account_for(pattern: str, flags: Sequence[str]) -> _Account | None:
    ledger = _scope.get()
    if ledger is None:
        return None
    return ledger.account((pattern, flags if isinstance(flags, tuple) else tuple(flags)))


# --- search ---------------------------------------------------------------------------------------

_MAX_COUNTED_TEXTS = 100_000


def regex_search(pattern: str, text: str, flags: Sequence[str] = ()) -> tuple[int, str] | None:
    """First match of `pattern` in `text` under Python `re` semantics, as (offset, matched text),
    or None.

    RE2 (linear time) when the rewritten pattern holds nothing RE2 lacks (and, for \\b, the
    text is ASCII); otherwise the `regex` module with a REGEX_TIMEOUT-second limit. Raises
    RegexUnknown when the pattern is invalid under `re`, longer than MAX_PATTERN_LEN, has an
    unknown flag, the search does not finish in time, or the signal's cumulative budget is spent.
    """
    flags = tuple(flags)
    prefix = _flag_prefix(pattern, flags)
    plan = _get_plan(pattern, prefix)
    ascii_text = text.isascii()
    if plan.ignorecase_backref and not ascii_text:
        raise RegexUnknown(
            f"regex {_short(pattern)} compares a group case-insensitively in a non-ASCII text, which "
            "cannot be reproduced exactly in bounded time; treated as unknown")
    account = _account_for(pattern, flags)
    if account is not None and account.refused is not None:
        raise account.exhausted(pattern)
    if not ascii_text and not _may_match(pattern, prefix, text, account):
        return None  # (and an exact search that would run out of time or budget is not run)
    # the 256-character pages of the text's non-ASCII characters: the rewrite is exact on them
    pages = () if ascii_text else _pages(text)
    use_re2 = (plan.re2_ok and text and (ascii_text or not plan.has_boundary)
               and not (plan.has_end and text.endswith("\n"))
               and not any(0xD8 <= page <= 0xDF for page in pages))  # RE2 reads UTF-8: no surrogates
    compiled = _rewritten(pattern, prefix, "re2", pages) if use_re2 else None
    if compiled is not None:
        if account is not None:
            account.charge(pattern, text)
        m = compiled.search(text)
    else:
        m = _backtracking_search(pattern, prefix, text, pages, account)
    if m is None:
        return None
    return m.start(), m.group()


def regex_absent(pattern: str, flags: Sequence[str], texts: str) -> bool:
    """Whether `regex_search(pattern, text, flags)` is sure to find nothing, without raising, in
    each text whose characters `texts` holds (the texts joined by NUL): the RE2 probe
    (`regex_probe`, a superset of the matches that holds no assertion, so a match inside one text is
    one in the join) finds nothing in the join, nor, for a non-ASCII one, the probe exact on its
    pages. False when a search may find something or would raise: a pattern that cannot be
    evaluated, a case-insensitive backreference in non-ASCII text, a budget already spent. Not
    counted against the budget, as the probes of many texts joined are not (joined.py): the
    searches it spares cannot find anything."""
    flags = tuple(flags)
    try:
        prefix = _flag_prefix(pattern, flags)
        plan = _get_plan(pattern, prefix)
        general = _rewritten(pattern, prefix, "probe")
    except RegexUnknown:
        return False
    if general is None or (plan.ignorecase_backref and not texts.isascii()):
        return False
    account = _account_for(pattern, flags)
    if account is not None and account.refused is not None:
        return False
    try:
        data = texts.encode("utf-8")
        if general.search(data) is None:
            return True
        if texts.isascii():
            return False
        pages = _pages(texts)
        exact = _rewritten(pattern, prefix, "probe", pages) if len(pages) <= PROBE_PAGES_MAX else None
        return exact is not None and exact.search(data) is None
    except (UnicodeEncodeError, RegexUnknown):  # a lone surrogate (RE2 reads UTF-8); too many pages spelled out
        return False


# A non-ASCII text is first searched with RE2 probes (linear time, supersets of the matches):
# `regex_probe`'s, and where it matches in a text at least PREFILTER_MIN long, the probe whose
# classes are exact on its characters (regex_probe's admits any non-ASCII character where a class
# is: a long non-ASCII text often matches it). Where a probe finds nothing the exact search (on
# these texts often the `regex` module, as RE2 has no Unicode \b) cannot find anything either.
PREFILTER_MIN = 1 << 12


def _backtracking_search(pattern: str, prefix: str, text: str, pages: tuple[int, ...],
                         account: _Account | None) -> Any:
    timeout = REGEX_TIMEOUT
    if account is not None:
        account.charge(pattern, text, BACKTRACK_WEIGHT)
        timeout = min(timeout, account.time_limit - account.seconds)
        if timeout <= 0:
            account.refused = "time"
            raise account.exhausted(pattern)
    start = _clock()
    try:
        return _rewritten(pattern, prefix, "regex", pages).search(text, timeout=timeout)
    except TimeoutError:
        if account is not None and timeout < REGEX_TIMEOUT:
            account.refused = "time"
            raise account.exhausted(pattern) from None
        raise RegexUnknown(
            f"regex {_short(pattern)} did not finish within {REGEX_TIMEOUT} s on "
            f"{len(text)} characters; treated as unknown"
        ) from None
    finally:
        if account is not None:
            account.seconds += _clock() - start


def _may_match(pattern: str, prefix: str, text: str, account: _Account | None) -> bool:
    if account is not None:  # counted as a search of the text, as the exact one would be
        account.charge(pattern, text)
    try:
        data = utf8(text)  # (a large text's UTF-8 is kept: each regex's probe searches it)
        general = _rewritten(pattern, prefix, "probe")
        if general is not None and general.search(data) is None:
            return False
        if len(text) < PREFILTER_MIN:
            return True
        # Where the general probe matches (it admits any non-ASCII character where a class is),
        # the one exact on the text's pages: finding them and compiling it costs 10-20 ms on a
        # large text of many pages, which the general probe spares wherever it finds nothing.
        probe = _rewritten(pattern, prefix, "probe", _pages(text))
        return probe is None or probe.search(data) is not None
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8
        return True


PAGE_SCAN_MIN = 4096  # texts this long are scanned page by page; shorter ones hashed, which is cheaper
PAGE_SCAN_MAX = 64  # pages found one search at a time; past this many, the rest by one set()


@memo_large
def _pages(text: str) -> tuple[int, ...]:
    """The 256-character pages of the non-ASCII characters in `text` (`utf8_pages` of its UTF-8,
    kept for a large text: textmemo.utf8)."""
    if text.isascii():
        return ()
    if len(text) < PAGE_SCAN_MIN:
        return _hashed_pages(text)
    try:
        data = utf8(text)
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8
        return _hashed_pages(text)
    return utf8_pages(data)


def utf8_pages(data: bytes) -> tuple[int, ...]:
    """The 256-character pages of the non-ASCII characters in UTF-8 `data`. Found by searching
    (RE2, on the bytes) for a character of a page not yet found, resuming after each hit: one
    linear pass in C, where `set(text)` hashed every character of a large text (80 ms a MB) and
    `re` compiled a class per page found (~1 ms each)."""
    pages: set[int] = set()
    at = 0
    while len(pages) < PAGE_SCAN_MAX:
        hit = _new_page(frozenset(pages)).search(data, at)
        if hit is None:
            return tuple(sorted(pages))
        at = hit.end()
        pages.add(ord(data[hit.start() : at].decode("utf-8")) >> 8)
    return tuple(sorted(pages.union(_hashed_pages(data[at:].decode("utf-8")))))


def _hashed_pages(text: str) -> tuple[int, ...]:
    """The pages of `text`'s non-ASCII characters, read from its UTF-32 code units: bits 8-23 of
    a code point are its page, the two bytes after each unit's first (a set of small ints, in C:
    `set(text)` made and hashed a string a character, 80 ms a MB, and hashing the characters of
    the other planes one by one took 150 ms for half a million of them). A lone surrogate counts
    as a character of its page (D8-DF)."""
    if not text:
        return ()
    data = text.encode(_UTF32_NATIVE, "surrogatepass")
    # Past the first byte, each unit's next two bytes read as one native 16-bit integer: the page.
    pages = set(memoryview(data[1:] + b"\0").cast("H")[::2])
    if 0 in pages and _RE.LATIN1.search(text) is None:
        pages.discard(0)  # page 0 holds ASCII, which does not count
    return tuple(sorted(pages))


_UTF32_NATIVE = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"
_RE = Patterns(LATIN1=("[\x80-\xff]", 0))


@functools.lru_cache(maxsize=256)
def _new_page(found: frozenset[int]) -> Any:
    """A character that is neither ASCII nor in a page of `found` (RE2, searched in UTF-8 bytes)."""
    ranges = "".join(f"\\x{{{p << 8:x}}}-\\x{{{(p << 8) | 0xFF:x}}}" for p in sorted(found))
    return re2_module().compile(f"[^\\x00-\\x7f{ranges}]", re2_options())


def regex_literals(pattern: str) -> list[str]:
    """The literal runs every match of the regex must contain, longest first (DESIGN, "Reading
    the note" 2): a branch of an alternation or an optional group is not required, so neither
    is its text (regexlits.py). Nothing for a pattern that cannot be parsed."""
    return list(required_literals(pattern))


def _regex_literals(pattern: str) -> tuple[str, ...]:
    return required_literals(pattern)  # cached there


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
