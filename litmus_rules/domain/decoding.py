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
from itertools import accumulate, compress, repeat
from operator import getitem
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
    return _printable_text(raw.decode("utf-8", "replace"))


def _printable_text(text: str) -> str | None:
    """`_printable` of the text `raw` decodes to (with U+FFFD for each invalid sequence)."""
    if not text:
        return None
    if text.isprintable() and "\ufffd" not in text:  # no character of _NONPRINTABLE: skip the count
        return text
    # each U+FFFD is one of _NONPRINTABLE: random bytes (a run that only looks like base64) are
    # mostly invalid UTF-8, and rejected here without the count
    if text.count("\ufffd") * 5 > len(text):
        return None
    bad = len(_NONPRINTABLE.findall(text))
    if bad * 5 > len(text):
        return None
    return _NONPRINTABLE.sub(" ", text) if bad else text


def _printable_many(raws: list[bytes | None]) -> list[str | None]:
    """`_printable` of each (None stays None). A few calls into C for all of them find the texts
    that have too many characters of _NONPRINTABLE for sure: a U+FFFD for each invalid UTF-8
    sequence, and the ASCII control bytes (each decodes to itself). Random bytes (a run that
    only looks like base64) are rejected there; `_printable_text` counts exactly in the others."""
    data = [b"" if raw is None else raw for raw in raws]
    texts = list(map(bytes.decode, data, repeat("utf-8"), repeat("replace")))
    invalid = map(str.count, texts, repeat("\ufffd"))
    controls = map(len, map(bytes.translate, data, repeat(None), repeat(_NOT_CONTROL_BYTES)))
    return [None if (f + c) * 5 > len(text) else _printable_text(text)
            for text, f, c in zip(texts, invalid, controls)]


# every byte but the ASCII controls of _NONPRINTABLE (deleted: what is left is counted)
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if not (b <= 0x08 or b in (0x0B, 0x0C) or 0x0E <= b <= 0x1F or b == 0x7F))


def _looks_like_word(run: str) -> bool:
    # Words and identifiers ("information", "Configuration", "positive_labels", "pre-flight")
    # are valid base64 but almost never real encodings; skipping them keeps prose cheap. Real
    # base64 of 6+ bytes practically always has an upper-case letter past its first character.
    return run[1:].islower() or run.isupper() or run.isdigit()


# Runs up to this long are remembered with what they decode to: a text's runs are decoded again
# for its cleaned form, and for the joined surfaces it is one of (joined.py). A memo of a pure
# function: when it holds RUN_MEMO_ENTRIES runs it is emptied, and a run is decoded again.
DECODED_RUN_MEMO_MAX = 256
RUN_MEMO_ENTRIES = 1 << 15
_decoded_memo: dict[str, str | None] = {}
_UNKNOWN: Any = object()
# a run's length mod 4 -> what makes it whole groups (None: drop the last character, which
# carries too few bits for a byte)
_PADDING = ("", None, "==", "=")


def _a2b_many(chunks: list[str]) -> list[bytes | None]:
    """binascii.a2b_base64 of each (None where it fails), in one call into C while none fails."""
    try:
        return list(map(binascii.a2b_base64, chunks))
    except (binascii.Error, ValueError):
        out: list[bytes | None] = []
        for chunk in chunks:
            try:
                out.append(binascii.a2b_base64(chunk))
            except (binascii.Error, ValueError):
                out.append(None)
        return out


