"""Decoders that undo an encoding layer.

Every function here maps text to text (or to the decoded spans of it), with bounded work:

========================  ================================  ============
function                  name in traces                    idempotent
========================  ================================  ============
json_unescape             json unescaped                    no ("\\\\u0041" -> "\\u0041" -> "A")
html_unescape             html unescaped                    yes (up to 8 layers, see below)
percent_decode            percent-decoded                   yes (up to 16 layers, see below)
unescape_all              escapes decoded                   no (JSON as above; up to 16 layers)
base64_spans / hex_spans  base64 / hex                      n/a (extract decoded spans)
========================  ================================  ============

(Path canonicalisation, "path canonicalised" in traces, is paths.py's.)

`candidate_runs(text)` is what `normalize.forms` decodes base64 and hex from: the base64-alphabet
runs of the text, or none when a linear-time scan proves that no run can decode (the common case
for prose and identifiers). Those live in encoded.py, re-exported here.

Limits: HTML_MAX_LAYERS / PERCENT_MAX_LAYERS layers of escaping are decoded to a fixed point
(ESCAPES_MAX_LAYERS alternations of kinds, for `unescape_all`);
a text with more raises `LimitUnknown` (its decoded form is unknown, and the rules reject with an
explained reason), never a partly decoded text. Everything else is complete: base64 / hex spans
are all decoded (at most 3/4 of the input).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from itertools import compress, repeat
from operator import is_
from typing import Any

# base64 / hex runs live in encoded.py; re-exported: the decoders are this module's API
from litmus_rules.domain.encoded import (  # noqa: F401
    _URL_TO_STD,
    DECODED_RUN_MEMO_MAX,
    MAX_DECODED_CHARS,
    RUN_MEMO_ENTRIES,
    _ENCODED_RUN_HINT_PATTERN,
    _a2b_many,
    _base64_runs,
    _decode_b64_many,
    _decoded_memo,
    _hex_runs,
    _looks_like_word,
    _printable,
    _printable_many,
    _printable_text,
    base64_spans,
    candidate_runs,
    encoded_run_hint,
    hex_spans,
    may_hold_encoded_runs,
)
from litmus_rules.domain.lazyre import Patterns
from litmus_rules.domain.textmemo import memo_large, re2_compiled, re2_in
from litmus_rules.errors import EvaluationError


def _spec(pattern: str, flags: int = 0) -> tuple[str, int]:
    return pattern, flags


# --- escapes and encodings ------------------------------------------------------------------------

# A run of two or more `\\uXXXX` escapes (no lone surrogate) and a run of `\\xXX` escapes are each one
# match, decoded in C (their hex digits as UTF-16 or Latin-1 bytes): a text of a million escapes
# costs one call per run, not one per escape. Each escape of a run is one the alternatives below
# would match alone, at the same places (a run starts where a single escape would), to the same
# characters; a surrogate that pairs with no neighbour ends a run, and is left as it is below.
# Every alternative starts with the backslash, written once in front of them all: `re` then finds
# the places to try by scanning for that literal (60x faster on a large text holding a backslash
# than trying the alternatives at every position). A run's group marks which alternative matched;
# its text is the whole match.
_UNIT = r"(?:\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4}|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
_JSON_ESCAPE_RE_SPEC = _spec(
    r"\\(?:"
    rf"(u(?![dD][89a-fA-F])[0-9a-fA-F]{{4}}{_UNIT}+"
    rf"|u[dD][89abAB][0-9a-fA-F]{{2}}\\u[dD][c-fC-F][0-9a-fA-F]{{2}}{_UNIT}+)"
    r"|(x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2})+)"
    r"|u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"  # surrogate pair
    r"|u\{([0-9a-fA-F]{1,6})\}"  # ES6 code point escape
    r"|u([0-9a-fA-F]{4})"
    r"|x([0-9a-fA-F]{2})"
    r"|([\"\\/bfnrt'])"
    r")"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}


def _json_escape(m: re.Match[str]) -> str:
    units, bytes_, hi, lo, astral, bmp, byte, simple = m.groups()
    if units is not None:
        return bytes.fromhex(m.group().replace("\\u", "")).decode("utf-16-be")
    if bytes_ is not None:
        return bytes.fromhex(m.group().replace("\\x", "")).decode("latin-1")
    if hi is not None:
        return chr(0x10000 + ((int(hi, 16) - 0xD800) << 10) + (int(lo, 16) - 0xDC00))
    if astral is not None:
        cp = int(astral, 16)
        return chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else m.group()
    if bmp is not None:
        cp = int(bmp, 16)
        # A lone surrogate would make the text unencodable downstream: leave the escape as is.
        return m.group() if 0xD800 <= cp <= 0xDFFF else chr(cp)
    if byte is not None:
        return chr(int(byte, 16))
    return _SIMPLE_ESCAPES[simple]


@memo_large
def json_unescape(text: str) -> str:
    """Decode JSON/JS string escapes (\\uXXXX incl. surrogate pairs, \\u{X}, \\xXX, \\n, \\", ...).

    Tolerant: malformed escapes and lone surrogates are left as they are. One pass; not idempotent.
    """
    if "\\" not in text:
        return text
    return _RE.JSON_ESCAPE_RE.sub(_json_escape, text)


class LimitUnknown(EvaluationError):
    """A derived form of a text could not be computed within a limit: a search that finds nothing
    in the other forms is unknown, never false (the rules reject with an explained reason).
    `needle`: the text was what is searched for (a token, a name, a signal's value), not the text
    searched in; `index`, when set, is which of the texts searched in."""

    needle = False


def size_text(n: int) -> str:
    """A text length for messages: "812 characters", "1.2 M characters"."""
    if n < 10_000:
        return f"{n} characters"
    if n < 1_000_000:
        return f"{n / 1000:.0f} K characters"
    return f"{n / 1_000_000:.1f} M characters"


# Layers of escaping decoded to a fixed point. Each pass reads the whole text and may remove as
# little as one character, so decoding every layer of a text could cost quadratic time: past
# these many layers the decoded form is unknown (`LimitUnknown`), not the partly decoded text.
HTML_MAX_LAYERS = 8
PERCENT_MAX_LAYERS = 16


def _fixed_point(text: str, marker: str, decode: Any, limit: int, what: str, name: str) -> str:
    for _ in range(limit):
        if marker not in text:
            return text
        decoded = decode(text)
        if decoded == text:
            return text
        text = decoded
    if marker in text and decode(text) != text:
        raise LimitUnknown(f"{what} nested more than {limit} layers deep (limit decoding.{name})")
    return text


@memo_large
def html_unescape(text: str) -> str:
    """html.unescape to a fixed point (double-escaped "&amp;#65;" -> "A").

    Raises LimitUnknown when more than HTML_MAX_LAYERS passes would still change the text."""
    return _fixed_point(text, "&", _unescape, HTML_MAX_LAYERS, "HTML escaping", "HTML_MAX_LAYERS")


def _unescape(text: str) -> str:
    """`html.unescape(text)`, with Python called back only where a reference decodes to something
    else (`_changing_references`): a text with thousands of "&" that start no reference (random
    printable text, code) no longer makes a call for each (46,000 calls, 0.15 s on a 1 MB text and
    its decoded forms)."""
    if "&" not in text:
        return text
    pattern, replace = _changing_references()
    return pattern.sub(replace, text)


def _unescape_one(match: re.Match[str]) -> str:
    import html

    return html.unescape(match.group())


@functools.cache
def _changing_references() -> tuple[re.Pattern[str], Callable[[re.Match[str]], str]]:
    """The references `html.unescape` changes, matched as it matches them. Its pattern matches at
    every "&" followed by a character its references may hold, and no match holds a second "&", so
    its matches are the longest ones at each "&", independent of one another: a match whose
    callback gives back the text itself can be left out. Numeric references always change; a
    named one changes only if it is a name ending in ";" (every such name of the HTML5 table is
    alphanumeric, at most 32 characters) or starts with one of the names allowed without ";"
    (`html5` keys without it, read from the table: `tests/test_html_unescape18.py` compares the
    two with `html.unescape` on generated texts). The same spans as `html.unescape`'s, so each
    is decoded alone by it: by the function its own `sub` calls, where the module has it (one
    call a reference, as in `html.unescape`), or else by `html.unescape` of the match."""
    import html.entities  # on the first text with a "&": its entity table is a large import

    table = html.entities.html5
    bare = sorted(name for name in table if not name.endswith(";"))
    named = re.compile("[A-Za-z][A-Za-z0-9]{0,31};")
    changing = "|".join(["#[0-9]", "#[xX][0-9a-fA-F]", named.pattern, *map(re.escape, bare)])
    if not all(named.fullmatch(name) for name in table if name.endswith(";")):  # pragma: no cover
        changing = ""  # a table of another shape: every reference html.unescape matches, as it does
    pattern = re.compile(rf"&(?={changing})(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{{1,32}};?)")
    return pattern, getattr(html, "_replace_charref", _unescape_one)


def _unquote(text: str) -> str:
    """`urllib.parse.unquote(text, errors="replace")`, each run of escapes decoded in C at once
    (urllib decodes escape by escape in Python). The same text: urllib decodes each ASCII stretch
    as UTF-8, and an ASCII character is never part of a multi-byte sequence, so decoding the runs
    of escapes alone gives the same characters (tests/test_decoding_runs13.py checks it)."""
    if "%" not in text:
        return text
    parts = _RE.PERCENT_SPLIT.split(text)
    if len(parts) == 1:
        return text
    runs = parts[1::2]
    # most runs are one escape (`%20`, `%2F`): looked up in C; longer ones decoded in turn
    decoded = list(map(_ONE_ESCAPE.get, runs))
    for i in compress(range(len(runs)), map(is_, decoded, repeat(None))):
        decoded[i] = _percent_run(runs[i])
    parts[1::2] = decoded
    return "".join(parts)


# (the "%" first, outside any loop: `re` then scans for it; 20x faster on a large text with a few)
_PERCENT_SPLIT_SPEC = _spec(r"(%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*+)")


def _percent_run(run: str) -> str:
    return bytes.fromhex(run.replace("%", "")).decode("utf-8", "replace")


# `_percent_run` of each single escape: a byte past 0x7F alone is not UTF-8, U+FFFD
_ONE_ESCAPE = {f"%{hi}{lo}": chr(int(hi + lo, 16)) if int(hi + lo, 16) < 0x80 else "\ufffd"
               for hi in "0123456789abcdefABCDEF" for lo in "0123456789abcdefABCDEF"}


@memo_large
def percent_decode(text: str) -> str:
    """URL percent-decoding to a fixed point ("%2541" -> "%41" -> "A").

    Invalid UTF-8 byte sequences decode to U+FFFD; "+" is left alone (it is not a space outside
    form bodies, and guessing would hide real plus signs). Raises LimitUnknown when more than
    PERCENT_MAX_LAYERS passes would still change the text.
    """
    return _fixed_point(text, "%", _unquote, PERCENT_MAX_LAYERS, "percent-encoding", "PERCENT_MAX_LAYERS")


# Escape syntaxes of other languages, decoded by `unescape_all` only (not a form of their own):
# Python's \\U0010FFFF, C's / shell's octal \\154 (three digits), IIS's %u006c, and quoted-printable
# runs (=6C=63, two escapes or more: one "=12" in "id=12ab" is no escape).
_OTHER_ESCAPE_RE_SPEC = _spec(
    r"\\U([0-9a-fA-F]{8})"
    r"|\\([0-3][0-7]{2})"
    r"|%u([0-9a-fA-F]{4})"
    r"|=([0-9A-F]{2}(?:=[0-9A-F]{2})+)"  # (each alternative starts with a literal: `re` scans for them)
)


def _other_escape(m: re.Match[str]) -> str:
    wide, octal, iis, printable = m.groups()
    if printable is not None:
        return bytes.fromhex(printable.replace("=", "")).decode("utf-8", "replace")
    cp = int(wide, 16) if wide is not None else int(octal, 8) if octal is not None else int(iis, 16)
    return chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else m.group()


@memo_large
def other_escapes(text: str) -> str:
    """Decode `_OTHER_ESCAPE_RE`'s escapes (one pass; malformed ones and surrogates are left)."""
    if "\\" not in text and "%u" not in text and "=" not in text:
        return text
    return _sub_where_found(text, re2_compiled(_OTHER_ESCAPE_RE_SPEC[0]), _RE.OTHER_ESCAPE_RE, _other_escape)


def _sub_where_found(text: str, found: Any, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> str:
    """`pattern.sub(replace, text)`, once RE2's `found` (the same escapes) shows there is one: RE2
    finds none in linear time where `re` would try the pattern at every backslash (1 MB of Windows
    paths); a large text is searched in its kept UTF-8."""
    try:
        if not re2_in(found, text):
            return text
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8; `re` decides
        pass
    return pattern.sub(replace, text)


# CSS escapes (a backslash, one to six hex digits, and one optional space that ends them), two or
# more in a row: "\\6c\\63", "\\6c \\63 \\2d". A form of their own ("css unescaped"): they read
# octal escapes and Windows paths otherwise ("\\154" is "l" in C, "Ŕ" in CSS), and one alone would
# make every path with a hex-looking folder ("\\dev") a text to decode.
# (spelt with its first escape out of the loop: `re` scans for the backslash, as for JSON's)
_CSS_ESCAPES_SPEC = _spec(r"\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?(?:\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?)+")
_CSS_ONE_SPEC = _spec(r"\\([0-9a-fA-F]{1,6})[ \t\n\r\f]?")


def _css_char(m: re.Match[str]) -> str:
    cp = int(m.group(1), 16)
    return chr(cp) if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd"


def _css_run(m: re.Match[str]) -> str:
    return _RE.CSS_ONE.sub(_css_char, m.group())


@memo_large
def css_unescape(text: str) -> str:
    """CSS escapes decoded where two or more stand in a row (one pass; see _CSS_ESCAPES)."""
    if "\\" not in text:
        return text
    return _sub_where_found(text, re2_compiled(_CSS_ESCAPES_SPEC[0]), _RE.CSS_ESCAPES, _css_run)


def _may_hold_other_escapes(text: str) -> bool:
    """Whether `other_escapes` finds an escape to decode in `text` (it may leave one that is
    malformed as it is: a superset)."""
    if "\\" not in text and "%u" not in text and "=" not in text:
        return False
    try:
        return re2_in(re2_compiled(_OTHER_ESCAPE_RE_SPEC[0]), text)
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8
        return other_escapes(text) != text


def _markers(text: str) -> tuple[int, int, int, int]:
    return text.count("\\"), text.count("&"), text.count("%"), text.count("=")


def nested_escapes(text: str, singles: list[str] | None = None) -> bool:
    """Whether `unescape_all` may decode what no decoder alone does: an escape of another
    language (`other_escapes`), or a decoder making an escape character ("\\", "&", "%", "=") the
    text held fewer of (an escape inside an escape of another kind). A text holding escapes of
    several kinds side by side is not: each decoder's form has its own. `singles`: what
    json_unescape, html_unescape and percent_decode make of `text`, when known."""
    if _may_hold_other_escapes(text):
        return True
    before = _markers(text)
    for decoded in singles or (json_unescape(text), html_unescape(text), percent_decode(text)):
        if decoded != text and any(map(int.__gt__, _markers(decoded), before)):
            return True
    return False


# Layers of HTML / percent escaping between JSON layers that `unescape_all` decodes.
ESCAPES_MAX_LAYERS = 16


@memo_large
def unescape_all(text: str) -> str:
    """JSON, HTML and percent escapes decoded together, with the escapes of `other_escapes`: an
    escape of one kind inside another ("\\u0026#108;" -> "&#108;" -> "l", "&#92;u006c" ->
    "\\u006c" -> "l"), which each decoder alone leaves half decoded. One JSON pass (as
    `json_unescape`), then HTML and percent to their fixed points, then JSON again while they
    change the text. The JSON form itself when nothing else changes it (no form of its own:
    `normalize` skips a repeated text). Raises LimitUnknown past ESCAPES_MAX_LAYERS such
    alternations, or where a decoder meets its limit."""
    decoded = other_escapes(json_unescape(text))
    for _ in range(ESCAPES_MAX_LAYERS):
        other = percent_decode(html_unescape(decoded))
        if other == decoded:
            return decoded
        decoded = other_escapes(json_unescape(other))
        if decoded == other:
            return decoded
    if percent_decode(html_unescape(decoded)) != decoded:
        raise LimitUnknown(f"escapes of different kinds nested more than {ESCAPES_MAX_LAYERS} layers deep "
                           "(limit decoding.ESCAPES_MAX_LAYERS)")
    return decoded


def __getattr__(name: str) -> Any:
    # compiled patterns under their former names, built on first use
    if name == "_ENCODED_RUN_HINT":
        return encoded_run_hint()
    if name in ("_B64_RUN", "_HEX_RUN", "_NONPRINTABLE"):  # encoded's, compiled on its first use
        from litmus_rules.domain import encoded

        return encoded._pattern(name)
    if name[:1] == "_" and name[1:] in _RE.names():  # the `re` patterns under their former names
        return getattr(_RE, name[1:])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Every `re` pattern of this module, compiled on first use (lazyre): a check of a clean episode uses
# one or two of them, and compiling all at import was half of this module's import time.
_RE = Patterns(**{name[1:-5]: spec for name, spec in list(globals().items()) if name.endswith("_SPEC")})
