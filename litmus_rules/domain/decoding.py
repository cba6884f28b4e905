"""Decoders that undo an encoding layer, and path canonicalisation.

Every function here maps text to text (or to the decoded spans of it), with bounded work:

========================  ================================  ============
function                  name in traces                    idempotent
========================  ================================  ============
json_unescape             json unescaped                    no ("\\\\u0041" -> "\\u0041" -> "A")
html_unescape             html unescaped                    yes (up to 8 layers, see below)
percent_decode            percent-decoded                   yes (up to 16 layers, see below)
canonical_path            path canonicalised                yes
base64_spans / hex_spans  base64 / hex                      n/a (extract decoded spans)
========================  ================================  ============

`encoded_runs(text)` is what `normalize.forms` decodes base64 and hex from: the base64-alphabet
runs of the text, or none when a linear-time scan proves that no run can decode (the common case
for prose and identifiers, see `_ENCODED_RUN_HINT`).

Limits: HTML_MAX_LAYERS / PERCENT_MAX_LAYERS layers of escaping are decoded to a fixed point;
a text with more raises `LimitUnknown` (its decoded form is unknown, and the rules reject with an
explained reason), never a partly decoded text. Everything else is complete: base64 / hex spans
are all decoded (at most 3/4 of the input), and WHOLE_TEXT_MAX / ASCII_RUN_MAX only choose the
engine of path canonicalisation (same result).
"""

from __future__ import annotations

import binascii
import functools
import html
import posixpath
import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

from litmus_rules.domain.textmemo import MEMO_MIN, memo_large, re2_module, re2_options
from litmus_rules.errors import EvaluationError

_SURROGATE = re.compile("[\ud800-\udfff]")

# --- escapes and encodings ------------------------------------------------------------------------

_JSON_ESCAPE_RE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"  # surrogate pair
    r"|\\u\{([0-9a-fA-F]{1,6})\}"  # ES6 code point escape
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\x([0-9a-fA-F]{2})"
    r"|\\([\"\\/bfnrt'])"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}


def _json_escape(m: re.Match[str]) -> str:
    hi, lo, astral, bmp, byte, simple = m.groups()
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
    return _JSON_ESCAPE_RE.sub(_json_escape, text)


class LimitUnknown(EvaluationError):
    """A derived form of a text could not be computed within a limit: a search that finds nothing
    in the other forms is unknown, never false (the rules reject with an explained reason)."""


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
    return _fixed_point(text, "&", html.unescape, HTML_MAX_LAYERS, "HTML escaping", "HTML_MAX_LAYERS")


def _unquote(text: str) -> str:
    return urllib.parse.unquote(text, errors="replace")


@memo_large
def percent_decode(text: str) -> str:
    """URL percent-decoding to a fixed point ("%2541" -> "%41" -> "A").

    Invalid UTF-8 byte sequences decode to U+FFFD; "+" is left alone (it is not a space outside
    form bodies, and guessing would hide real plus signs). Raises LimitUnknown when more than
    PERCENT_MAX_LAYERS passes would still change the text.
    """
    return _fixed_point(text, "%", _unquote, PERCENT_MAX_LAYERS, "percent-encoding", "PERCENT_MAX_LAYERS")


# --- base64 / hex spans ---------------------------------------------------------------------

# MIME and PEM wrap base64 at 64/76 columns: a run may continue on the next line.
_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{8,}")
_URL_TO_STD = str.maketrans("-_", "+/")
_NONPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")
# Not a limit: the decoded spans of a text are at most 3/4 of its length (each run is decoded
# once, at one alignment), so `normalize.forms` decodes every span. Kept as a name for callers
# that pass an explicit bound; `max_chars=None` is unbounded.
MAX_DECODED_CHARS = 1 << 22


def _printable(raw: bytes) -> str | None:
    """The UTF-8 text of `raw` if it is mostly (>= 80 %) printable, else None."""
    text = raw.decode("utf-8", "replace")
    if not text:
        return None
    if text.isprintable() and "\ufffd" not in text:  # no character of _NONPRINTABLE: skip the count
        return text
    bad = len(_NONPRINTABLE.findall(text))
    if bad * 5 > len(text):
        return None
    return _NONPRINTABLE.sub(" ", text) if bad else text


def _looks_like_word(run: str) -> bool:
    # Words and identifiers ("information", "Configuration", "positive_labels", "pre-flight")
    # are valid base64 but almost never real encodings; skipping them keeps prose cheap. Real
    # base64 of 6+ bytes practically always has an upper-case letter past its first character.
    return run[1:].islower() or run.isupper() or run.isdigit()