def _decode_b64_many(runs: list[str]) -> list[str | None]:
    """What each run decodes to: at the first of its 4 alignments whose bytes are mostly printable
    UTF-8 (None: none is). All the runs go through each alignment together: a few calls into C
    per alignment, not a dozen per run (a text can hold 100k runs that only look like base64)."""
    out: list[str | None] = [None] * len(runs)
    todo: list[int] = []
    for i, run in enumerate(runs):
        known = _decoded_memo.get(run, _UNKNOWN) if len(run) <= DECODED_RUN_MEMO_MAX else _UNKNOWN
        if known is _UNKNOWN:
            todo.append(i)
        else:
            out[i] = known
    joined = "\n".join([runs[i] for i in todo])
    if "-" in joined or "_" in joined:  # base64url: one translation of all the runs, not one each
        std = joined.translate(_URL_TO_STD).split("\n")
        if len(std) != len(todo):  # (a run holding a newline)
            std = [runs[i].translate(_URL_TO_STD) for i in todo]
    else:
        std = [runs[i] for i in todo]
    # runs of one length are cut and padded alike at each alignment: a few calls into C per length
    by_length: dict[int, list[int]] = {}
    for k, run in enumerate(std):
        by_length.setdefault(len(run), []).append(k)
    for align in range(4):
        pending: dict[int, list[int]] = {}
        for length, ks in by_length.items():
            pad = _PADDING[(length - align) % 4]
            end = length - 1 if pad is None else length
            if end - align + len(pad or "") < 8:  # shorter: these runs decode to nothing
                continue
            chunks = list(map(getitem, map(std.__getitem__, ks), repeat(slice(align, end))))
            if pad:
                chunks = list(map(str.__add__, chunks, repeat(pad)))
            left = []
            for k, text in zip(ks, _printable_many(_a2b_many(chunks))):
                if text is None:
                    left.append(k)
                else:
                    out[todo[k]] = text
            if left:
                pending[length] = left
        by_length = pending
    if len(_decoded_memo) + len(todo) > RUN_MEMO_ENTRIES:
        _decoded_memo.clear()
    for i in todo:
        if len(runs[i]) <= DECODED_RUN_MEMO_MAX:
            _decoded_memo[runs[i]] = out[i]
    return out


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


# Runs are decoded in batches (`_decode_b64_many`), the first ones small: a search that needs one
# decoded span (joined.py) decodes few runs past it.
_FIRST_BATCH = 16


def _batches(n: int) -> Iterator[tuple[int, int]]:
    start, size = 0, _FIRST_BATCH
    while start < n:
        yield start, min(n, start + size)
        start += size
        size *= 4


def _base64_found(runs: list[str]) -> list[list[str | None]]:
    """For each run, what `_base64_runs` decodes from it (None: a part that does not decode)."""
    found: list[list[str | None]] = [[] for _ in runs]
    whole: list[str] = []
    whole_of: list[int] = []
    split: list[int] = []  # wrapped runs whose lines are tried one by one
    for i, run in enumerate(runs):
        if "\n" in run:
            joined = "".join(run.split())
            if _looks_like_word(joined):
                split.append(i)
            else:
                whole.append(joined)
                whole_of.append(i)
        elif not (run[1:].islower() or run.isupper() or run.isdigit()):  # _looks_like_word, inlined: hot
            whole.append(run)
            whole_of.append(i)
    for i, decoded in zip(whole_of, _decode_b64_many(whole)):
        if decoded is None and "\n" in runs[i]:
            split.append(i)
        else:
            found[i] = [decoded]
    if split:
        split.sort()
        lines = [[line for line in runs[i].split() if not _looks_like_word(line)] for i in split]
        decoded_lines = iter(_decode_b64_many([line for each in lines for line in each]))
        for i, each in zip(split, lines):
            found[i] = [next(decoded_lines) for _ in each]
    return found


def _base64_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    for start, end in _batches(len(runs)):
        for found in _base64_found(runs[start:end]):
            for decoded in found:
                if decoded is not None:
                    out.append(decoded)
                    budget -= len(decoded)
            if bounded and budget <= 0:
                return out
    return out


def hex_spans(text: str, max_chars: int | None = None) -> list[str]:
    """Decode every plausible hex run (>= 8 hex digits) at both nibble alignments; keep the
    first alignment that is mostly printable UTF-8. Stops after `max_chars` decoded characters
    (None: every run)."""
    return _hex_runs(_B64_RUN.findall(text), max_chars)


