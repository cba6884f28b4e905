"""Encodings written in groups, base32, and tokens spelt out a character at a time: what a
person or a dump tool spaces out, which the run decoders of encoded.py (one unbroken run of the
base64 alphabet each) do not read whole.

- base64 in groups of 4, 8, ... characters separated by spaces or tabs ("bGMt NWYw ZTlh"), two
  groups or more (the last may be short, and padded);
- hex in groups of 1, 2 or 4 bytes with one separator throughout: "6c:63:2d", "6c 63 2d",
  "6c-63-2d" (five bytes or more), xxd's "6c63 2d35", "6c632d35 66306539"; "0x6c, 0x63" (four
  or more);
- decimal character codes 32-126 with one separator throughout ("108, 99, 45, 53, 102"), five
  or more (`String.fromCharCode(...)`, a list of bytes);
- base32 runs of 12 characters or more ("NRRS2NLGGBSTSYJR"), decoded from their start;
- a token spelt out a character at a time with one separator ("l c - 5 f 0", "l.c.-.5.f.0"),
  eight characters or more;
- bytes in binary, eight digits each, with one separator or none throughout ("01101100 01100011"),
  five or more;
- escapes of one character each, spaced out with one separator throughout ("\\x6c \\x63 \\x2d",
  "&#108; &#99;", "%6C %63", "\\154 \\143"), five or more: decoded one by one.

Each group run is joined without its separators and decoded (base64 and hex as encoded.py decodes
a run: every alignment, kept when mostly printable UTF-8), so a token anywhere inside it is found.
Prose is full of group runs ("Send your data here", "at 12 30 45 60 75"), so a base64 run is
decoded only when it looks encoded, and what any run decodes to is kept only when it reads as text:

- a base64 run holds a quad (four characters from a group's start) with an upper-case letter, a
  digit, "+" or "/" past its first character (nearly every quad of real base64 does; "Read your
  mail" has none): `_X`, part of the run's pattern;
- a decoded span has MIN_DECODED characters or more, three quarters of them ASCII letters, digits,
  spaces or "-_./:@", one a letter or digit (a run that only looks encoded gives bytes of
  punctuation, if printable).

Linear: RE2 scans find the runs; `grouped_hint` finds, in a join of texts, every text that may give
a span (joined.py tells plain texts apart with it), and `grouped_many` decodes the runs of many short
texts at once (one scan of their join per kind of run), to what each alone makes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from litmus_rules.domain.encoded import _decode_b64_many, _hex_found
from litmus_rules.domain.joins import _encoded_join
from litmus_rules.domain.re2calls import spans
from litmus_rules.domain.textmemo import (
    MEMO_MIN,
    ShortTextMemo,
    memo_large,
    re2_in,
    re2_module,
    re2_options,
    utf8,
)

_B = "[A-Za-z0-9+/_-]"
_SPACE = "[ \\t]+"
_WORD_START = "(?:^|[^A-Za-z0-9+/_=-])"
# a base64 quad that looks encoded: a character past its first that prose words seldom hold there
_X = f"(?:{_B}[A-Z0-9+/]{_B}{{2}}|{_B}[a-z_-][A-Z0-9+/]{_B}|{_B}[a-z_-]{{2}}[A-Z0-9+/])"
# A base64 group run that looks encoded, from where a word starts: two groups or more of
# whole quads (the last may be short, and padded), one quad of them `_X`.
_QUADS = f"{_B}{{4}}(?:{_B}{{4}})*"
_QUADS_X = f"(?:{_B}{{4}})*{_X}(?:{_B}{{4}})*"
_LAST = f"{_B}{{2,}}={{0,2}}"
_LAST_X = f"(?:{_B}{{4}})*{_X}{_B}*={{0,2}}"
_B64_RUN = (f"{_WORD_START}(?:(?:{_QUADS}{_SPACE})*{_QUADS_X}(?:{_SPACE}{_QUADS})*{_SPACE}{_LAST}"
            f"|{_QUADS}(?:{_SPACE}{_QUADS})*{_SPACE}{_LAST_X})")
# A hex group run, from where a word starts: one group size and one separator throughout
# ("2022-02-17 09:00:00" mixes them and is no run), five bytes or more; or four 0x-prefixed bytes.
_H = "[0-9A-Fa-f]{2}"
_HEX_SEPARATORS = (":", "-", r"\.", ",", ";", ", ", " ", r"\t")
_HEX_SIZES = ((1, 4), (2, 2), (4, 1))  # (bytes a group, groups after the first)
_HEX_RUN = ("(?:^|[^0-9A-Za-z])(?:"
            + "|".join(f"(?:{_H}){{{size}}}(?:{sep}(?:{_H}){{{size}}}){{{more},}}(?:{sep}(?:{_H}){{1,{size}}})?"
                       for size, more in _HEX_SIZES for sep in _HEX_SEPARATORS)
            + f"|0[xX]{_H}(?:,?[ \\t]*0[xX]{_H}){{3,}})")
# decimal codes of printable ASCII (32-126), five or more with one separator throughout
_CODE = "(?:3[2-9]|[4-9][0-9]|1[01][0-9]|12[0-6])"
_DECIMAL_RUN = ("(?:^|[^0-9A-Za-z.])(?:"
                + "|".join(f"{_CODE}(?:{sep}{_CODE}){{4,}}" for sep in (", ", ",", " ", ";", "; ")) + ")")
_BASE32_RUN = "(?:^|[^A-Za-z0-9])[A-Z2-7]{12,}={0,6}"
# a token spelt out one character at a time, one separator throughout ("l c - 5 f 0", "l.c.-.5.f.0"):
# eight characters or more, from where a word starts
_SPACED_CHAR = "[A-Za-z0-9_-]"
_SPACED_RUN = ("(?:^|[^A-Za-z0-9_-])(?:"
               + "|".join(f"(?:{_SPACED_CHAR}{sep}){{7,}}{_SPACED_CHAR}"
                          for sep in (" ", r"\.", "-", "_", r"\|", ",", ":", "/", r"\*", "\u00b7"))
               + ")")
# bytes written in binary, eight digits each, five or more, one separator (or none) throughout
_BINARY_RUN = ("(?:^|[^0-9A-Za-z])(?:"
               + "|".join(f"[01]{{8}}(?:{sep}[01]{{8}}){{4,}}" for sep in ("", " ", ",", ", ", "-", ":", r"\t")) + ")")
# escapes of one character (or byte) each, spaced out: "\\x6c \\x63", "&#108; &#99;", "%6C %63",
# "\\154 \\143": five or more with one separator throughout (the escape decoders leave a token
# spelt out, which the spelt-out runs do not read where a separator is two characters)
_ESCAPE = (r"(?:\\[xX][0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}|\\[0-3][0-7]{2}|&#[0-9]{1,7};"
           r"|&#[xX][0-9A-Fa-f]{1,6};|%[0-9A-Fa-f]{2}|%u[0-9A-Fa-f]{4})")
_ESCAPE_RUN = "(?:" + "|".join(f"{_ESCAPE}(?:{sep}{_ESCAPE}){{4,}}" for sep in (" ", ", ", ",", "-", ":", "; ", r"\t")) + ")"
# every run decoded is a match of one of these (joined.py: a text without a match is plain)
_RUN_PATTERNS = (_B64_RUN, _HEX_RUN, _DECIMAL_RUN, _BASE32_RUN, _SPACED_RUN, _BINARY_RUN, _ESCAPE_RUN)
_HINT = "|".join(_RUN_PATTERNS)
MIN_DECODED = 6
# what a decoded span's characters are counted against (`_reads_as_text`)
_NOT_WORDISH = re.compile(r"[^A-Za-z0-9 \-_./:@]")
_ALNUM = re.compile(r"[A-Za-z0-9]")


@functools.cache
def _patterns() -> tuple[Any, ...]:
    re2 = re2_module()
    return tuple(re2.compile(p, re2_options()) for p in _RUN_PATTERNS)


@functools.cache
def grouped_hint() -> Any:
    """The RE2 pattern that matches wherever `grouped_text` finds a run it decodes."""
    return re2_module().compile(_HINT, re2_options())


@functools.cache
def _pattern_set() -> Any:
    """The run patterns as one RE2 set: which of them match, in one scan."""
    found = re2_module().Set.SearchSet(re2_options())
    for pattern in _RUN_PATTERNS:
        found.Add(pattern)
    found.Compile()
    return found


def _which(text: str) -> tuple[bool, ...]:
    """For each run pattern, whether `grouped_text` looks for its runs in a text the hint matched:
    those that match it (one scan of the set instead of a `findall` per pattern: a path such as
    "1000 /x/" looks like base64 groups to the hint, and the slashes rule it out only later), or
    all of them where the set says none (it does so when it runs out of memory too)."""
    try:
        matched = _pattern_set().Match(utf8(text) if len(text) >= MEMO_MIN else text)
    except UnicodeEncodeError:  # lone surrogates: `_runs` reads the text without them
        matched = None
    if not matched:
        return (True,) * len(_RUN_PATTERNS)
    return tuple(i in matched for i in range(len(_RUN_PATTERNS)))


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


def _runs(pattern: Any, text: str, first: str) -> list[str]:
    """The runs `pattern` finds (no capture group: RE2 finds them 2-3x faster), in the text's
    UTF-8 (a large text's kept one), match by match without the wrapper (`re2calls.spans`: the
    join of 20,000 short texts holds as many matches). A match starts with the character before
    its run, if any (`first`: the characters a run starts with, none of which may stand before one)."""
    try:
        data = utf8(text) if len(text) >= MEMO_MIN else text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8; search the text without them
        data = text.encode("utf-8", "replace")
    runs = [data[start:end].decode() for start, end in spans(pattern, data)]
    return [run if run[:1] in first else run[1:] for run in runs]


# Base64 runs with more slashes than this share are paths ("/lib lib/usr95/usr/config"); in
# real base64 "/" is one character in 64.
SLASHES_MAX = 1 / 8


def _b64_candidates(run: str) -> list[str]:
    """A base64 group run joined, and joined without the lower-case words at its ends ("code" in
    "Use the code QUFf MDAw", "when" in "MDBB when asked": prose that looks like a group), which
    would shift or spoil what the run decodes to."""
    groups = run.split()
    core = [i for i, group in enumerate(groups) if not (group.isalpha() and group.islower())]
    whole = "".join(groups)
    if not core or (core[0] == 0 and core[-1] == len(groups) - 1):
        return [whole]
    inner = "".join(groups[core[0]:core[-1] + 1])
    return [whole, inner] if len(inner) >= 8 else [whole]


def _reads_as_text(span: str) -> bool:
    return (len(span) >= MIN_DECODED and 4 * len(_NOT_WORDISH.findall(span)) <= len(span)
            and _ALNUM.search(span) is not None)


def _base32(run: str) -> str:
    """What a base32 run decodes to from its start (a last block that cannot be whole is left out)."""
    data = run.rstrip("=")
    tail = len(data) % 8
    # a last block of 2, 4, 5 or 7 characters is whole bytes once padded; of 1, 3 or 6, it is not
    data = data if tail in (2, 4, 5, 7) else data[:len(data) - tail]
    return _b32decode(data).decode("utf-8", "replace")


# the base32 alphabet as the digits of `int(..., 32)`
_BASE32_DIGITS = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789abcdefghijklmnopqrstuv")


def _b32decode(data: str) -> bytes:
    """`base64.b32decode` of base32 characters (`[A-Z2-7]`, unpadded: a last block of 2, 4, 5 or 7
    characters gives its whole bytes, as padded), read as one base-32 number in C: the stdlib's
    decoder loops in Python over every 8 characters (100 ms a MB, 3 ms here)."""
    size = len(data) * 5 // 8
    if not size:
        return b""
    value = int(data.encode("ascii").translate(_BASE32_DIGITS), 32)
    return (value >> (len(data) * 5 - size * 8)).to_bytes(size, "big")


def _binary(run: str) -> str:
    bits = run.translate(_NOT_BITS)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8)).decode("utf-8", "replace")


_NOT_BITS = {ord(c): None for c in " ,-:\t"}
_ONE_ESCAPE = re.compile(_ESCAPE)


def _escapes(run: str) -> str:
    """A run of spaced escapes, each decoded and the separators dropped: byte escapes (\\x, octal,
    %XX) as UTF-8, the others as code points."""
    out: list[str] = []
    pending = bytearray()
    for escape in _ONE_ESCAPE.findall(run):
        head = escape[:2]
        if head in ("\\x", "\\X") or (escape[0] == "\\" and escape[1] in "0123"):
            pending.append(int(escape[2:], 16) if escape[1] in "xX" else int(escape[1:], 8))
            continue
        if escape[0] == "%" and escape[1] not in "uU":
            pending.append(int(escape[1:], 16))
            continue
        if pending:
            out.append(pending.decode("utf-8", "replace"))
            pending.clear()
        if escape[0] == "&":
            digits = escape[2:-1]
            cp = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
        else:
            cp = int(escape[2:], 16)
        out.append(chr(cp) if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF else "\ufffd")
    out.append(pending.decode("utf-8", "replace"))
    return "".join(out)


def _b64_spans(runs: list[str]) -> list[list[str | None]]:
    candidates = [_b64_candidates(run) if run.count("/") <= SLASHES_MAX * len(run) else [] for run in runs]
    decoded = iter(_decode_b64_many([c for each in candidates for c in each]))
    return [[next(decoded) for _ in each] for each in candidates]


def _hex_spans(runs: list[str]) -> list[list[str | None]]:
    return [[span] for span in _hex_found([re.sub(r"0[xX]|[^0-9A-Fa-f]", "", run) for run in runs])]


def _decimal(run: str) -> str:
    return "".join(map(chr, map(int, re.findall(r"[0-9]+", run))))


def _spaced(run: str) -> str:
    return run[::2]  # (every separator of a spelt-out token is one character)


def _each_run(decode: Callable[[str], str]) -> Callable[[list[str]], list[list[str | None]]]:
    return lambda runs: [[decode(run)] for run in runs]


# Each kind of run (in `_RUN_PATTERNS` order): the characters its runs start with (a match starts
# with the character before its run, if any: `_runs`), and what it decodes the runs given to: the
# spans of each run (None: a span that does not decode), all the runs of a kind at once (one batch
# of base64 and of hex decoding)
_KINDS: tuple[tuple[str, Callable[[list[str]], list[list[str | None]]]], ...] = (
    (_LETTERS + _DIGITS + "+/_-", _b64_spans),
    (_DIGITS + "ABCDEFabcdef", _hex_spans),
    (_DIGITS, _each_run(_decimal)),
    ("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", _each_run(_base32)),
    (_LETTERS + _DIGITS + "_-", _each_run(_spaced)),
    ("01", _each_run(_binary)),
    ("\\&%", _each_run(_escapes)),
)


def _shown(spans: Iterable[str | None]) -> str:
    return "\n".join(span for span in spans if span is not None and _reads_as_text(span))


# What `grouped_text` makes of short texts, kept (as encoded_spans.py keeps base64 and hex): the
# haystack asks whether it makes anything, and then for what it makes.
SHORT_MAX = 1 << 12
GROUPED_MEMO_ENTRIES = 1 << 15
GROUPED_MEMO_CHARS = 1 << 22
_memo: ShortTextMemo[str] = ShortTextMemo(GROUPED_MEMO_ENTRIES, GROUPED_MEMO_CHARS)


@memo_large
def grouped_text(text: str) -> str:
    """The decoded spans of the group runs and base32 runs of `text`, one a line ("" if none)."""
    hit = _memo.get(text)
    if hit is not None:
        return hit
    try:
        if not re2_in(grouped_hint(), text):
            return ""
    except UnicodeEncodeError:  # lone surrogates: look at the runs (below)
        pass
    spans: list[str | None] = []
    for pattern, (first, decode), wanted in zip(_patterns(), _KINDS, _which(text)):
        if wanted:
            for each in decode(_runs(pattern, text, first)):
                spans += each
    out = _shown(spans)
    if len(text) < SHORT_MAX:
        _memo.keep([text], [out])
    return out


def grouped_many(texts: Sequence[str]) -> list[str]:
    """`[grouped_text(t) for t in texts]` (none holding a NUL), the runs of all of them found by
    one scan per kind of their join by NUL and decoded together: no run holds a NUL, and a NUL
    before a text's first run stands where the text's start stood (every run pattern reads both
    alike), so each text's runs are those found in it alone, in order; a text where no pattern
    matches has none, as the hint and `_which` would say. 20,000 short texts with a four-digit
    number and a base64-looking word (9,000 of which decode as groups): one scan and one batch
    per kind, not 20,000 calls. Kept for the short texts (`_memo`)."""
    try:
        join = _encoded_join(texts)
    except UnicodeEncodeError:  # (lone surrogates: each text as `grouped_text` reads it)
        join = None
    if join is None:  # (and a text holding a NUL)
        return [grouped_text(text) for text in texts]
    made: list[list[str | None]] = [[] for _ in texts]
    for pattern, (first, decode) in zip(_patterns(), _KINDS):
        found = spans(pattern, join.data)
        if not found:
            continue
        # a run belongs to the text its last byte is in (it may start at the NUL before it)
        owners = [join.segment_at(end - 1) for _, end in found]
        runs = [join.data[start:end].decode() for start, end in found]
        runs = [run if run[:1] in first else run[1:] for run in runs]
        for owner, each in zip(owners, decode(runs)):
            made[owner] += each
    out = list(map(_shown, made))
    short = [k for k, text in enumerate(texts) if len(text) < SHORT_MAX]
    _memo.keep([texts[k] for k in short], [out[k] for k in short])
    return out


def clear_memo() -> None:
    """Forget every kept result (tests, benchmarks)."""
    _memo.clear()