# Runs up to this long are remembered with what they decode to: a text's runs are decoded again
# for its cleaned form, and for the joined surfaces it is one of (joined.py).
DECODED_RUN_MEMO_MAX = 256


def _decode_b64_run(run: str) -> str | None:
    if len(run) <= DECODED_RUN_MEMO_MAX:
        return _decode_short_b64_run(run)
    return _decode_b64_run_once(run)


@functools.lru_cache(maxsize=1 << 14)
def _decode_short_b64_run(run: str) -> str | None:
    return _decode_b64_run_once(run)


def _decode_b64_run_once(run: str) -> str | None:
    std = run.translate(_URL_TO_STD)
    for align in range(4):
        chunk = std[align:]
        rem = len(chunk) % 4
        if rem == 1:
            chunk = chunk[:-1]
        elif rem:
            chunk += "=" * (4 - rem)
        if len(chunk) < 8:
            return None
        try:
            decoded = _printable(binascii.a2b_base64(chunk))
        except (binascii.Error, ValueError):
            continue
        if decoded is not None:
            return decoded
    return None


def base64_spans(text: str, max_chars: int | None = None) -> list[str]:
    """Decode every plausible base64 / base64url run (>= 8 chars) of `text`.

    A run may start mid-group when the blob is glued to other word characters, so each of the 4
    alignments is tried; the first that decodes to mostly printable UTF-8 is kept. A token at any
    byte position inside a longer encoded blob is therefore found (the blob decodes whole).
    Runs wrapped over several lines (MIME/PEM) are joined first; when the joined run does not
    decode, each line is tried on its own (one value per line).
    Decoding stops after `max_chars` decoded characters in total (None: every run is decoded).
    """
    return _base64_runs(_B64_RUN.findall(text), max_chars)


def _base64_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    for run in runs:
        if "\n" in run:
            lines = run.split()
            joined = "".join(lines)
            decoded = None if _looks_like_word(joined) else _decode_b64_run(joined)
            found = [decoded] if decoded is not None else [
                _decode_b64_run(line) for line in lines if not _looks_like_word(line)
            ]
        elif run[1:].islower() or run.isupper() or run.isdigit():  # _looks_like_word, inlined: hot
            continue
        else:
            found = [_decode_b64_run(run)]
        for decoded in found:
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
        if bounded and budget <= 0:
            break
    return out


def hex_spans(text: str, max_chars: int | None = None) -> list[str]:
    """Decode every plausible hex run (>= 8 hex digits) at both nibble alignments; keep the
    first alignment that is mostly printable UTF-8. Stops after `max_chars` decoded characters
    (None: every run)."""
    return _hex_runs(_B64_RUN.findall(text), max_chars)


def _hex_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    """Hex runs live inside base64-alphabet runs (hex digits are base64 characters)."""
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    hex_runs = [h for run in runs if len(run) >= 8 for h in _HEX_RUN.findall(run)]
    for run in hex_runs:
        for align in (0, 1):
            chunk = run[align:]
            chunk = chunk[: len(chunk) - len(chunk) % 2]
            decoded = _printable(bytes.fromhex(chunk))
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
                break
        if bounded and budget <= 0:
            break
    return out


# A run can give a decoded span only if `_base64_runs` tries to decode it (it is not word-like) or
# if it holds 8+ hex digits (`_hex_runs`). Each alternative below is implied by one of those:
#   1. a lower-case letter, later an upper-case one, in one run: the run is neither lower-case
#      past its first character nor all upper-case;
#   2. an upper-case letter past a run's first character, later a lower-case one: likewise;
#   3. a run whose characters past the first are digits or +/_- and whose first character is not
#      upper-case (all digits is admitted too: a superset is fine);
#   4. 8 hex digits;
#   5. a run continued on the next line (joined, or tried line by line).
# Single-line runs: not word-like = (an upper-case letter past the start and a lower-case letter:
# 1 or 2) or (no letter past the start, first character not upper-case, not all digits: 3).
# So a text without a match has no run that decodes, and `candidate_runs` skips the `re` scan
# (10-30x slower than this one on prose). test_normalize checks the implication on random text.
_RUN_CHAR = "[A-Za-z0-9+/_-]"
_ENCODED_RUN_HINT_PATTERN = (
    rf"[a-z]{_RUN_CHAR}*[A-Z]"
    rf"|{_RUN_CHAR}[A-Z]{_RUN_CHAR}*[a-z]"
    r"|(?:^|[^A-Za-z0-9+/_-])[a-z0-9+/_-][0-9+/_-]{7}"
    r"|[0-9A-Fa-f]{8}"
    rf"|{_RUN_CHAR}{{8}}\r?\n{_RUN_CHAR}{{4}}"
)