def _hex_found(hex_runs: list[str]) -> list[str | None]:
    """What each hex run decodes to, at the first nibble alignment that is mostly printable."""
    out: list[str | None] = [None] * len(hex_runs)
    pending = list(range(len(hex_runs)))
    for align in (0, 1):
        chunks = [hex_runs[k][align: len(hex_runs[k]) - (len(hex_runs[k]) - align) % 2] for k in pending]
        tried, pending = pending, []
        for k, text in zip(tried, _printable_many(list(map(bytes.fromhex, chunks)))):
            if text is None:
                pending.append(k)
            else:
                out[k] = text
    return out


def _hex_runs(runs: list[str], max_chars: int | None = None) -> list[str]:
    """Hex runs live inside base64-alphabet runs (hex digits are base64 characters)."""
    out: list[str] = []
    budget = max_chars if max_chars is not None else -1
    bounded = max_chars is not None
    # one scan of the runs joined by a space (no hex run crosses it) finds what a scan of each does
    hex_runs = _HEX_RUN.findall(" ".join(runs))
    for start, end in _batches(len(hex_runs)):
        for decoded in _hex_found(hex_runs[start:end]):
            if decoded is not None:
                out.append(decoded)
                budget -= len(decoded)
            if bounded and budget <= 0:
                return out
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
_PATH_BODY_ASCII = re.compile(_PATH_BODY.replace(r"\p{L}\p{N}", "A-Za-z0-9"), re.ASCII)


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
        body = _PATH_BODY_ASCII if p.isascii() else _path_res()[1]
        return body.sub(_canonical_match, p)  # type: ignore[no-any-return]
    return p


def _canonical_match(m: Any) -> str:
    return _canonical(m.group())


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
# normalised forms hold the same runs again). A memo of a pure function: when it holds
# RUN_MEMO_ENTRIES runs it is emptied, and a run is canonicalised again.
RUN_MEMO_MAX = 256
_canonical_memo: dict[str, str] = {}


def _canonical_run(run: str) -> str:
    return _canonical_many([run])[0]


def _canonical_many(runs: list[str]) -> list[str]:
    """Each run canonicalised (a run holds no token boundary). The short ASCII runs all at once:
    joined by newlines, split at their path tokens by one `re` pass, the tokens canonicalised
    together (`_canonical_paths`); each long or non-ASCII run by RE2 (`_canonical_sub`)."""
    out = list(map(_canonical_memo.get, runs))
    short: list[int] = []
    for i, run in enumerate(runs):
        if out[i] is None:
            if len(run) <= ASCII_RUN_MAX and run.isascii():
                short.append(i)
            else:
                out[i] = _canonical_sub(run)
    if short:
        for i, canonical in zip(short, _canonical_ascii([runs[i] for i in short])):
            out[i] = canonical
    if len(_canonical_memo) + len(runs) > RUN_MEMO_ENTRIES:
        _canonical_memo.clear()
    for run, canonical in zip(runs, out):
        if len(run) <= RUN_MEMO_MAX:
            _canonical_memo[run] = canonical  # type: ignore[assignment]
    return out  # type: ignore[return-value]


# `_PATH_RE_ASCII` with the whole token as group 1 (the URL is group 2): `split` keeps both
_PATH_SPLIT_ASCII = re.compile("(" + _PATH_RE_ASCII.pattern + ")", re.ASCII)


def _canonical_ascii(runs: list[str]) -> list[str]:
    """`_PATH_RE_ASCII.sub(_canonical_token, run)` of each ASCII run (no boundary character in
    any). Joined by newlines they are one text whose tokens are each run's: a newline is a token
    boundary, and \\b sees it as it sees a run's edges. `split` returns the pieces between the
    tokens, each token and its URL group, in C; the tokens are canonicalised together."""
    parts: list[Any] = _PATH_SPLIT_ASCII.split("\n".join(runs))
    tokens, urls = parts[1::3], parts[2::3]
    paths = [k for k, url in enumerate(urls) if url is None]
    for k, canonical in zip(paths, _canonical_paths([tokens[k] for k in paths])):
        tokens[k] = canonical
    files = [k for k, url in enumerate(urls) if url is not None and url[:5].lower() == "file:"]
    if files:  # only file: URLs name a local path: their path tokens, as those of the runs
        for k, canonical in zip(files, _canonical_urls([tokens[k] for k in files])):
            tokens[k] = canonical
    parts[1::3] = tokens
    del parts[2::3]
    out = "".join(parts).split("\n")
    assert len(out) == len(runs)  # no token holds a newline, and canonicalising makes none
    return out


