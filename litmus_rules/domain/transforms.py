"""The named text transforms: format characters, Unicode tags, NFKC, case folding, the full
normalisation chain and the confusable skeleton, and the keys built from them.

Every transform has a human-readable name so that a trace can say *which* transform revealed a
match ("base64 > normalised", "confusable skeleton", ...). The building blocks:

========================  ================================  ============
function                  name in traces                    idempotent
========================  ================================  ============
strip_format_chars        format characters removed         yes
decode_tag_chars          unicode tags decoded              yes
nfkc                      nfkc                              yes
casefold                  casefold                          yes
full_normalise            normalised                        yes
skeleton                  confusable skeleton               yes (on its own output)
json_unescape             json unescaped                    (decoding.py)
html_unescape             html unescaped                    (decoding.py)
percent_decode            percent-decoded                   (decoding.py)
unescape_all              escapes decoded                   (decoding.py)
canonical_path            path canonicalised                (paths.py)
base64_spans / hex_spans  base64 / hex                      (decoding.py)
grouped_text              grouped encodings                 (grouped.py)
========================  ================================  ============

"normalised" is the full chain: format characters removed > unicode tags decoded > NFKC > casefold
(> NFKC again, so the result is stable: NFKC_Casefold in spirit).

Most return early on ASCII text (the common case), and a linear-time RE2 presence test guards the
slower precise substitutions. How these combine into the forms of a text
that a search looks through is `normalize.py`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

from litmus_rules import usercache
from litmus_rules.domain.canonical_order import normalize
from litmus_rules.domain.formatchars import (
    _FORMAT_PATTERN,
    _MAYBE_FORMAT_PATTERN,
    STRIP_EACH_MIN,
    _format_re,
    _maybe_format,
    strip_each,
    strip_found,
)
from litmus_rules.domain.lazyre import Patterns
# (NFKC_MAX_ADDED is named `transforms.NFKC_MAX_ADDED` in messages and the README: it stays a name here)
from litmus_rules.domain.nfkc_growth import _MAX_GROWTH, NFKC_MAX_ADDED, check_growth
from litmus_rules.domain.paths import canonical_path
from litmus_rules.domain.textmemo import memo_large, re2_compiled, re2_found, utf8

# The engines (re2, regex) and the confusables table are loaded on first use, not when the package
# is imported (cold start: `import litmus_rules` reads no Unicode database of theirs).

# --- format characters and unicode tags --------------------------------------------------------

# What strip_format_chars removes, and the RE2 classes that find it: formatchars.py.
_RE = Patterns(
    TAG=("[\U000e0000-\U000e007f]+", 0),
    NON_ASCII_RUNS=("([^\x00-\x7f]+)", 0),
)


def __getattr__(name: str) -> Any:
    # the compiled patterns under their former names, built on first use
    lazy = {"_FORMAT_RE": _format_re, "_MAYBE_FORMAT": _maybe_format}.get(name)
    if lazy is not None:
        return lazy()
    former = {"_TAG_RE": "TAG", "_NON_ASCII_RUNS": "NON_ASCII_RUNS"}
    if name in former:
        return getattr(_RE, former[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@memo_large
def strip_format_chars(text: str) -> str:
    """Remove invisible format characters (category Cf, default-ignorables, variation selectors),
    except Unicode tag characters. Idempotent."""
    if text.isascii():
        return text
    if len(text) >= STRIP_EACH_MIN:
        try:
            data = utf8(text)
        except UnicodeEncodeError:  # lone surrogates: no UTF-8 to scan
            return _format_re().sub("", text)  # type: ignore[no-any-return]
        stripped = strip_found(text, data)
        if stripped is None:
            stripped = strip_each(text, data)
        return _format_re().sub("", text) if stripped is None else stripped
    if not re2_found(_maybe_format(), text):
        return text
    return _format_re().sub("", text)  # type: ignore[no-any-return]


def _decode_tag_run(m: re.Match[str]) -> str:
    # U+E0020..U+E007E mirror printable ASCII; the language tag (E0001), cancel tag (E007F) and
    # unassigned tag code points carry no text and are dropped.
    return m.group().translate(_TAG_TABLE)


_TAG_TABLE = {cp: (chr(cp - 0xE0000) if 0xE0020 <= cp <= 0xE007E else None) for cp in range(0xE0000, 0xE0080)}


_MAYBE_TAGS_PATTERN = r"[\x{E0000}-\x{E007F}]"


@memo_large
def decode_tag_chars(text: str) -> str:
    """Map Unicode tag characters (U+E0000-U+E007F) to the ASCII they mirror. Idempotent."""
    # (RE2's scan of the UTF-8: 10x less than the scan of `re`, which finds none in most texts)
    if text.isascii() or not re2_found(re2_compiled(_MAYBE_TAGS_PATTERN), text):
        return text
    return _RE.TAG.sub(_decode_tag_run, text)


@memo_large
def nfkc(text: str) -> str:
    """Unicode NFKC (fullwidth, ligatures, mathematical alphanumerics -> plain). Idempotent.
    Raises LimitUnknown for a text that it would make too long (`NFKC_MAX_ADDED`)."""
    if text.isascii():
        return text
    if len(text) * (_MAX_GROWTH - 1) > NFKC_MAX_ADDED:  # (a shorter text cannot pass the limit)
        check_growth(text)
    return normalize("NFKC", text)  # (linear, whatever the runs of combining marks: canonical_order.py)


@memo_large
def casefold(text: str) -> str:
    """Unicode full case folding (str.casefold). Idempotent."""
    return text.casefold()


@memo_large
def clean(text: str) -> str:
    """The case-preserving part of the full chain: format characters removed > tags decoded > NFKC.

    Derived from the NFKC form of `text` (which its forms need anyway): one NFKC pass over a large
    text instead of two, by `_nfkc_of_stripped`. No format character is left to remove after NFKC
    (it makes none from text without them: test_transforms_nonascii14, over every code point)."""
    if text.isascii():
        return text
    if decode_tag_chars(text) is not text:  # (rare) tags decode to ASCII between the two steps
        return nfkc(decode_tag_chars(strip_format_chars(text)))
    return _nfkc_of_stripped(nfkc(text))


def _nfkc_of_stripped(normal: str) -> str:
    """nfkc(strip_format_chars(t)) from normal = nfkc(t), for a text t without tag characters.

    1. nfkc(strip(t)) == nfkc(strip(nfkc(t))): both have the same NFKD. Format characters are
       starters (canonical combining class 0), the compatibility decomposition of a format
       character holds only format characters and that of any other character none (checked over
       every code point by test_transforms_nonascii14), so removing them commutes with the
       decomposition; and removing starters from two canonically equivalent decomposed strings
       leaves two canonically equivalent strings (it only joins runs of combining marks).
    2. strip(normal) is NFKC already unless a format character of `normal` is followed by a
       combining mark or a Hangul jamo (`_FORMAT_THEN_JOINER`): otherwise each format character
       of `normal` is a segment of its own (a character of NFKC text that is not a combining
       mark nor composes with the one before starts a segment, and NFKC works segment by segment),
       and removing whole segments of NFKC text leaves NFKC text. The pattern admits every
       character of non-zero combining class and every character that composes with the one
       before it (test_transforms_nonascii14, over every code point): a superset is safe.
    """
    stripped = strip_format_chars(normal)
    if stripped is normal or not re2_found(re2_compiled(_FORMAT_THEN_JOINER_PATTERN), normal):
        return stripped
    return nfkc(stripped)


# A format character (a superset: _MAYBE_FORMAT_PATTERN's) followed by a character that may join
# the segment before it under NFKC: a combining mark (any non-zero combining class is one) or a
# Hangul vowel / final jamo (composed algorithmically), or one of the composed second characters.
_FORMAT_THEN_JOINER_PATTERN = _MAYBE_FORMAT_PATTERN + r"[\p{M}\x{1160}-\x{11FF}]"


@memo_large
def _full_from_clean(cleaned: str) -> str:
    if cleaned.isascii():
        return cleaned.lower()  # casefold == lower on ASCII, and lower is faster
    # no format character to remove: `cleaned` has none, and neither casefold nor NFKC makes one
    # from text without them (test_transforms_nonascii14, over every code point)
    return nfkc(cleaned.casefold())


def full_normalise(text: str) -> str:
    """format characters removed > unicode tags decoded > NFKC > casefold (> NFKC). Idempotent."""
    return _full_from_clean(clean(text))


# --- confusable skeleton ------------------------------------------------------------------------


_SKELETON_FORMAT = 4  # bump when how the table is built changes


@functools.cache
def _skeleton_table() -> dict[int, str]:
    """char -> prototype (`_build_skeleton_table`), read back from the user's cache when the same
    data and Unicode version built it before: building it is a quarter of a cold `check`."""
    key, path = _skeleton_cache()
    if path is not None:
        raw = usercache.read_bytes(path)
        if raw is not None:
            try:
                doc = json.loads(raw)
                if isinstance(doc, dict) and doc.get("key") == key and isinstance(doc.get("table"), dict):
                    table = {int(cp): rep for cp, rep in doc["table"].items()}
                    if all(isinstance(rep, str) for rep in table.values()):
                        return table
            except (ValueError, TypeError):  # a damaged or foreign file: build the table again
                pass
    table = _build_skeleton_table()
    if path is not None:
        usercache.write_text(path, json.dumps({"key": key, "table": {str(cp): rep for cp, rep in table.items()}},
                                              ensure_ascii=False, separators=(",", ":")))
    return table


def _skeleton_cache() -> tuple[str, Path | None]:
    """The cache key of the skeleton table (what it is built from: the confusables data, the
    Unicode database, the regex module that strips format characters) and its file, None: off."""
    from litmus_rules._resources import installed_version  # importlib.metadata's answer, without its import

    versions = [installed_version(dist) for dist in ("confusable-homoglyphs", "regex")]
    key = hashlib.sha256(json.dumps([_SKELETON_FORMAT, unicodedata.unidata_version, sys.version_info[:2], versions,
                                     _FORMAT_PATTERN]).encode()).hexdigest()
    folder = usercache.cache_dir()
    return key, (folder / f"skeleton-{key[:40]}.json" if folder is not None else None)


def _build_skeleton_table() -> dict[int, str]:
    """char -> prototype, built from confusable_homoglyphs' data (UTS #39 confusables).

    The library stores each prototype with all its look-alikes and each look-alike with its
    prototype. We join them into classes and pick one representative per class: a single
    printable ASCII character when the class has one (so "а" -> "a", "Ι" -> "l"), else the
    best-connected member. Multi-character prototypes (m ~ "rn") are not used as targets: a
    per-character map cannot fold "rn" into "m" anyway, and keeping "m" avoids surprises.
    """
    from confusable_homoglyphs.confusables import confusables_data  # 90 ms to load: do it lazily

    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    # Some entries are wrapped in LRM marks: strip them, in one pass over all the entries (NUL
    # separated: stripping works character by character and keeps NUL).
    pairs = [(key, entry.get("c", "")) for key, entries in confusables_data.items() for entry in entries]
    flat = _format_re().sub("", "\0".join(x for pair in pairs for x in pair)).split("\0")
    assert len(flat) == 2 * len(pairs)
    degree: dict[str, int] = {}
    for k, c in zip(flat[::2], flat[1::2]):
        if not k or not c:
            continue
        degree[k] = degree.get(k, 0) + 1
        degree[c] = degree.get(c, 0) + 1
        a, b = find(k), find(c)
        if a != b:
            parent[a] = b

    classes: dict[str, list[str]] = {}
    for member in list(parent):
        classes.setdefault(find(member), []).append(member)

    table: dict[int, str] = {}
    for members in classes.values():
        singles = [m for m in members if len(m) == 1]
        if len(singles) < 2:
            continue
        rep = min(singles, key=lambda m: (not (m.isascii() and m.isprintable()), -degree.get(m, 0), m))
        for m in singles:
            if m != rep:
                table[ord(m)] = rep
    # Letter look-alikes that neither the confusables data nor NFKC fold (small capitals, regional
    # indicators, negative squared and circled letters): the letter their name gives. Where the
    # data puts one in a class without an ASCII member ("ᴋ" with "ĸ" and "κ"), the class gets it.
    for cp, letter in _named_letters():
        rep = table.get(cp)
        if rep is None:
            table[cp] = letter
        elif not rep.isascii():
            for other, other_rep in list(table.items()):
                if other_rep == rep:
                    table[other] = letter
            if len(rep) == 1:
                table[ord(rep)] = letter
    # Nonspacing and enclosing marks are dropped: "l\u0307c\u0307" (a dot above each letter) reads
    # as "lc", and NFKC keeps the marks (it composes "c\u0307" into "ċ", which NFD splits again).
    for mark in _combining_marks():
        table[ord(mark)] = ""
    # The representative's own NFD may contain mapped characters; close the table so that
    # skeleton(skeleton(x)) == skeleton(x).
    for _ in range(4):
        changed = False
        for cp, rep in table.items():
            closed = unicodedata.normalize("NFD", unicodedata.normalize("NFD", rep).translate(table))
            if closed != rep:
                table[cp] = closed
                changed = True
        if not changed:
            break
    return table


# blocks holding letter look-alikes that `_named_letters` reads the names of (IPA, phonetic
# extensions, Latin Extended-D, enclosed alphanumerics and their supplement, Latin Extended-G)
_LOOKALIKE_BLOCKS = ((0x0250, 0x02B0), (0x1D00, 0x1DC0), (0x2460, 0x2500), (0xA730, 0xA800),
                     (0x1DF00, 0x1E000), (0x1F100, 0x1F200))
_LOOKALIKE_NAME = re.compile(
    r"(LATIN LETTER SMALL CAPITAL|REGIONAL INDICATOR SYMBOL LETTER|NEGATIVE (?:SQUARED|CIRCLED) LATIN CAPITAL"
    r" LETTER|SQUARED LATIN CAPITAL LETTER|CIRCLED LATIN (?:CAPITAL|SMALL) LETTER) ([A-Z])")


def _named_letters() -> list[tuple[int, str]]:
    """(code point, ASCII letter) for each letter look-alike whose name is a letter's: small
    capitals map to the small letter, the others to the letter their name says."""
    out = []
    for start, end in _LOOKALIKE_BLOCKS:
        for cp in range(start, end):
            m = _LOOKALIKE_NAME.fullmatch(unicodedata.name(chr(cp), ""))
            if m is not None:
                small = "SMALL" in m.group(1)
                out.append((cp, m.group(2).lower() if small else m.group(2)))
    return out


def _combining_marks() -> list[str]:
    """Every nonspacing (Mn) and enclosing (Me) mark of this Python's Unicode database (the one
    NFD uses); ~0.1 s, once per table build."""
    category = unicodedata.category
    return [c for c in map(chr, range(0x110000)) if category(c) in ("Mn", "Me")]


@functools.cache
def _skeleton_parts() -> tuple[bytes, dict[int, str]]:
    """The table split for speed: a 256-byte map for ASCII (applied to UTF-8 bytes, where ASCII
    bytes never occur inside multi-byte sequences) and the str.translate table of the others."""
    table = _skeleton_table()
    ascii_map = bytearray(range(256))
    for cp, rep in table.items():
        if cp < 128:
            assert len(rep) == 1 and rep.isascii(), (cp, rep)
            ascii_map[cp] = ord(rep)
    wide = {cp: rep for cp, rep in table.items() if cp >= 128}
    return bytes(ascii_map), wide


@functools.cache
def _skeleton_list() -> list[Any]:
    """The skeleton table as a list indexed by code point, for str.translate on NFD text: a dict
    table costs a KeyError for every character it does not map (most of a text), a list an
    index (3x less CPU on large non-ASCII texts). Its length: past the last character that NFD
    text can hold and the table maps (a longer index is an IndexError: left as it is). ~5 MB."""
    table = _skeleton_table()
    last = max((cp for cp in table if unicodedata.normalize("NFD", chr(cp)) == chr(cp)), default=0)
    out: list[Any] = list(range(last + 1))
    for cp, rep in table.items():
        if cp <= last:
            out[cp] = rep
    return out


def skeleton_ascii_map() -> bytes:
    """The skeleton of ASCII text as a bytes.translate table: skeleton(t) for ASCII t is
    t.encode().translate(skeleton_ascii_map()).decode() (one character for one)."""
    return _skeleton_parts()[0]


# Maximal runs of non-ASCII characters (the split keeps them, at odd indices).
# str.translate looks every character up in its table (~0.1 us each, a miss dearer than a hit):
# a text whose UTF-8 is mostly ASCII is mapped with bytes.translate, and only its non-ASCII runs
# with str.translate, when they take at most 1/DENSE_NON_ASCII of its UTF-8 bytes, and (a text
# from LIST_MIN long) there is at most one run in RUN_CHARS characters: the split costs ~0.25 us a
# run, the list form of the table ~0.03 us a character (a MB of ASCII text with a combining mark
# every 4 characters: 150 ms split, 27 ms with the list).
DENSE_NON_ASCII = 4
RUN_CHARS = 40
# Texts from this long are mapped with the list form of the table (`_skeleton_list`), which is
# built once (~10 ms, ~5 MB) on the first such text; shorter ones with the dict.
LIST_MIN = 1 << 12


# A text longer than this is judged dense or not by this many characters at its start.
DENSITY_SAMPLE = 1 << 16


def _dense(text: str, data: bytes | None = None) -> bool:
    """Whether non-ASCII takes more than 1/DENSE_NON_ASCII of the UTF-8 bytes of `text` (`data`),
    or a text from LIST_MIN long holds more than one run of it in RUN_CHARS characters."""
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    extra = len(data) - len(text)
    if extra * DENSE_NON_ASCII > len(data):
        return True
    return extra > 0 and len(text) >= LIST_MIN and _non_ascii_runs(data) * RUN_CHARS > len(text)


# UTF-8 bytes as 0 (ASCII) or 1 (part of a non-ASCII character): a run starts at each "\0\1"
_HIGH_BYTES = bytes.maketrans(bytes(range(256)), bytes(128) + b"\1" * 128)


def _non_ascii_runs(data: bytes) -> int:
    """The maximal runs of non-ASCII characters in UTF-8 `data` (two calls into C)."""
    high = data.translate(_HIGH_BYTES)
    return high.count(b"\0\1") + (high[:1] == b"\1")


@memo_large
def skeleton(text: str) -> str:
    """Confusable skeleton (UTS #39 idea): NFD, map each character to its class prototype and drop
    nonspacing and enclosing marks (one table), NFD.

    Case-preserving: "І" (Cyrillic) and "I" both become "l", "а" becomes "a". Idempotent.
    """
    ascii_map, wide = _skeleton_parts()
    text = normalize("NFD", text)  # (linear, whatever the runs of combining marks: canonical_order.py)
    if text.isascii():
        return text.encode("ascii").translate(ascii_map).decode("ascii")
    if len(text) > DENSITY_SAMPLE and _dense(text[:DENSITY_SAMPLE]):
        # a large text dense in non-ASCII (judged by its start: either way maps alike), without
        # encoding all of it first
        return normalize("NFD", text.translate(_skeleton_list()))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return normalize("NFD", text.translate(_skeleton_table()))
    if _dense(text, data):
        # (after NFD: a character the list leaves out has no mapping, or is not in NFD text)
        mapped = text.translate(_skeleton_list() if len(text) >= LIST_MIN else _skeleton_table())
    else:
        # the same map, in two parts: every ASCII byte at once, then the non-ASCII runs, joined by
        # newlines (which `wide` leaves as they are) in one call: "e\u0301:/" a million times
        # over is 250,000 runs
        pieces = _RE.NON_ASCII_RUNS.split(data.translate(ascii_map).decode("utf-8"))
        runs = pieces[1::2]
        mapped_runs = "\n".join(runs).translate(wide).split("\n")
        if len(mapped_runs) != len(runs):  # a mapping that holds a newline (none does today)
            mapped_runs = [run.translate(wide) for run in runs]
        pieces[1::2] = mapped_runs
        mapped = "".join(pieces)
    return normalize("NFD", mapped)


@memo_large
def unmasked(text: str) -> str:
    """format characters removed > unicode tags decoded: the input of the skeleton keys.

    Not NFKC: it folds some look-alikes to a different letter first (Greek lunate sigma "Ϲ"
    would become "Σ" instead of "C"); the confusables data covers fullwidth and mathematical
    letters itself.
    """
    if text.isascii():
        return text
    return decode_tag_chars(strip_format_chars(text))


def skeleton_key(text: str) -> str:
    """format characters removed > unicode tags decoded > confusable skeleton (case-preserving)."""
    return skeleton(unmasked(text))


def skeleton_casefold(text: str) -> str:
    """skeleton_key > casefold: the case-insensitive skeleton key."""
    return skeleton(unmasked(text)).casefold()


def path_key(text: str) -> str:
    """Case-preserving path key: format characters removed > tags > NFKC > path canonicalised."""
    return canonical_path(clean(text))


def path_casefold_key(text: str) -> str:
    """normalised > path canonicalised."""
    return canonical_path(full_normalise(text))