@functools.cache
def encoded_run_hint() -> Any:
    """`_ENCODED_RUN_HINT_PATTERN`, compiled for RE2 on first use."""
    return re2_module().compile(_ENCODED_RUN_HINT_PATTERN, re2_options())


def may_hold_encoded_runs(text: str | bytes) -> bool:
    """False only when no base64-alphabet run of `text` can decode to a base64 or hex span."""
    try:
        return encoded_run_hint().search(text) is not None
    except UnicodeEncodeError:  # lone surrogates cannot go through RE2's UTF-8: scan with `re`
        return True


@memo_large
def candidate_runs(text: str) -> list[str]:
    """The base64-alphabet runs of `text` that `_base64_runs` / `_hex_runs` decode from: every run,
    or [] when `may_hold_encoded_runs` shows that none of them gives a span (same spans either way)."""
    return _B64_RUN.findall(text) if may_hold_encoded_runs(text) else []


# --- paths -------------------------------------------------------------------------------------

# A path-like token: an optional file: scheme, an optional drive or ~ / . / .. prefix, then at
# least one separator followed by a segment; or a relative a/b. Other URLs are matched whole so
# that their "//authority" is left alone. RE2: linear time, and ~10x faster than `re` on prose.
_SEG = r"[\p{L}\p{N}_.~%$@+=-]+"
_PATH_BODY = (
    r"(?:\b(?i:file):(?://(?i:localhost)?)?)?(?:\b[A-Za-z]:|~|\.{1,2})?(?:[\\/]+" + _SEG + r")+[\\/]*"
    r"|\b" + _SEG + r"(?:[\\/]+" + _SEG + r")+[\\/]*"
)
_PATH_PATTERN = r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>`]*)|" + _PATH_BODY


@functools.cache
def _path_res() -> tuple[Any, Any]:
    """(the path-token pattern, the path body alone), compiled for RE2 on first use."""
    re2 = re2_module()
    return re2.compile(_PATH_PATTERN, re2_options()), re2.compile(_PATH_BODY, re2_options())


def __getattr__(name: str) -> Any:
    # the compiled RE2 patterns under their former names, built on first use
    if name == "_PATH_RE":
        return _path_res()[0]
    if name == "_PATH_ONLY_RE":
        return _path_res()[1]
    if name == "_ENCODED_RUN_HINT":
        return encoded_run_hint()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# The same on ASCII text, for `re` (leftmost-first like RE2; \b and \s spelled as RE2 reads them):
# no RE2 wrapper overhead per call, for the many short runs of a long text (`canonical_path`);
# test_normalize compares the two.
_PATH_RE_ASCII = re.compile(
    (r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\t\n\f\r \"'<>`]*)|" + _PATH_BODY).replace(r"\p{L}\p{N}", "A-Za-z0-9"),
    re.ASCII,
)


def _canonical(p: str) -> str:
    if p[:5].lower() == "file:":
        p = p[5:]
        if p[:11].lower() == "//localhost":
            p = p[11:]
    p = p.replace("\\", "/")
    if p[:2] == "//":
        # normpath keeps a leading "//" (POSIX leaves its meaning open): make it one slash; normpath
        # folds the doubled slashes inside
        p = "/" + p.lstrip("/")
    return posixpath.normpath(p) if p else p


def _canonical_token(m: Any) -> str:
    p = m.group()
    if m.group(1) is None:
        return _canonical(p)
    # a URL: only file: URLs name a local path
    if p[:5].lower() == "file:":
        return _path_res()[1].sub(lambda inner: _canonical(inner.group()), p)
    return p


# Everything `_canonical` can change starts with one of these: a backslash, "./", a "." or ".."
# segment, a doubled or trailing slash, a file: scheme. Texts without any (most prose, most
# URLs) are returned as they are; `re` finds the leading characters quickly.
_PATH_MAY_CHANGE = re.compile(r"\\|\./|/(?:[./]|(?![\w~%$@+=-]))|[Ff][Ii][Ll][Ee]:")