_PATH_BODY_SPLIT_ASCII = re.compile("(" + _PATH_BODY_ASCII.pattern + ")", re.ASCII)


def _canonical_urls(urls: list[str]) -> list[str]:
    """`_PATH_BODY_ASCII.sub(_canonical_match, url)` of each ASCII URL (no boundary character)."""
    parts = _PATH_BODY_SPLIT_ASCII.split("\n".join(urls))
    parts[1::2] = _canonical_paths(parts[1::2])
    out = "".join(parts).split("\n")
    assert len(out) == len(urls)
    return out


_FILE_PREFIX = re.compile(r"^file:(?://localhost)?", re.IGNORECASE | re.MULTILINE | re.ASCII)
_LEADING_SLASHES = re.compile(r"^//+", re.MULTILINE)


def _canonical_paths(paths: list[str]) -> list[str]:
    """`_canonical` of each ASCII path (no newline in any): each step once, on all of them joined
    by newlines, then normpath (C) of each."""
    joined = "\n".join(paths)
    if ":" in joined:
        joined = _FILE_PREFIX.sub("", joined)
    joined = _LEADING_SLASHES.sub("/", joined.replace("\\", "/"))
    parts = joined.split("\n")
    if len(parts) != len(paths):  # (not seen: the runs hold no newline)
        return [_canonical(p) for p in paths]
    return [posixpath.normpath(p) if p else p for p in parts]


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
# A run that `_PATH_MAY_CHANGE` finds something in, unless it starts with a URL other than file:
# (the URL is then the run's one token, up to its end, and is left as it is).
_RUN_MAY_CHANGE = re.compile(r"(?!(?![Ff][Ii][Ll][Ee]:)[A-Za-z][A-Za-z0-9+.-]*://).*?(?:" + _PATH_MAY_CHANGE.pattern + ")",
                             re.DOTALL)
# each token boundary as a space: ASCII text is translated by a byte table, then split by str.split
_BOUNDARY_TO_SPACE = str.maketrans("\t\n\f\r\"'<>`", "         ")


def _canonical_dense(text: str) -> str:
    """`canonical_path` of a text dense with paths: split once at its token boundaries, the runs
    that may change found by one pass over them all, canonicalised together (`_canonical_many`),
    and put back between the untouched stretches of the text."""
    if text.isascii():
        runs = text.translate(_BOUNDARY_TO_SPACE).split(" ")
    else:
        runs = _TOKEN_BOUNDARY.split(text)
    changing = list(compress(range(len(runs)), map(_RUN_MAY_CHANGE.match, runs)))
    if not changing:
        return text
    # run i starts after the runs before it and one boundary character each
    starts = list(accumulate(map(len, runs), initial=0))
    pieces = []
    done = 0
    for i, canonical in zip(changing, _canonical_many([runs[i] for i in changing])):
        start = starts[i] + i
        pieces.append(text[done:start])
        pieces.append(canonical)
        done = start + len(runs[i])
    pieces.append(text[done:])
    return "".join(pieces)


@memo_large
def canonical_path(text: str) -> str:
    """Canonicalise every path-like token: file:///etc//passwd, //etc/passwd, /etc/../etc/passwd,
    /etc/./passwd and \\etc\\passwd all become /etc/passwd. Idempotent."""
    if len(text) > WHOLE_TEXT_MAX and (text.count("/") + text.count("\\")) * DENSE_PATHS > len(text):
        return _canonical_dense(text)
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
