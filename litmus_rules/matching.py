"""Leak and collision tests: does a token or a scoring signal reappear in what the agent receives?

- `leaks(token, text)`: a canary occurs in a text under any normalisation or encoding (DESIGN,
  "Reading the note" 4-5).
- `collides(signal, text)`: a text signal (substring/regex) matches a text or a derived form of it,
  or partially overlaps it (point 2).
- `tool_call_collisions(signal, tools)`: a tool_call signal's argument value is one the harness
  fills in itself: a default, const or one-value enum (point 3).
- `regex_search`: bounded-time regex search; linear-time RE2 when the pattern allows, else the
  `regex` module under a timeout. A regex that cannot be settled raises `RegexUnknown`, which the
  rules treat as unknown (fail closed).

Texts are searched through `normalize.forms`; the forms of a text are cached (texts are reused
across many tokens and signals), as are the needles derived from a token.
"""

from __future__ import annotations

import collections
import functools
import json
import re
import threading
from collections.abc import Mapping, Sequence, Set
from typing import Any

import attrs
import re2
import regex

from litmus_rules.errors import EvaluationError
from litmus_rules.normalize import (
    CASEFOLDED_KEYS,
    KEYS,
    Form,
    encoded_forms,
    forms,
    full_normalise,
    path_casefold_key,
    path_key,
    percent_decode,
)
from litmus_rules.surfaces import render_value, tool_surfaces

REGEX_TIMEOUT = 0.05  # seconds per search with the backtracking engine
MAX_PATTERN_LEN = 10_000
MATCHED_MAX = 120


@attrs.frozen
class Witness:
    """Where and how a match was found: `offset` is into the text derived by `transform`."""

    transform: str
    offset: int
    matched: str

    def to_fact(self) -> dict[str, Any]:
        return {"transform": self.transform, "offset": self.offset, "matched": self.matched}


def _clip(s: str) -> str:
    return s if len(s) <= MATCHED_MAX else s[: MATCHED_MAX - 1] + "…"


def _name(form: str, label: str) -> str:
    if not label:
        return form
    return label if form == "raw" else f"{form} > {label}"


# --- caches ------------------------------------------------------------------------------------


class _FormsCache:
    """LRU of text -> forms, bounded by entries and by total characters held."""

    MAX_ENTRIES = 8192  # tool manifests repeat across a benchmark's episodes
    MAX_CHARS = 32 << 20
    MAX_TEXT = 4 << 20  # larger texts are derived every time rather than evicting everything

    def __init__(self) -> None:
        self._data: collections.OrderedDict[str, tuple[tuple[Form, ...], int]] = collections.OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, text: str) -> tuple[Form, ...]:
        with self._lock:
            hit = self._data.get(text)
            if hit is not None:
                self._data.move_to_end(text)
                return hit[0]
        result = forms(text)
        if len(text) > self.MAX_TEXT:
            return result
        size = sum(len(f.text) for f in result)
        with self._lock:
            if text not in self._data:
                self._data[text] = (result, size)
                self._chars += size
                while len(self._data) > self.MAX_ENTRIES or self._chars > self.MAX_CHARS:
                    _, (_, dropped) = self._data.popitem(last=False)
                    self._chars -= dropped
        return result


_forms_cache = _FormsCache()


def text_forms(text: str) -> tuple[Form, ...]:
    """The (cached) derived forms of `text`."""
    return _forms_cache.get(text)


@functools.lru_cache(maxsize=4096)
def _needles(token: str, key: str) -> tuple[tuple[str, str], ...]:
    """(label, needle) pairs to look for in a form with this key; label "" = the plain token."""
    fn = KEYS[key]
    items = [("", fn(token))]
    if key == "skeleton-casefold":
        # "I" and "i" have different skeletons ("l" vs "i"); try the token in both cases so a
        # lower-case homoglyph of an upper-case token is still found.
        items += [("", fn(token.lower())), ("", fn(token.upper()))]
    if key == "raw":
        items += encoded_forms(token)
    seen: set[str] = set()
    out = []
    for label, needle in items:
        if needle and needle not in seen:
            seen.add(needle)
            out.append((label, needle))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _plan(value: str, views: tuple[tuple[str, str], ...], casefold_ok: bool) -> tuple[tuple[str, str], ...]:
    """(witness name, needle) pairs to try on a form with these views, first match wins.

    Forms of different texts share view tuples (every ASCII text has the same ones), so the
    plan is computed once per token and view shape rather than per text.
    """
    plan: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, key in views:
        if not casefold_ok and key in CASEFOLDED_KEYS:
            continue
        for label, needle in _needles(value, key):
            if needle not in seen:
                seen.add(needle)
                plan.append((_name(name, label), needle))
    return tuple(plan)