# Path-like tokens never hold one of these (RE2's \s, and the characters that end a URL), so a
# path token lies inside one run of other characters, and canonicalising each run on its own is
# canonicalising the text: at a run's edges, as at the text's, \b sees a non-word character.
_TOKEN_BOUNDARY = re.compile("[\t\n\f\r \"'<>`]")
# Texts up to this long are canonicalised in one substitution; longer ones run by run, only the
# runs where `_PATH_MAY_CHANGE` finds something (RE2's sub calls back into Python per token).
WHOLE_TEXT_MAX = 1 << 12
# Short ASCII runs go through `_PATH_RE_ASCII` (~1 us a call, RE2's wrapper ~10-30 us); `re` may
# backtrack quadratically in a run ("a.a.a...": ~70 us at 64 characters), RE2 never does.
ASCII_RUN_MAX = 64


def _canonical_sub(text: str) -> str:
    path_re = _path_res()[0]
    try:
        return path_re.sub(_canonical_token, text)  # type: ignore[no-any-return]
    except UnicodeEncodeError:
        return path_re.sub(_canonical_token, _SURROGATE.sub("\ufffd", text))  # type: ignore[no-any-return]


# Runs up to this long are remembered (a long text repeats its paths, and its decoded and
# normalised forms hold the same runs again).
RUN_MEMO_MAX = 256


def _canonical_run(run: str) -> str:
    if len(run) <= RUN_MEMO_MAX:
        return _canonical_short_run(run)
    return _canonical_sub(run)


@functools.lru_cache(maxsize=1 << 15)
def _canonical_short_run(run: str) -> str:
    if len(run) <= ASCII_RUN_MAX and run.isascii():
        m = _PATH_RE_ASCII.match(run)
        if m is not None and m.end() == len(run):  # the run is one token: what sub() would replace
            return _canonical_token(m)
        return _PATH_RE_ASCII.sub(_canonical_token, run)
    return _canonical_sub(run)


def _canonical_runs(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, canonicalised) for the parts of `text` that canonicalisation may change: the
    whole text if it is short, else the runs between token boundaries where `_PATH_MAY_CHANGE`
    finds something. The rest of the text is left as it is."""
    if "/" not in text and "\\" not in text:
        return
    hit = _PATH_MAY_CHANGE.search(text)
    if hit is None:
        return
    n = len(text)
    if n <= WHOLE_TEXT_MAX:
        yield 0, n, _canonical_sub(text)
        return
    done = 0
    backwards = text[::-1]  # a run's start: the first boundary before a hit, searched backwards
    while hit is not None:
        pos = hit.start()
        before = _TOKEN_BOUNDARY.search(backwards, n - pos, n - done)
        start = n - before.start() if before is not None else done
        boundary = _TOKEN_BOUNDARY.search(text, pos)
        end = boundary.start() if boundary is not None else n
        yield start, end, _canonical_run(text[start:end])
        done = end
        hit = _PATH_MAY_CHANGE.search(text, end)


# A long text with more than one slash or backslash in DENSE_PATHS characters is canonicalised
# run by run from one split at the token boundaries (a list of its runs, each looked at once);
# a sparser one by searching for the runs that may change (prose: one scan, few runs).
DENSE_PATHS = 64
_BOUNDARIES = re.compile("([\t\n\f\r \"'<>`]+)")


@memo_large
def canonical_path(text: str) -> str:
    """Canonicalise every path-like token: file:///etc//passwd, //etc/passwd, /etc/../etc/passwd,
    /etc/./passwd and \\etc\\passwd all become /etc/passwd. Idempotent."""
    if len(text) > WHOLE_TEXT_MAX and (text.count("/") + text.count("\\")) * DENSE_PATHS > len(text):
        parts = _BOUNDARIES.split(text)
        may_change = _PATH_MAY_CHANGE.search
        parts[::2] = [_canonical_run(run) if may_change(run) else run for run in parts[::2]]
        return "".join(parts)
    pieces = []
    done = 0
    for start, end, canonical in _canonical_runs(text):
        pieces.append(text[done:start])
        pieces.append(canonical)
        done = end
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def path_changes(text: str) -> bool:
    """canonical_path(text) != text, stopping at the first change (a large text: its kept
    canonical form, textmemo.memo_large)."""
    if len(text) >= MEMO_MIN:
        return canonical_path(text) != text
    return any(canonical != text[start:end] for start, end, canonical in _canonical_runs(text))