def _find(value: str, derived: Sequence[Form], *, casefold_ok: bool) -> Witness | None:
    for form in derived:
        haystack = form.text
        for name, needle in _plan(value, form.views, casefold_ok):
            i = haystack.find(needle)
            if i >= 0:
                return Witness(name, i, _clip(haystack[i : i + len(needle)]))
    return None


def _require_text(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise EvaluationError(f"{what} expects text, got {type(text).__name__}")
    return text


def leaks(token: str, text: str) -> Witness | None:
    """Does `token` occur in `text` under any normalisation or encoding?

    Both sides are normalised the same way (case, format characters, unicode tags, NFKC,
    confusables), every decoded form of the text is searched (JSON/HTML/percent escapes, base64,
    hex, path canonicalisation), and encoded forms of the token are searched in the raw text.
    A token that is empty or only whitespace or invisible characters (after normalisation)
    leaks nowhere: it returns None, since it would be found in almost any text.
    """
    _require_text(token, "leaks()")
    _require_text(text, "leaks()")
    if not token.strip() or not full_normalise(token).strip():
        return None
    return _find(token, text_forms(text), casefold_ok=True)


# --- signals -----------------------------------------------------------------------------------


@attrs.frozen
class Signal:
    """One entry of `detector.signals`."""

    id: str
    kind: str  # substring | regex | tool_call
    value: str | None = None
    flags: tuple[str, ...] = ()
    tool: str | None = None
    arguments: Mapping[str, Any] | None = None

    @classmethod
    def from_fact(cls, d: Mapping[str, Any] | Signal) -> Signal:
        if isinstance(d, Signal):
            return d
        if not isinstance(d, Mapping):
            raise EvaluationError(f"a signal must be a mapping, got {type(d).__name__}")
        value = d.get("value")
        flags = d.get("flags") or ()
        arguments = d.get("arguments")
        tool = d.get("tool")
        return cls(
            id=str(d.get("id", "")),
            kind=str(d.get("kind", "")),
            value=value if value is None or isinstance(value, str) else render_value(value),
            flags=tuple(str(f) for f in flags) if isinstance(flags, (list, tuple)) else (str(flags),),
            tool=tool if tool is None or isinstance(tool, str) else str(tool),
            arguments=arguments if isinstance(arguments, Mapping) else None,
        )

    @property
    def ignorecase(self) -> bool:
        return _is_ignorecase(self.flags)


# --- bounded regex ----------------------------------------------------------------------------


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


# --- collisions --------------------------------------------------------------------------------

_WORD_RE = re.compile(r"\w+")
# Path-like tokens are kept whole ("/etc/passwd", "file:///x", "C:\\Users\\x", "~/.ssh/id_rsa").
_PATHISH_RE = re.compile(r"(?:[A-Za-z][\w+.-]*:)?[\w.~$@+=%-]*(?:[\\/]+[\w.~$@+=%-]+)+[\\/]*")


@functools.lru_cache(maxsize=2048)
def _tokens(text: str) -> tuple[dict[str, None], str]:
    """The distinct tokens of `text` (path-like ones whole, then words), and the same joined
    by newlines so that "literal inside some token" is one substring search."""
    toks: dict[str, None] = {}
    if "/" in text or "\\" in text:
        toks.update(dict.fromkeys(_PATHISH_RE.findall(text)))
    toks.update(dict.fromkeys(_WORD_RE.findall(text)))
    return toks, "\n".join(toks)


@functools.lru_cache(maxsize=4096)
def _grams(literal: str, min_len: int) -> tuple[frozenset[str], frozenset[str]]:
    """Substrings of `literal` of length >= min_len (short literals only), and its min_len-grams."""
    grams = frozenset(literal[i : i + min_len] for i in range(len(literal) - min_len + 1))
    if len(literal) > 64:
        return frozenset(), grams
    subs = frozenset(
        literal[i:j] for i in range(len(literal)) for j in range(i + min_len, len(literal) + 1)
    )
    return subs, grams


def _shares_gram(grams: frozenset[str], text: str, min_len: int) -> bool:
    if len(grams) <= 16 or len(text) > 16 * len(grams):
        for gram in grams:  # few grams: one substring search each
            if gram in text:
                return True
        return False
    return not grams.isdisjoint(text[i : i + min_len] for i in range(len(text) - min_len + 1))


# Views whose tokens are compared with a signal's literal text, by case sensitivity.
_OVERLAP_KEYS = {
    True: ("normalised", "path-casefold"),
    False: ("raw", "format", "tags", "nfkc", "path"),
}


def _overlap_in(lit: str, text: str, min_len: int) -> tuple[str, int] | None:
    subs, grams = _grams(lit, min_len)
    # Any token of >= min_len chars inside `lit` starts with one of lit's min_len-grams, and
    # `lit` inside a token is in the text: both need a gram in the text. Cheap test first.
    if not _shares_gram(grams, text, min_len):
        return None
    toks, joined = _tokens(text)
    hits: Set[str] = (
        subs.intersection(toks) if subs else {t for t in toks if len(t) >= min_len and t in lit}
    )
    if hits:
        tok = max(hits, key=len)
        return tok, text.find(tok)
    if "\n" not in lit and lit in joined:
        return lit, text.find(lit)
    return None


@functools.lru_cache(maxsize=4096)
def _overlap_plan(literals: tuple[str, ...], views: tuple[tuple[str, str], ...], ignorecase: bool,
                  min_len: int) -> tuple[tuple[str, str], ...]:
    """(witness label, literal as that view's key normalises it) pairs for a form's views."""
    keys = _OVERLAP_KEYS[ignorecase]
    plan: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name, key in views:
        if key not in keys:
            continue
        label = "partial overlap" if name in ("raw", "normalised") else f"partial overlap ({name})"
        for literal in literals:
            lit = KEYS[key](literal)
            if len(lit) >= min_len and lit not in seen:
                seen.add(lit)
                plan.append((label, lit))
    return tuple(plan)


def _partial_overlap(literals: tuple[str, ...], derived: Sequence[Form], min_len: int,
                     ignorecase: bool) -> Witness | None:
    for form in derived:
        for label, lit in _overlap_plan(literals, form.views, ignorecase, min_len):
            hit = _overlap_in(lit, form.text, min_len)
            if hit is not None:
                return Witness(label, hit[1], _clip(hit[0]))
    return None


def collides(signal: Mapping[str, Any] | Signal, text: str, min_len: int = 6) -> Witness | None:
    """Does a text signal (substring/regex) collide with `text`? tool_call signals: None.

    (a) Self-application: the signal matches the text or a derived form of it. Case-sensitive
        signals are not searched in case-folded forms; "ignorecase" ones are searched in all.
    (b) Partial overlap: a token of the (normalised) text of at least `min_len` characters
        occurs inside the signal's literal text, or that literal (at least `min_len` characters)
        occurs inside a token. Compared in normalised (case-folded) forms for "ignorecase"
        signals, in case-preserving forms otherwise. For regexes the literal text is
        `regex_literals(pattern)`.
    An empty substring matches everything and so collides with every text.
    Raises RegexUnknown for a regex that cannot be evaluated in bounded time.
    """
    kind, value, flags = _text_signal(signal)
    _require_text(text, "collides()")
    if kind == "tool_call":
        return None
    ignorecase = _is_ignorecase(flags)
    derived = text_forms(text)
    if kind == "substring":
        if value == "":
            return Witness("raw", 0, "")
        hit = _find(value, derived, casefold_ok=ignorecase)
        if hit is not None:
            return hit
        literals: tuple[str, ...] = (value,)
    else:
        ascii_text = text.isascii()
        for form in derived:
            name = None
            for view_name, key in form.views:
                if key not in CASEFOLDED_KEYS:
                    name = view_name
                    break
                # An ignorecase regex finds the same in a lower-cased ASCII text as in the
                # original: skip those forms (common, and each search has a fixed cost).
                if ignorecase and not (ascii_text and key in ("casefold", "normalised")):
                    name = view_name
                    break
            if name is None:
                continue
            found = regex_search(value, form.text, flags)
            if found is not None:
                return Witness(name, found[0], _clip(found[1]))
        literals = _regex_literals(value)
    return _partial_overlap(literals, derived, min_len, ignorecase)


@functools.lru_cache(maxsize=256)
def _is_ignorecase(flags: tuple[str, ...]) -> bool:
    return any(f.lower() in ("ignorecase", "i") for f in flags)


def _text_signal(signal: Mapping[str, Any] | Signal) -> tuple[str, str, tuple[str, ...]]:
    """(kind, value, flags) of a signal; cheaper than Signal.from_fact on the hot path."""
    sig_id: Any
    kind: Any
    value: Any
    if isinstance(signal, Signal):
        sig_id, kind, value, flags = signal.id, signal.kind, signal.value, signal.flags
    elif type(signal) is dict or isinstance(signal, Mapping):
        sig_id, kind, value = signal.get("id"), signal.get("kind"), signal.get("value")
        raw_flags = signal.get("flags") or ()
        if isinstance(raw_flags, (list, tuple)):
            flags = tuple(raw_flags if all(type(f) is str for f in raw_flags) else map(str, raw_flags))
        else:
            flags = (str(raw_flags),)
    else:
        raise EvaluationError(f"a signal must be a mapping, got {type(signal).__name__}")
    if kind == "tool_call":
        return kind, "", flags
    if kind not in ("substring", "regex"):
        raise EvaluationError(f"signal {sig_id!r} has unknown kind {kind!r}")
    if value is None:
        raise EvaluationError(f"{kind} signal {sig_id!r} has no value")
    return kind, value if isinstance(value, str) else render_value(value), flags


# --- tool_call signals ---------------------------------------------------------------------------

_VALUE_KEYS = (
    ("raw", lambda s: s),
    ("normalised", full_normalise),
    ("path canonicalised", path_key),
    ("normalised > path canonicalised", path_casefold_key),
    ("percent-decoded > path canonicalised", lambda s: path_casefold_key(percent_decode(s))),
)
_FILLABLE = ("schema_default", "schema_const", "schema_enum")


def _flatten(arguments: Mapping[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """{"opts": {"path": x}} -> [("opts", {...}), ("opts.path", x)]."""
    out: list[tuple[str, Any]] = []
    for name, value in arguments.items():
        path = f"{prefix}{name}"
        out.append((path, value))
        if isinstance(value, Mapping) and depth < 16:
            out.extend(_flatten(value, f"{path}.", depth + 1))
    return out


def _same_value(expected: Any, schema_text: str) -> str | None:
    """The transform under which a signal's argument value equals a schema value, else None."""
    if not isinstance(expected, str):
        try:
            parsed = json.loads(schema_text)
        except ValueError:
            parsed = schema_text
        if parsed == expected and type(parsed) is type(expected):
            return "raw"
        expected = render_value(expected)
    for name, fn in _VALUE_KEYS:
        if fn(expected) == fn(schema_text):
            return name
    return None


def _dig(schema_text: str, keys: Sequence[str]) -> tuple[bool, Any]:
    """The value at `keys` inside a JSON object default/const (found?, value)."""
    try:
        value: Any = json.loads(schema_text)
    except ValueError:
        return False, None
    for k in keys:
        if not isinstance(value, Mapping) or k not in value:
            return False, None
        value = value[k]
    return True, value


def tool_call_collisions(signal: Mapping[str, Any] | Signal,
                         tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Argument values of a tool_call signal that the harness fills in by itself.

    A value collides when it equals (raw, normalised, or as a canonical path) the `default`,
    `const` or one-value `enum` of the same argument in the named tool's input schema (nested
    arguments as dotted names; an object default is looked into). Values that only appear in
    descriptions, examples or injected text do not collide. Returns one dict per collision:
    {argument, value (the schema's, as text), origin, kind, transform}.
    """
    sig = Signal.from_fact(signal)
    if sig.kind != "tool_call" or not sig.arguments or not isinstance(tools, Sequence):
        return []
    wanted = _flatten(sig.arguments)
    out: list[dict[str, Any]] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            continue
        if sig.tool is not None and tool.get("name") != sig.tool:
            continue
        surfaces = [s for s in tool_surfaces(tool, index) if s.kind in _FILLABLE and s.argument]
        enum_sizes = collections.Counter(
            (s.origin.rpartition("[")[0], s.argument) for s in surfaces if s.kind == "schema_enum"
        )
        for s in surfaces:
            if s.kind == "schema_enum" and enum_sizes[(s.origin.rpartition("[")[0], s.argument)] != 1:
                continue
            assert s.argument is not None  # filtered above
            for name, expected in wanted:
                if name == s.argument:
                    transform = _same_value(expected, s.text)
                elif name.startswith(f"{s.argument}.") and s.kind != "schema_enum":
                    found, inner = _dig(s.text, name[len(s.argument) + 1 :].split("."))
                    transform = _same_value(expected, render_value(inner)) if found else None
                else:
                    continue
                if transform is not None:
                    out.append({
                        "argument": name,
                        "value": s.text,
                        "origin": s.origin,
                        "kind": s.kind,
                        "transform": transform,
                    })
    return out
